/*
 * tiny_calls.c - the workload of bench/bench-compensation.sh: parent()
 * calls a small function (a few tens of ns of arithmetic) N times
 * (argv[1], default 3 million) and prints the CPU time the loop took by
 * the thread's own clock (CLOCK_THREAD_CPUTIME_ID: on a shared machine,
 * wall time would also count the time other programs ran).  Built with
 * and without -finstrument-functions: stint's compensated Application
 * Inclusive time of parent() should match what the plain build measures.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noipa)) uint64_t small_work(uint64_t x)
{
	volatile uint64_t v = x | 1;
	for (int i = 0; i < 8; i++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	return v;
}

__attribute__((noipa)) uint64_t parent(long n)
{
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s += small_work((uint64_t)i);
	return s;
}

/* The same calls, each taking the previous result: none can start before
 * the one before it is done (argv[2] "dependent"), where in parent() the
 * processor overlaps consecutive calls (about 5 ns a call against 12). */
__attribute__((noipa)) uint64_t parent_dependent(long n)
{
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s = small_work(s);
	return s;
}

__attribute__((no_instrument_function)) static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000;
	int dependent = argc > 2 && argv[2][0] == 'd';
	double a = cpu_ns();
	uint64_t s = dependent ? parent_dependent(n) : parent(n);
	double b = cpu_ns();
	printf("parent_cpu_ns=%.0f sum=%llu\n", b - a, (unsigned long long)s);
	return 0;
}
