/*
 * small_stack.c - e2e target for counted functions that run on small
 * stacks (test e2e.small_stacks): a coroutine on a stack of argv[1] bytes
 * (default 4096) made with makecontext, and a signal handler on an
 * alternate stack of argv[2] bytes (default 16384), each calling leaf()
 * often enough that the profiler switches to new buffer chunks and
 * measures its cost again while they run (the coroutine argv[3] times as
 * long, default 1: for a sampler's signals to land on its stack).  Both stacks have an
 * inaccessible page below them: an overflow faults at once instead of
 * writing over the heap.  Prints the sums, which the profiler must not
 * change.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long leaf(long x)
{
	return x * 3 + 1;
}

E2E_FN long run_leaves(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

static ucontext_t main_ctx, co_ctx;
static volatile long co_sum, handler_sum;
static long co_rounds = 1;

E2E_FN void co_main(void)
{
	for (long r = 0; r < co_rounds; r++)
		co_sum += run_leaves(1000000);
}

E2E_FN void on_signal(int sig)
{
	(void)sig;
	handler_sum += run_leaves(50000);
}

/* size bytes of stack with an inaccessible guard page below them */
static char *guarded_stack(size_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t span = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
	char *m = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, (size_t)page, PROT_NONE) != 0)
		return NULL;
	return m + (size_t)page + (span - size); /* the stack ends at the mapping's end */
}

int main(int argc, char **argv)
{
	size_t co_size = argc > 1 ? (size_t)atol(argv[1]) : 4096;
	size_t alt_size = argc > 2 ? (size_t)atol(argv[2]) : 16384;
	co_rounds = argc > 3 ? atol(argv[3]) : 1;
	char *co_stack = guarded_stack(co_size), *alt_stack = guarded_stack(alt_size);
	if (!co_stack || !alt_stack)
		return 1;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = co_size;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_main, 0);
	swapcontext(&main_ctx, &co_ctx);

	stack_t ss = {.ss_sp = alt_stack, .ss_size = alt_size};
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	for (int i = 0; i < 20; i++)
		raise(SIGUSR1);
	printf("coroutine %ld handler %ld\n", co_sum, handler_sum);
	return 0;
}
