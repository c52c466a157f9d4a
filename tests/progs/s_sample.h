/*
 * s_sample.h - helpers shared by the sampling end-to-end target programs
 * tests/progs/s_*.c (see tests/e2e/run_sample.py).
 *
 * Sampling follows CPU time, so the programs burn CPU by a fixed number
 * of iterations (not for a wall-clock time): the share of CPU time each
 * function gets is then set by the program, whatever the machine's load.
 * Every function a test looks for is marked S_FN (noipa: never inlined,
 * cloned or merged with an identical twin, so it keeps its own name and
 * its own frame at -O2).
 *
 * S_SCALE (environment) multiplies every iteration count, for slower or
 * faster machines; default 1.
 */
#ifndef S_SAMPLE_H
#define S_SAMPLE_H

#include <stdint.h>
#include <stdlib.h>

#define S_FN __attribute__((noipa))

/* one "unit" of work: about 0.06 s of CPU on the reference machine */
#define S_UNIT 50000000ull

static inline uint64_t s_iters(double units)
{
	const char *e = getenv("S_SCALE");
	double scale = e ? atof(e) : 1.0;
	if (scale <= 0)
		scale = 1.0;
	return (uint64_t)(units * scale * (double)S_UNIT);
}

/* the multiplier and increment of the burning loops (an LCG step) */
#define S_MUL 6364136223846793005ull
#define S_ADD 1442695040888963407ull

#endif
