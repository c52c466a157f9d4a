/*
 * comp_exact.c - e2e target for the probe-cost compensation's arithmetic
 * (test e2e.compensation_exact): parent() calls leaf() and memset() N
 * times (argv[1]).  Each call of leaf() is one interval between two probes
 * of instrumented functions, each memset() one interval between the two
 * probes of a library call, and both take far longer than any probe cost,
 * so compensation subtracts exactly one probe cost from each: the test
 * checks the difference of the raw and compensated reports to the
 * nanosecond, no timing involved.
 */
#include <stdlib.h>
#include <string.h>

#include "e2e_prog.h"

static char buf[16384];
static volatile size_t buf_len = sizeof(buf); /* so gcc cannot inline memset */

E2E_FN uint64_t leaf(uint64_t x)
{
	return e2e_burn(200, x);
}

E2E_FN uint64_t parent(long n)
{
	uint64_t s = 0;
	for (long i = 0; i < n; i++) {
		s += leaf((uint64_t)i);
		memset(buf, (int)i, buf_len);
	}
	return s + (uint64_t)buf[5];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	return parent(n) == 42 ? 1 : 0; /* (never 42: keeps the work alive) */
}
