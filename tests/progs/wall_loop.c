/*
 * wall_loop.c - e2e target for "raw time is raw" (test e2e.raw_time_is_wall_time):
 * main() calls a tiny function in a loop until argv[1] milliseconds have
 * passed by CLOCK_MONOTONIC, enough events to fill several spool chunks,
 * and prints the time it measured from its first instruction to its last
 * clock read.  Without compensation, Elapsed Inclusive of main must be that
 * time: chunk switches and the like are the profiler's time, reported
 * where they happened, never dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "e2e_prog.h"

E2E_FN uint64_t step(uint64_t x)
{
	return e2e_burn(50, x); /* some work: millions of events, not tens */
}

static E2E_NOINSTR double ns_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e9 + (double)(b.tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	struct timespec a;
	clock_gettime(CLOCK_MONOTONIC, &a);
	double want = (argc > 1 ? atof(argv[1]) : 1000.0) * 1e6, took;
	uint64_t s = 0;
	long iters = 0;
	do {
		for (int i = 0; i < 1000; i++)
			s += step(s);
		iters++;
	} while ((took = ns_since(&a)) < want);
	printf("main_ns=%.0f calls=%ld sum=%llu\n", took, iters * 1000, (unsigned long long)s);
	return 0;
}
