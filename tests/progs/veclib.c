/*
 * veclib.c - libe2e_veclib.so, not instrumented: library functions whose
 * arguments and results travel in vector and x87 registers, for
 * tests/progs/libcall_vec.c (e2e.libcall_vector_registers).
 */
#include <stdarg.h>
#include <immintrin.h>

#include "veclib.h"

double vl_sum8(double a, double b, double c, double d, double e, double f, double g, double h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

struct vl_pair vl_pair(double x)
{
	return (struct vl_pair){x * 3, x * 5};
}

long double vl_long(long double x)
{
	return x * 7;
}

double vl_varargs(int n, ...)
{
	va_list ap;
	double s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += (i + 1) * va_arg(ap, double);
	va_end(ap);
	return s;
}

__attribute__((target("avx"))) __m256d vl_add4(__m256d a, __m256d b)
{
	return _mm256_add_pd(a, _mm256_mul_pd(b, _mm256_set1_pd(2)));
}
