/*
 * s_crash.c - sampling e2e target (test sample.crash_sigsegv).
 *
 * Burns about 0.2 s of CPU in crash_burn, then dies of SIGSEGV (a store
 * through a null pointer): stint record must exit 139 and keep the
 * samples taken before the crash.
 */
#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t crash_burn(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

S_FN void crash_now(volatile int *p)
{
	*p = (int)sink;
}

int main(void)
{
	sink = crash_burn(s_iters(3.5));
	crash_now((volatile int *)(uintptr_t)(sink & 0)); /* null: SIGSEGV */
	return 0;
}
