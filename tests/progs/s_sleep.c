/*
 * s_sleep.c - sampling e2e target (test sample.sleep_not_sampled).
 *
 * main -> compute (about 0.3 s of CPU) and sleeper (usleep 300 ms, no
 * CPU): sampling follows CPU time, so sleeper gets (almost) no samples
 * although it takes as much wall time as compute.
 */
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t compute(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

S_FN void sleeper(void)
{
	usleep(300000);
	sink++;
}

int main(void)
{
	sleeper();
	sink = compute(s_iters(5));
	sleeper();
	return 0;
}
