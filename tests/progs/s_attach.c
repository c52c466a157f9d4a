/*
 * s_attach.c - sampling e2e target (test sample.attach_pid).
 *
 * Prints "ready PID" on stdout, then burns CPU in attach_hot for
 * argv[1] seconds of wall time (default 2), so that the test can attach
 * to it with `stint record -m sample -p PID --duration 0.5`.  With a
 * second argument "threads" (test sample.attach_target_exits), a thread
 * named att_worker burns in attach_worker alongside, and the program
 * exits while stint is still attached.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

S_FN uint64_t attach_hot(double seconds)
{
	volatile uint64_t x = 1;
	double end = now() + seconds;
	do {
		for (uint64_t i = 0; i < 2000000; i++)
			x = x * S_MUL + S_ADD;
	} while (now() < end);
	return x;
}

S_FN uint64_t attach_worker(double seconds)
{
	return attach_hot(seconds) + 1;
}

static void *worker(void *arg)
{
	sink = attach_worker(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	pthread_t t;
	int threads = argc > 2 && strcmp(argv[2], "threads") == 0;
	if (threads) {
		pthread_create(&t, NULL, worker, &secs);
		pthread_setname_np(t, "att_worker");
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	sink = attach_hot(secs);
	if (threads)
		pthread_join(t, NULL);
	return 0;
}
