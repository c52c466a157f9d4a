/*
 * patch_avx.c - e2e target for the program's vector registers across the
 * probes (test e2e.patched_avx_registers): built -O3 -ffast-math -mavx2
 * without -finstrument-functions (patched at load, and with -pg -mfentry),
 * it must print the same under stint.
 *   addv  - takes and returns __m256d in ymm0/ymm1: its entry and return
 *           probes run, and every few ten thousand calls a chunk switch,
 *           whose C library calls end with vzeroupper
 *   vsin  - a loop GCC vectorises into calls of libmvec's 4-wide sin
 *           (_ZGVdN4v_sin, ymm argument): library calls probed
 * Prints "no avx2" (and the test is skipped) where the CPU lacks AVX2.
 */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>

#include "e2e_prog.h"

#define N 2048
static double a[N], b[N];

E2E_FN __m256d addv(__m256d x, __m256d y)
{
	return _mm256_add_pd(x, y);
}

E2E_FN void vsin(void)
{
	for (int i = 0; i < N; i++)
		b[i] = sin(a[i]);
}

int main(void)
{
	if (!__builtin_cpu_supports("avx2")) {
		printf("no avx2\n");
		return 0;
	}
	long bad = 0;
	__m256d one = _mm256_set1_pd(1.0);
	for (long i = 0; i < 400000; i++) {
		double d[4];
		_mm256_storeu_pd(d, addv(_mm256_set_pd((double)i, (double)i, (double)i, (double)i), one));
		if (d[0] != (double)(i + 1) || d[3] != (double)(i + 1))
			bad++;
	}
	double s = 0;
	for (int r = 0; r < 40; r++) {
		for (int i = 0; i < N; i++)
			a[i] = (i + r) * 0.001;
		vsin();
		for (int i = 0; i < N; i++)
			s += b[i];
	}
	printf("wrong sums %ld, sines %.9f\n", bad, s);
	return 0;
}
