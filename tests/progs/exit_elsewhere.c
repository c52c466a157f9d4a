/*
 * exit_elsewhere.c - e2e target: the process ends in one thread while the
 * others are inside calls (test e2e.exit_from_another_thread).
 * Usage: e2e_exit_elsewhere exit|term
 *
 * main starts three threads and waits for the last in pthread_join: one
 * waits in pause() for good (wait_forever), one computes without calls
 * (keep_busy), and one (finish) sleeps 300 ms, then ends the process with
 * exit(3), or with SIGTERM sent to the process ("term"), which any thread
 * may take.  main's
 * pthread_join and wait_forever's pause never return.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_prog.h"

static int by_signal;

E2E_FN void wait_forever(void)
{
	for (;;)
		pause();
}

E2E_FN void keep_busy(void)
{
	for (;;)
		e2e_burn(1u << 20, 7);
}

E2E_FN void finish(void)
{
	usleep(300000);
	if (by_signal) {
		/* another thread may take it: wait for the end here */
		kill(getpid(), SIGTERM);
		for (;;)
			sleep(60);
	}
	exit(3);
}

static void *sleeper(void *arg)
{
	(void)arg;
	wait_forever();
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	keep_busy();
	return NULL;
}

static void *ender(void *arg)
{
	(void)arg;
	finish();
	return NULL;
}

int main(int argc, char **argv)
{
	by_signal = argc > 1 && strcmp(argv[1], "term") == 0;
	pthread_t a, b, c;
	pthread_create(&a, NULL, sleeper, NULL);
	pthread_create(&b, NULL, busy, NULL);
	pthread_create(&c, NULL, ender, NULL);
	pthread_join(c, NULL);
	return 0;
}
