/*
 * sleep_compute.c - e2e target: sleeping versus computing
 * (test e2e.sleep_vs_compute).
 *
 * sleepy() calls nap_10ms() 5 times (about 50 ms asleep: its Application
 * Inclusive time must be about 0 while its Elapsed Inclusive is ~50 ms).
 * crunch() calls crunch_block() 2000 times, pure arithmetic (its
 * Application Inclusive time must be close to its Elapsed Inclusive; the
 * work is cut in small blocks so that a preemption spoils one short
 * interval, not the whole function).
 *
 * main prints "crunch cpu_ns=N wall_ns=M": the thread's CPU time and the
 * wall time spent in crunch(), so the test can tell a busy machine (crunch
 * waiting for a CPU, which rightly is not application time) from a bug.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void nap_10ms(void) { usleep(10000); }

E2E_FN void sleepy(void)
{
	for (int i = 0; i < 5; i++)
		nap_10ms();
}

E2E_FN void crunch_block(void) { sink += e2e_burn(20000, 9); }

E2E_FN void crunch(void)
{
	for (int i = 0; i < 2000; i++)
		crunch_block();
}

static E2E_NOINSTR uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	sleepy();
	uint64_t c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
	crunch();
	uint64_t c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), w1 = now_ns(CLOCK_MONOTONIC);
	printf("crunch cpu_ns=%llu wall_ns=%llu\n", (unsigned long long)(c1 - c0),
	       (unsigned long long)(w1 - w0));
	return 0;
}
