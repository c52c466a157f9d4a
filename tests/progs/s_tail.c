/*
 * s_tail.c - sampling e2e target (test sample.annotate_file_end in
 * tests/e2e/run_sample.py).
 *
 * The hot loop of tail_spin() is on the last line of this file, so
 * `stint annotate tail_spin` must not announce lines past the end of the
 * file (it shows two lines of context after the last sampled one where
 * the file has them).  About 0.25 s of CPU.  Built -O2 -g.
 */
#include <stdio.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t tail_spin(uint64_t n);

int main(void)
{
	sink = tail_spin(s_iters(4));
	printf("tail done\n");
	return 0;
}

S_FN uint64_t tail_spin(uint64_t n) { volatile uint64_t x = 1; for (uint64_t i = 0; i < n; i++) x = x * S_MUL + S_ADD; return x; } /* S_HOT_TAIL */
