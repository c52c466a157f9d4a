/*
 * handler_tail.c - e2e target (test e2e.patched_handler_tail_call): a
 * SIGALRM handler every 2 ms calls in_handler twice, the second time by a
 * tail call at -O2, while main spends 0.5 s calling spin_step.  A handler
 * that lands in a probe's shadow-stack code must still count its tail
 * call.  It prints its own counts: "handler N in_handler M spin_step K".
 */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "e2e_prog.h"

static volatile long c_handler, c_in, c_spin;

E2E_FN void in_handler(void)
{
	c_in++;
	__asm__ volatile("" ::: "memory");
}

E2E_FN void handler(int sig)
{
	(void)sig;
	c_handler++;
	in_handler();
	in_handler(); /* a tail call at -O2 */
}

E2E_FN long spin_step(long x)
{
	c_spin++;
	__asm__ volatile("" ::: "memory");
	return x * 1103515245 + 12345;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	struct sigaction sa = {0};
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &it, NULL);
	double t0 = now();
	long x = 1;
	while (now() - t0 < 0.5)
		for (int i = 0; i < 1000; i++)
			x = spin_step(x);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("handler %ld in_handler %ld spin_step %ld\n", c_handler, c_in, c_spin);
	return x == 42;
}
