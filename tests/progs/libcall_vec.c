/*
 * libcall_vec.c - e2e target (e2e.libcall_vector_registers): calls into a
 * library that is not instrumented, so each goes through stint's
 * library-call probes, with arguments and results in xmm, ymm and x87
 * registers and a varargs call (whose count of vector arguments is in %al).
 * The probes' trampolines save the general registers only; a runtime that
 * touched a vector register on the way in or out would change these
 * results.  200,000 rounds cross chunk switches and new call sites.
 *
 * Prints "wrong 0 of N" (N results compared), then the sum of the results.
 */
#include <stdio.h>

#include "e2e_prog.h"
#include "veclib.h"

#define ROUNDS 200000

static long wrong, compared;

static E2E_NOINSTR void expect(double got, double want)
{
	compared++;
	if (got != want)
		wrong++;
}

E2E_FN double scalar_calls(double x)
{
	double s = vl_sum8(x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6, x + 7);
	expect(s, 36 * x + 168);
	struct vl_pair p = vl_pair(x);
	expect(p.x, 3 * x);
	expect(p.y, 5 * x);
	long double l = vl_long((long double)x + 0.25L);
	expect((double)l, (double)(((long double)x + 0.25L) * 7));
	double v = vl_varargs(3, x, x * 2, x * 4);
	expect(v, x + 4 * x + 12 * x);
	return s + p.x + p.y + (double)l + v;
}

__attribute__((target("avx"), noipa)) double vector_calls(double x)
{
	__m256d a = _mm256_set_pd(x, x + 1, x + 2, x + 3), b = _mm256_set_pd(-x, 2 * x, 0.5, 7);
	__m256d r = vl_add4(a, b);
	double out[4];
	_mm256_storeu_pd(out, r);
	expect(out[3], x - 2 * x);
	expect(out[2], x + 1 + 4 * x);
	expect(out[1], x + 2 + 1);
	expect(out[0], x + 3 + 14);
	return out[0] + out[1] + out[2] + out[3];
}

int main(void)
{
	int avx = __builtin_cpu_supports("avx");
	double sum = 0;
	for (int i = 0; i < ROUNDS; i++) {
		sum += scalar_calls(i * 0.5);
		if (avx)
			sum += vector_calls(i * 0.25);
	}
	printf("wrong %ld of %ld\n%.17g\n", wrong, compared, sum);
	return wrong != 0;
}
