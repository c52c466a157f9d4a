/* veclib.h - libe2e_veclib.so's functions (tests/progs/veclib.c) */
#ifndef VECLIB_H
#define VECLIB_H
#include <immintrin.h>

struct vl_pair {
	double x, y;
};
double vl_sum8(double a, double b, double c, double d, double e, double f, double g, double h);
struct vl_pair vl_pair(double x);
long double vl_long(long double x);
double vl_varargs(int n, ...);
__attribute__((target("avx"))) __m256d vl_add4(__m256d a, __m256d b);
#endif
