/*
 * signal_handler.c - e2e target: an instrumented signal handler that
 * interrupts the program at random points, probes included
 * (test e2e.signal_handler_calls).
 *
 * A 100 us interval timer sends SIGALRM; on_alarm (instrumented) counts
 * itself.  main calls busy_step in a loop (mostly probe work) until
 * on_alarm has run 2000 times, then prints "alarms=N steps=M": the report
 * must show exactly N calls of on_alarm and M of busy_step.  2000 handlers
 * landing at random points of the probes find a window of a few
 * instructions in which the probe's state is unguarded, if there is one
 * (with 300, a lost handler call showed in 1 run of 13).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "e2e_prog.h"

static volatile sig_atomic_t alarms;
static volatile uint64_t sink;

E2E_FN void on_alarm(int sig)
{
	(void)sig;
	alarms = alarms + 1;
}

E2E_FN void busy_step(void) { sink++; }

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_REAL, &it, NULL);
	unsigned long steps = 0;
	while (alarms < 2000) {
		busy_step();
		steps++;
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("alarms=%d steps=%lu\n", (int)alarms, steps);
	return 0;
}
