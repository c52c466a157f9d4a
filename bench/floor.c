/*
 * floor.c - the cheapest possible -finstrument-functions probe, as a
 * reference for bench/bench-instrument.sh.
 *
 * Preloaded with LD_PRELOAD into a program built with -finstrument-functions,
 * its __cyg_profile_func_enter/exit replace glibc's no-op ones.  Each probe
 * reads the TSC and stores it into a per-thread ring (initial-exec TLS, so
 * one %fs-relative access, no __tls_get_addr) which is never written out.
 * That is the least any instrumentation profiler must do per event (take a
 * timestamp, store it), so the time it adds over the uninstrumented-hooks run
 * is the lower bound to compare a real profiler's overhead with.
 *
 * Build: gcc -O2 -fPIC -shared -o floor.so floor.c
 */
#include <stdint.h>
#include <x86intrin.h>

#define RING 4096 /* entries, a power of two: 32 KiB per thread, stays in L1/L2 */

struct ring {
	uint64_t pos;
	uint64_t t[RING];
};

/* visible, so the stores cannot be optimised away */
__thread struct ring floor_ring __attribute__((tls_model("initial-exec")));

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)fn;
	(void)site;
	struct ring *r = &floor_ring;
	r->t[r->pos++ & (RING - 1)] = __rdtsc();
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)fn;
	(void)site;
	struct ring *r = &floor_ring;
	r->t[r->pos++ & (RING - 1)] = __rdtsc();
}
