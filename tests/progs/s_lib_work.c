/*
 * s_lib_work.c - libs_work.so, a shared library of the sampling e2e
 * tests: s_libs links it normally and burns CPU in lib_work (test
 * sample.shared_libs).
 */
#include "s_sample.h"

S_FN uint64_t lib_work(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}
