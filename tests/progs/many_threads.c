/*
 * many_threads.c - e2e target: 40 short-lived threads, 10 alive at a time
 * (test e2e.many_threads).  Each thread runs worker_body once, which calls
 * worker_step 25 times: 40 thread bodies, 1000 steps, 41 thread rows.
 */
#include <pthread.h>
#include <stdio.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void worker_step(void) { sink += e2e_burn(3000, 1); }

E2E_FN void *worker_body(void *arg)
{
	(void)arg;
	for (int i = 0; i < 25; i++)
		worker_step();
	return NULL;
}

int main(void)
{
	for (int round = 0; round < 4; round++) {
		pthread_t t[10];
		for (int i = 0; i < 10; i++)
			if (pthread_create(&t[i], NULL, worker_body, NULL)) {
				fprintf(stderr, "pthread_create failed\n");
				return 1;
			}
		for (int i = 0; i < 10; i++)
			pthread_join(t[i], NULL);
	}
	return 0;
}
