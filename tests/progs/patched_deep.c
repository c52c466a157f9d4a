/*
 * patched_deep.c - e2e target for recursion deeper than the profiler's
 * first shadow stack (test e2e.patched_deep_recursion): descend(N) calls itself N
 * times, five times over (argv[1], default 100000).  Patched at load, the
 * calls past 1024 frames went unrecorded: 5115 calls counted of 500005.
 * Prints the sum, which must not change.
 */
#include <stdio.h>
#include <stdlib.h>

#include "e2e_prog.h"

E2E_FN long descend(long n)
{
	if (n == 0)
		return 0;
	long r = descend(n - 1) + 1;
	__asm__ volatile("" : "+r"(r)); /* (no tail call) */
	return r;
}

int main(int argc, char **argv)
{
	long depth = argc > 1 ? atol(argv[1]) : 100000, sum = 0;
	for (int i = 0; i < 5; i++)
		sum += descend(depth);
	printf("sum %ld\n", sum);
	return 0;
}
