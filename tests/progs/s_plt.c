/*
 * s_plt.c - sampling e2e target (test sample.plt_stubs).
 *
 * plt_loop calls rand_r, a small libc function, in a tight loop: each call
 * goes through the executable's PLT stub rand_r@plt, which therefore gets
 * samples of its own.  The stubs have no ELF symbol: stint must name them
 * NAME@plt from the dynamic relocations, as perf does, not print a bare
 * address.
 */
#include <stdio.h>
#include <stdlib.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t plt_loop(uint64_t n)
{
	unsigned seed = 1;
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += (uint64_t)rand_r(&seed);
	return s;
}

int main(void)
{
	sink = plt_loop(s_iters(3));
	printf("plt done\n");
	return 0;
}
