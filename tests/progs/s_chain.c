/*
 * s_chain.c - sampling e2e target (tests sample.stacks_dwarf_nofp and
 * sample.stacks_fp).
 *
 * main -> chain_a -> chain_b -> chain_c -> chain_leaf; chain_leaf burns
 * about 0.5 s of CPU.  Every call is followed by more work in the caller
 * (no tail calls), so every function keeps its frame on the stack while
 * chain_leaf runs.  Built twice: s_chain_nofp with -O2
 * -fomit-frame-pointer (the stacks need DWARF unwinding) and s_chain_fp
 * with -O2 -fno-omit-frame-pointer (for --call-graph fp).
 */
#include <stdio.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t chain_leaf(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

S_FN uint64_t chain_c(uint64_t n)
{
	uint64_t r = chain_leaf(n);
	sink = r;
	return r + 3;
}

S_FN uint64_t chain_b(uint64_t n)
{
	uint64_t r = chain_c(n);
	sink = r;
	return r + 2;
}

S_FN uint64_t chain_a(uint64_t n)
{
	uint64_t r = chain_b(n);
	sink = r;
	return r + 1;
}

int main(void)
{
	uint64_t r = chain_a(s_iters(8));
	sink = r;
	printf("chain done\n");
	return 0;
}
