/*
 * threads.c - e2e target: one main thread and three named threads with
 * known call counts (test e2e.threads_named).
 *
 *   thread "alpha" names itself and calls alpha_step 100 times,
 *   thread "beta"  is named by main and calls beta_step 200 times,
 *   thread "gamma" is named by main and calls gamma_step 300 times,
 *   the main thread calls main_step 7 times.
 * Each thread body (alpha_main, beta_main, gamma_main) is called once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "e2e_prog.h"

static pthread_barrier_t names_set; /* main + beta + gamma */
static volatile uint64_t sink;

E2E_FN void alpha_step(void) { sink += e2e_burn(2000, 1); }
E2E_FN void beta_step(void) { sink += e2e_burn(2000, 2); }
E2E_FN void gamma_step(void) { sink += e2e_burn(2000, 3); }
E2E_FN void main_step(void) { sink += e2e_burn(2000, 4); }

E2E_FN void *alpha_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "alpha");
	for (int i = 0; i < 100; i++)
		alpha_step();
	return NULL;
}

E2E_FN void *beta_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&names_set);
	for (int i = 0; i < 200; i++)
		beta_step();
	return NULL;
}

E2E_FN void *gamma_main(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&names_set);
	for (int i = 0; i < 300; i++)
		gamma_step();
	return NULL;
}

int main(void)
{
	pthread_t a, b, g;
	pthread_barrier_init(&names_set, NULL, 3);
	if (pthread_create(&a, NULL, alpha_main, NULL) || pthread_create(&b, NULL, beta_main, NULL) ||
	    pthread_create(&g, NULL, gamma_main, NULL)) {
		fprintf(stderr, "threads: pthread_create failed\n");
		return 1;
	}
	pthread_setname_np(b, "beta");
	pthread_setname_np(g, "gamma");
	pthread_barrier_wait(&names_set);
	for (int i = 0; i < 7; i++)
		main_step();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(g, NULL);
	return 0;
}
