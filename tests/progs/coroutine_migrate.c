/*
 * coroutine_migrate.c - e2e target (test e2e.coroutine_resumed_elsewhere):
 * two coroutines (ucontext) started on the main thread, each left inside
 * instrumented code (one in a function of its own, one in a qsort
 * comparator), then resumed and finished on another thread, while the main
 * thread waits in pthread_join: a fiber scheduler that moves work between
 * threads.  Patched at load (or through -pg -mfentry sites), the frames'
 * return addresses were on the first thread's shadow stack, and stint
 * aborted the program at their return on the second.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "e2e_prog.h"

static ucontext_t main_ctx, thread_ctx, co_ctx[2];
static ucontext_t *back;
static int yielded;

E2E_FN static void yield_now(int which)
{
	swapcontext(&co_ctx[which], back);
}

E2E_FN static int inner(int x)
{
	yield_now(0);
	return x * 2;
}

E2E_FN static void first_body(void)
{
	printf("first got %d\n", inner(21));
}

E2E_FN static int compare(const void *a, const void *b)
{
	if (!yielded) {
		yielded = 1;
		yield_now(1);
	}
	return *(const int *)a - *(const int *)b;
}

E2E_FN static void second_body(void)
{
	int v[5] = {5, 3, 1, 4, 2};
	qsort(v, 5, sizeof(int), compare);
	printf("sorted %d%d%d%d%d\n", v[0], v[1], v[2], v[3], v[4]);
}

static void *resumer(void *arg)
{
	(void)arg;
	back = &thread_ctx;
	for (int i = 0; i < 2; i++) /* (each ends in thread_ctx, its uc_link) */
		swapcontext(&thread_ctx, &co_ctx[i]);
	return NULL;
}

int main(void)
{
	void (*bodies[2])(void) = {first_body, second_body};
	back = &main_ctx;
	for (int i = 0; i < 2; i++) {
		getcontext(&co_ctx[i]);
		co_ctx[i].uc_stack.ss_sp = malloc(1 << 16);
		co_ctx[i].uc_stack.ss_size = 1 << 16;
		co_ctx[i].uc_link = &thread_ctx; /* (read by makecontext) */
		makecontext(&co_ctx[i], bodies[i], 0);
		swapcontext(&main_ctx, &co_ctx[i]);
	}
	pthread_t t;
	pthread_create(&t, NULL, resumer, NULL);
	pthread_join(t, NULL);
	printf("done\n");
	fflush(stdout);
	return 0;
}
