/*
 * coroutines.c - e2e target for coroutines through patched functions (test
 * e2e.patched_coroutines): generators on makecontext stacks next to each
 * other in the heap, switched with swapcontext from inside nested counted
 * functions, one left unfinished.  Frames of one coroutine's stack look
 * like dead frames to a shadow stack that sees another's; their returns
 * must still find their way back (a profiler must never change what the
 * program computes).  Prints a checksum of what the generators yielded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#include "e2e_prog.h"

#define NGEN 3
#define STACK (64 * 1024)

static ucontext_t main_ctx, gen_ctx[NGEN];
static long yielded[NGEN];
static int finished[NGEN];

E2E_FN void gen_yield(int g, long v)
{
	yielded[g] = v;
	swapcontext(&gen_ctx[g], &main_ctx);
}

E2E_FN long gen_step(int g, long i)
{
	long v = i * (g + 2) + g;
	gen_yield(g, v);
	return v;
}

E2E_FN long gen_inner(int g, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += gen_step(g, i);
	return s;
}

E2E_FN void gen_body(int g)
{
	long s = gen_inner(g, 10 + 5 * g);
	yielded[g] = -s;
	finished[g] = 1;
}

E2E_FN long resume(int g)
{
	swapcontext(&main_ctx, &gen_ctx[g]);
	return yielded[g];
}

int main(void)
{
	char *stacks = malloc((size_t)NGEN * STACK);
	for (int g = 0; g < NGEN; g++) {
		getcontext(&gen_ctx[g]);
		gen_ctx[g].uc_stack.ss_sp = stacks + (size_t)g * STACK;
		gen_ctx[g].uc_stack.ss_size = STACK;
		gen_ctx[g].uc_link = &main_ctx;
		makecontext(&gen_ctx[g], (void (*)(void))gen_body, 1, g);
	}
	unsigned long sum = 0;
	int rounds = 0;
	/* round robin; generator 2 is abandoned after 7 values */
	for (int live = NGEN; live > 0 && rounds < 1000; rounds++) {
		live = 0;
		for (int g = 0; g < NGEN; g++) {
			if (finished[g] || (g == 2 && rounds >= 7))
				continue;
			long v = resume(g);
			sum = sum * 31 + (unsigned long)v;
			live += !finished[g];
		}
	}
	printf("coroutines sum=%lu rounds=%d finished=%d%d%d\n", sum, rounds, finished[0], finished[1], finished[2]);
	return 0;
}
