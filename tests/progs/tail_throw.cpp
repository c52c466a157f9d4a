/*
 * tail_throw.cpp - e2e target (test e2e.patched_tail_jumps): a C++
 * exception thrown out of a chain of tail jumps.  At -O2 ping's call of
 * pong and pong's of ping are "jmp"s; ping(0) calls thrower, which throws
 * 10 times in 20: the unwinder must find the real return address behind the
 * chain's one slot, and the chain is closed where main catches it.  main
 * calls after_catch after each round: its caller is main.
 */
#include <cstdio>

#include "e2e_prog.h"

static volatile int sink;

extern "C" { /* (plain names in the report) */

E2E_FN void thrower(int i)
{
	if (i & 1)
		throw i;
	sink = sink + 1;
}

E2E_FN int pong(int n, int i);

E2E_FN int ping(int n, int i)
{
	if (n == 0) {
		thrower(i);
		return 1;
	}
	return pong(n - 1, i); /* a tail jump at -O2 */
}

E2E_FN int pong(int n, int i)
{
	if (n == 0)
		return 0;
	return ping(n - 1, i); /* a tail jump at -O2 */
}

E2E_FN void after_catch(void) { sink = sink + 1; }
}

int main()
{
	int caught = 0;
	for (int i = 0; i < 20; i++) {
		try {
			sink = sink + ping(8, i);
		} catch (int) {
			caught++;
		}
		after_catch();
	}
	std::printf("caught %d\n", caught);
	return 0;
}
