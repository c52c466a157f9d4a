/*
 * rt_calib.c - the yardstick for the probe-cost compensation.  This one
 * file of the runtime is compiled with -finstrument-functions, so that
 * calling rt_calib_probed() costs what a call of an instrumented function
 * of the program costs: the probes plus the extra code the compiler puts
 * around them.  rt_calib_plain() is the same function without probes.
 */
#include <stdint.h>
#include "rt_int.h"

/* A value lives across the probe calls, as in nearly every function of a
 * program: the compiler keeps it in a callee-saved register (a push and a
 * pop) and calls the exit probe, where for an empty function it jumps to
 * it and returns from it in one, a shape few real functions have. */
__attribute__((noinline, visibility("hidden"))) uint64_t rt_calib_probed(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline, no_instrument_function, visibility("hidden"))) uint64_t rt_calib_plain_value(uint64_t x)
{
	__asm__ volatile("" : "+r"(x));
	return x;
}

__attribute__((noinline, no_instrument_function, visibility("hidden"))) void rt_calib_plain(void)
{
	__asm__ volatile("");
}

/* The call to rt_patch_entry is what "call __fentry__" (-pg -mfentry) or a
 * patched-in jump to a trampoline gives a function: the same entry code,
 * return-address swap and exit through rt_patch_return (a trampoline adds
 * two jumps, a cycle or two). */
#ifndef RT_ATTACH_LIB /* (stint record -p patches nothing) */
void rt_calib_patched(void); /* arch/x86_64/rt_patch_x86_64.S */
#else
#define rt_calib_patched rt_calib_plain /* (never measured there) */
#endif

/* An instrumented function that calls fn, and the same without probes:
 * with fn a library-call stub (rt_plt.c), the yardstick of library calls. */
__attribute__((noinline, visibility("hidden"))) void rt_calib_lib_probed(void (*fn)(void))
{
	fn();
}

__attribute__((noinline, no_instrument_function, visibility("hidden"))) void rt_calib_lib_plain(void (*fn)(void))
{
	fn();
}

/*
 * Ticks taken by n calls of one of them: of rt_calib_probed (probed 1, 2
 * events a call), rt_calib_patched (probed 2), rt_calib_plain (0: the
 * patched one's baseline) or rt_calib_plain_value (3: rt_calib_probed's)
 * when stub is NULL, else of rt_calib_lib_probed through stub (probed 1;
 * 4 events a call: 2 of them a library call's) or of rt_calib_lib_plain
 * calling rt_calib_plain directly (0).
 */
__attribute__((no_instrument_function, visibility("hidden"))) uint64_t rt_calib_loop(int probed, int n,
										   void (*stub)(void))
{
	if (stub) {
		void (*volatile w)(void (*)(void)) = probed ? rt_calib_lib_probed : rt_calib_lib_plain;
		void (*target)(void) = probed ? stub : rt_calib_plain;
		uint64_t t0 = rt_now();
		for (int i = 0; i < n; i++)
			w(target);
		return rt_now() - t0;
	}
	if (probed == 1 || probed == 3) {
		uint64_t (*volatile fv)(uint64_t) = probed == 1 ? rt_calib_probed : rt_calib_plain_value;
		uint64_t x = 0, t0 = rt_now();
		for (int i = 0; i < n; i++)
			x = fv(x);
		__asm__ volatile("" : : "r"(x));
		return rt_now() - t0;
	}
	void (*volatile fn)(void) = probed == 2 ? rt_calib_patched : rt_calib_plain;
	uint64_t t0 = rt_now();
	for (int i = 0; i < n; i++)
		fn();
	return rt_now() - t0;
}
