/*
 * tsd_destructor.c - e2e target: a thread's thread-specific-data
 * destructors, which run after the thread function returned
 * (test e2e.thread_specific_data_destructors).
 *
 * Thread "tsd" sets a value for two keys of the program and returns.  The
 * destructor tsd_dtor then calls dtor_step 3 times; tsd_again sets its
 * value once more, so glibc runs it in a second round: 2 calls.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "e2e_prog.h"

static volatile uint64_t sink;
static pthread_key_t key_a, key_b;

E2E_FN void dtor_step(void) { sink += e2e_burn(1000, 7); }

E2E_FN void tsd_dtor(void *v)
{
	(void)v;
	for (int i = 0; i < 3; i++)
		dtor_step();
}

E2E_FN void tsd_again(void *v)
{
	static __thread int rounds;
	if (++rounds == 1)
		pthread_setspecific(key_b, v); /* once more, in the next round */
}

E2E_FN void *tsd_main(void *arg)
{
	pthread_setname_np(pthread_self(), "tsd");
	pthread_setspecific(key_a, arg);
	pthread_setspecific(key_b, arg);
	return NULL;
}

int main(void)
{
	static int value = 1;
	pthread_key_create(&key_a, tsd_dtor);
	pthread_key_create(&key_b, tsd_again);
	pthread_t t;
	if (pthread_create(&t, NULL, tsd_main, &value))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
