/*
 * s_split.c - sampling e2e target (tests sample.cpu_split, lines_annotate,
 * inproc_split in tests/e2e/run_sample.py).
 *
 * main -> split_work -> heavy (3 parts of the CPU time) and light (1 part):
 * the same loop, 3x as many iterations in heavy.  split_work itself does
 * nothing but call them, so its exclusive share is ~0 and its inclusive
 * share ~100%.  About 0.6 s of CPU in all.  Built -O2 -g.
 *
 * The hot loop of heavy() is all on the line marked S_HOT_HEAVY (the test
 * finds its number by that marker), so that one line gets heavy's samples.
 */
#include <stdio.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t heavy(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < 3 * n; i++) x = x * S_MUL + S_ADD; /* S_HOT_HEAVY */
	return x;
}

S_FN uint64_t light(uint64_t n)
{
	volatile uint64_t x = 3;
	for (uint64_t i = 0; i < n; i++) x = x * S_MUL + S_ADD; /* S_HOT_LIGHT */
	return x;
}

S_FN uint64_t split_work(uint64_t n)
{
	uint64_t r = heavy(n);
	r ^= light(n);
	sink = r;
	return r;
}

int main(void)
{
	uint64_t n = s_iters(2.5); /* heavy 7.5 units, light 2.5 units */
	sink = split_work(n);
	printf("split done\n");
	return 0;
}
