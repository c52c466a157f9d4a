/*
 * killed_waiting.c - e2e target: blocks in a library call until a signal
 * whose default action ends it arrives from outside (test
 * e2e.killed_while_waiting).  Usage: e2e_killed_waiting READY-FILE
 *
 * A second thread calls quiet_call once and waits for good.
 *
 * It first prints what it is told of the actions of SIGTERM, SIGINT and
 * SIGHUP ("dfl" or "ign", by sigaction) and of SIGUSR1 (by signal, which
 * sets it), as without stint.  Then main calls wait_here, which writes its pid into READY-FILE
 * (the test signals it from then on) and sleeps in nanosleep for up to
 * 60 s.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "e2e_prog.h"

static const char *told(int sig)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) < 0)
		return "err";
	return old.sa_handler == SIG_DFL ? "dfl" : old.sa_handler == SIG_IGN ? "ign" : "other";
}

/* what signal() says (it sets the action: of SIGUSR1, which nothing sends) */
static const char *told_by_signal(void)
{
	void (*h)(int) = signal(SIGUSR1, SIG_DFL);
	return h == SIG_DFL ? "dfl" : h == SIG_IGN ? "ign" : "other";
}

E2E_FN void wait_here(const char *ready)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		rename(tmp, ready);
	}
	struct timespec ts = {60, 0};
	nanosleep(&ts, NULL);
}

/* A second thread that makes one call and waits for good: a thread that
 * writes a few records (e2e.quiet_thread_buffer_small looks at its buffer). */
E2E_FN void quiet_call(void)
{
}

static void *quiet_thread(void *arg)
{
	quiet_call();
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	printf("TERM %s INT %s HUP %s USR1 %s\n", told(SIGTERM), told(SIGINT), told(SIGHUP), told_by_signal());
	fflush(stdout);
	pthread_t q;
	pthread_create(&q, NULL, quiet_thread, NULL);
	wait_here(argv[1]);
	return 3;
}
