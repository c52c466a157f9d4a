/*
 * thread_exit_cb.c - e2e target: pthread_exit from a qsort comparator, in a
 * thread with a cleanup handler around the qsort (test
 * e2e.thread_exit_in_callback).  Built with -fexceptions, so the handler is
 * run by the unwinder, which must get through the probed qsort call.
 * Prints "cleaned 1".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "e2e_prog.h"

static int cleaned;

static void cleanup(void *arg)
{
	(void)arg;
	cleaned++;
}

E2E_FN int cmp_quit(const void *a, const void *b)
{
	(void)a;
	(void)b;
	pthread_exit(NULL);
	return 0;
}

E2E_FN void *worker(void *arg)
{
	int arr[4] = {3, 1, 2, 0};
	pthread_cleanup_push(cleanup, arg);
	qsort(arr, 4, sizeof(int), cmp_quit);
	pthread_cleanup_pop(0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 2;
	printf("cleaned %d\n", cleaned);
	return cleaned == 1 ? 0 : 1;
}
