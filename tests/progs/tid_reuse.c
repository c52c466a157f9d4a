/*
 * tid_reuse.c - e2e target: a thread of the program gets the thread id an
 * earlier thread of it had (test e2e.thread_id_reused).  The kernel gives
 * ids again once pid_max wraps; threads that make no instrumented call (and
 * so are never recorded) use up the ids cheaply until the next one to come
 * is one a recorded thread had, then recorded threads are made until one
 * of them gets it.  Each recorded thread calls step() once.  main prints
 * "recorded=N reused=R" (R: 1 if a recorded thread's id came again).
 * With an argument N: only N recorded threads, one after the other (test
 * e2e.threads_more_than_descriptors).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "e2e_prog.h"

/* gettid without a library call: the runtime's library-call probe would
 * start recording the quiet threads */
static E2E_NOINSTR int raw_gettid(void)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "0"(186L) : "rcx", "r11", "memory");
	return (int)r;
}

static E2E_NOINSTR void *quiet(void *arg)
{
	*(int *)arg = raw_gettid();
	return NULL;
}

E2E_FN void step(void) { __asm__ volatile(""); }

E2E_FN void *recorded(void *arg)
{
	*(int *)arg = raw_gettid();
	step();
	return NULL;
}

static E2E_NOINSTR int run(void *(*fn)(void *))
{
	pthread_t t;
	int tid = 0;
	if (pthread_create(&t, NULL, fn, &tid) || pthread_join(t, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(1);
	}
	return tid;
}

#define FIRST 20

int main(int argc, char **argv)
{
	int first[FIRST], recorded_n = 0, reused = 0;
	if (argc > 1) {
		for (long n = atol(argv[1]); recorded_n < n; recorded_n++)
			run(recorded);
		printf("recorded=%d reused=0\n", recorded_n);
		return 0;
	}
	for (int i = 0; i < FIRST; i++, recorded_n++)
		first[i] = run(recorded);
	/* quiet threads until the id after the last one is a recorded one's */
	for (long q = 0; q < 4L * 1000 * 1000 && !reused; q++) {
		int next = run(quiet) + 1, hit = 0;
		for (int i = 0; i < FIRST; i++)
			hit |= first[i] == next;
		/* recorded threads until one has an earlier one's id (another
		 * process may take that id first: then quiet ones again) */
		for (int k = 0; hit && k < 3 && !reused; k++, recorded_n++) {
			int tid = run(recorded);
			for (int i = 0; i < FIRST; i++)
				reused |= first[i] == tid;
		}
	}
	printf("recorded=%d reused=%d\n", recorded_n, reused);
	return 0;
}
