/*
 * s_recurse.c - sampling e2e target (test sample.recursion_once).
 *
 * main -> recurse(50) -> recurse(49) -> ... -> recurse(0), which burns
 * about 0.5 s of CPU in its own loop: nearly every sample has recurse on
 * its stack 51 times, and must count it once.  The call is not a tail
 * call (a volatile store follows it), so every level keeps its frame.
 */
#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t recurse(int depth, uint64_t n)
{
	if (depth == 0) {
		volatile uint64_t x = 1;
		for (uint64_t i = 0; i < n; i++)
			x = x * S_MUL + S_ADD;
		return x;
	}
	uint64_t r = recurse(depth - 1, n);
	sink = r;
	return r + (uint64_t)depth;
}

int main(void)
{
	sink = recurse(50, s_iters(8));
	return 0;
}
