/*
 * preempt_tiny.c - e2e target for OS-event detection under preemption
 * (test e2e.preempted_tiny_calls): driver() calls a one-line function N
 * times (argv[1]) while the test keeps a CPU hog on the same CPU, so the
 * thread is preempted hundreds of times, at random instructions, many of
 * them inside a probe.  At the end the program prints its own CPU time
 * (getrusage of the thread): Application Inclusive of the session, which
 * leaves out every interval in which the thread left the CPU, must not be
 * larger than that.  `preempt_tiny hog` is the hog: it spins until killed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "e2e_prog.h"

E2E_FN uint64_t one_line(uint64_t x)
{
	return x * 3 + 1;
}

E2E_FN uint64_t driver(long n)
{
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s += one_line((uint64_t)i);
	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "hog") == 0)
		for (;;)
			e2e_burn(1000000, 1);
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	uint64_t s = driver(n);
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	printf("cpu_ns=%.0f switches=%ld sum=%llu\n", cpu, ru.ru_nvcsw + ru.ru_nivcsw, (unsigned long long)s);
	return 0;
}
