/*
 * tiny_calls.c - e2e target with many events in little time (test
 * e2e.disk_full_then_recover): parent() calls a small function 3 million
 * times and prints how long the loop took by the program's own clock.
 * (How close compensation comes to an uninstrumented run is measured by
 * bench/bench-compensation.sh, on bench/tiny_calls.c.)
 */
#include <stdio.h>
#include <time.h>

#include "e2e_prog.h"

E2E_FN uint64_t small_work(uint64_t x)
{
	return e2e_burn(8, x); /* a few tens of nanoseconds */
}

E2E_FN uint64_t parent(long n)
{
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s += small_work((uint64_t)i);
	return s;
}

int main(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t s = parent(3000000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("parent_ns=%.0f sum=%llu\n",
	       (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec), (unsigned long long)s);
	return 0;
}
