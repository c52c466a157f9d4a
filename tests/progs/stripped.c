/*
 * stripped.c - e2e target for programs without a symbol table (test
 * e2e.patched_stripped): built plain at -O2 and stripped with `strip`, its
 * functions are found from .eh_frame and must be counted as in the
 * unstripped build.  Functions reached in each way a stripped program's
 * are found: direct calls (step, fib), a pointer in initialised data
 * (ops[], an R_X86_64_RELATIVE relocation), a pointer taken in the code
 * (by_cmp, passed to qsort), main (whose address _start takes).
 * checked() has a cold path (a call of the cold function complain()),
 * which GCC splits off as checked.cold, jumped to, never called: it runs
 * 3 times, and patching it as a function would corrupt the stack.
 */
#include <stdio.h>
#include <stdlib.h>

#include "e2e_prog.h"

__attribute__((noipa, cold)) void complain(long v)
{
	fprintf(stderr, "odd value %ld\n", v);
}

E2E_FN long checked(long v)
{
	if (__builtin_expect(v % 7 == 3, 0)) { /* cold: checked.cold */
		complain(v);
		v = -v;
	}
	return v * 3 + 1;
}

E2E_FN long fib(long n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

E2E_FN long op_add(long a, long b)
{
	return a + b;
}

E2E_FN long op_mul(long a, long b)
{
	return a * b;
}

static long (*const ops[])(long, long) = {op_add, op_mul};

E2E_FN int by_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

E2E_FN long step(long i)
{
	return ops[i & 1](checked(i), i + 1);
}

int main(int argc, char **argv)
{
	long v[20], s = 0;
	int (*volatile cmp)(const void *, const void *) = by_cmp; /* lea by_cmp(%rip) */
	(void)argv;
	for (long i = 0; i < 20; i++)
		v[i] = step(i + argc);
	qsort(v, 20, sizeof(v[0]), cmp);
	for (long i = 0; i < 20; i++)
		s += v[i] * (i + 1);
	printf("sum=%ld fib=%ld\n", s, fib(12 + argc));
	return 0;
}
