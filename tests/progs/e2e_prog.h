/*
 * e2e_prog.h - helpers shared by the end-to-end target programs under
 * tests/progs (see tests/e2e/run_e2e.py).
 *
 * The helpers here are deliberately NOT instrumented, so they never appear
 * in a report: every function a test counts is spelled out in the program
 * itself.  Counted functions are marked E2E_FN (noipa: never inlined,
 * cloned or merged, so each keeps its own name and its own call count even
 * at -O2).
 */
#ifndef E2E_PROG_H
#define E2E_PROG_H

#include <stdint.h>
#include <time.h>

#define E2E_FN __attribute__((noipa))
#define E2E_NOINSTR __attribute__((no_instrument_function))

/* Pure arithmetic for a given number of iterations: no calls, no syscalls. */
static E2E_NOINSTR inline uint64_t e2e_burn(uint64_t iters, uint64_t seed)
{
	volatile uint64_t x = seed | 1;
	for (uint64_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Busy-wait on the CPU for about `ms` milliseconds of wall time. */
static E2E_NOINSTR inline void e2e_spin_ms(double ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		e2e_burn(2000, 1);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

#endif
