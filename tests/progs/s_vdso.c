/*
 * s_vdso.c - sampling e2e target (test sample.vdso_functions).
 *
 * vdso_loop calls clock_gettime in a tight loop: the call runs in the vDSO,
 * the kernel's small library mapped into every process ([vdso]), which has
 * no file on disk.  Its samples must name its functions
 * (__vdso_clock_gettime), as perf does, and unwind through it to
 * vdso_loop.
 */
#include <stdio.h>
#include <time.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t vdso_loop(uint64_t n)
{
	struct timespec ts;
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s += (uint64_t)ts.tv_nsec;
	}
	return s;
}

int main(void)
{
	sink = vdso_loop(s_iters(0.25));
	printf("vdso done\n");
	return 0;
}
