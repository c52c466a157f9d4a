/*
 * line_costs.c - e2e target with known costs per source line (tests
 * e2e.lines_*, tests/e2e/run_lines.py): in run(), the line marked SPIN
 * polls the thread's CPU-time clock until 20 ms of CPU time have passed,
 * the line marked SLEEP sleeps 10 ms, the line marked CALL calls spin5()
 * (5 ms of CPU time) twice.  It prints "polls=N": the calls of cpu_ms()
 * made on the SPIN line.  CPU time, not wall time: on a loaded machine the
 * spinning lines still do their 20 and 10 ms of work.
 */
#include <stdio.h>
#include <time.h>

#include "e2e_prog.h"

E2E_FN double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

E2E_FN void spin5(void)
{
	double t0 = cpu_ms();
	while (cpu_ms() - t0 < 5.0)
		;
}

E2E_FN unsigned long run(void)
{
	unsigned long polls = 0;
	double t0 = cpu_ms();
	while (cpu_ms() - t0 < 20.0) polls++; /* SPIN */
	struct timespec ts = {0, 10 * 1000 * 1000};
	nanosleep(&ts, NULL); /* SLEEP */
	for (int i = 0; i < 2; i++) spin5(); /* CALL */
	return polls + 1;
}

int main(void)
{
	unsigned long polls = run();
	printf("polls=%lu\n", polls);
	return 0;
}
