/*
 * rt_calib.c - the yardstick for the probe-cost compensation.  This one
 * file of the runtime is compiled with -finstrument-functions, so that
 * calling rt_calib_probed() costs what a call of an instrumented function
 * of the program costs: the probes plus the extra code the compiler puts
 * around them.  rt_calib_plain() is the same function without probes.
 */
#include <stdint.h>
#include "rt_int.h"

__attribute__((noinline, visibility("hidden"))) void rt_calib_probed(void)
{
	__asm__ volatile("");
}

__attribute__((noinline, no_instrument_function, visibility("hidden"))) void rt_calib_plain(void)
{
	__asm__ volatile("");
}

/* Ticks taken by n calls of one of the two. */
__attribute__((no_instrument_function, visibility("hidden"))) uint64_t rt_calib_loop(int probed, int n)
{
	void (*volatile fn)(void) = probed ? rt_calib_probed : rt_calib_plain;
	uint64_t t0 = rt_now();
	for (int i = 0; i < n; i++)
		fn();
	return rt_now() - t0;
}
