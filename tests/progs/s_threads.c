/*
 * s_threads.c - sampling e2e target (test sample.threads_named).
 *
 * Three worker threads named s_w1, s_w2 and s_w3 (pthread_setname_np)
 * burn 1, 2 and 3 parts of about 0.7 s of CPU in thread_burn; the main
 * thread only starts and joins them.  Each worker names itself before it
 * burns, so all its samples are taken under its name.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "s_sample.h"

static volatile uint64_t sink;
static pthread_barrier_t named;

S_FN uint64_t thread_burn(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

static void *worker(void *arg)
{
	long k = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "s_w%ld", k);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&named);
	sink = thread_burn(s_iters(2.0 * (double)k));
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	pthread_barrier_init(&named, NULL, 3);
	for (long k = 1; k <= 3; k++)
		if (pthread_create(&t[k - 1], NULL, worker, (void *)k) != 0)
			return 1;
	for (int k = 0; k < 3; k++)
		pthread_join(t[k], NULL);
	return 0;
}
