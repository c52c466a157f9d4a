/*
 * thread_exit.c - e2e target: a thread leaves through pthread_exit from 3
 * frames deep (test e2e.pthread_exit_from_deep).
 *
 * Thread "quitter" runs quitter_main, which calls quit_level(3): quit_level
 * is called 3 times and the innermost calls pthread_exit with 3 frames (plus
 * quitter_main) still open.  Then main calls after_join once (about 20 ms of
 * CPU): the quitter's open frames must be closed when its thread ended, not
 * stretched over main's later time.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

/* not instrumented; noipa hides from GCC that it never returns */
__attribute__((noipa, no_instrument_function)) static void leave_thread(void)
{
	pthread_exit(NULL);
}

E2E_FN void quit_level(int n)
{
	sink += e2e_burn(20000, (uint64_t)n);
	if (n > 1)
		quit_level(n - 1);
	else
		leave_thread();
	sink++;
}

E2E_FN void *quitter_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "quitter");
	quit_level(3);
	return NULL;
}

E2E_FN void after_join(void) { e2e_spin_ms(20); }

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, quitter_main, NULL))
		return 1;
	pthread_join(t, NULL);
	after_join();
	return 0;
}
