/*
 * deep_escape.cpp - e2e target (e2e.deep_excursion_then_escape): a longjmp
 * and a C++ catch after the stack went far deeper than the runtime's slots
 * of open frames (RT_STACK) below the landing point and came back.
 *
 *   deep_escape N   main -> jump_catcher -> jump_thrower -> descend(N ...)
 *                   returns, then longjmp to jump_catcher; then
 *                   main -> throw_catcher -> throw_thrower -> descend(N ...),
 *                   returns, then throw; then main -> jump_direct -> dive(N ...),
 *                   which longjmps from the bottom, jump_direct then calling
 *                   after_landing; then main calls after_escape 10 times.
 * The excursion's frames had taken the slots of main and the catchers: the
 * escape closed them too, and every later call was a root.
 */
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include "e2e_prog.h"

static std::jmp_buf jb;
static volatile int sink;

E2E_FN int descend(int n)
{
	if (n == 0)
		return 0;
	return descend(n - 1) + 1;
}

E2E_FN void jump_thrower(int n)
{
	if (descend(n) >= 0)
		std::longjmp(jb, 1);
}

E2E_FN int jump_catcher(int n)
{
	if (setjmp(jb))
		return -1;
	jump_thrower(n);
	return 0;
}

E2E_FN int throw_thrower(int n)
{
	int r = descend(n);
	if (r >= 0)
		throw std::runtime_error("deep");
	return r;
}

E2E_FN int throw_catcher(int n)
{
	try {
		return throw_thrower(n);
	} catch (const std::exception &) {
		return -1;
	}
}

static std::jmp_buf jb_direct;

E2E_FN int dive(int n)
{
	if (n < 0)
		return 0;
	if (n == 0)
		std::longjmp(jb_direct, 1); /* (the longjmp's own frame takes a slot too) */
	return dive(n - 1) + 1;
}

E2E_FN int after_landing(void)
{
	return sink + 1;
}

E2E_FN int jump_direct(int n)
{
	if (setjmp(jb_direct))
		return after_landing();
	return dive(n);
}

E2E_FN int after_escape(int i)
{
	return i * 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	long s = jump_catcher(n);
	s += throw_catcher(n);
	s += jump_direct(n);
	for (int i = 0; i < 10; i++)
		s += after_escape(i);
	sink = (int)s;
	std::printf("%ld\n", s);
	return 0;
}
