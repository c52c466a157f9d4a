/*
 * s_lib_reuse.c - libs_reuse.so, a shared library of the sampling e2e
 * tests that s_remap loads where libs_plugin.so was mapped before it was
 * closed, and burns CPU in reuse_work (test sample.reused_address).  Its
 * code is laid out unlike libs_plugin.so's (reuse_pad first), so that a
 * sample named with the old library's symbols gets another name.
 */
#include "s_sample.h"

S_FN uint64_t reuse_pad(uint64_t n)
{
	volatile uint64_t x = 3;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_ADD + S_MUL + (x >> 7);
	return x;
}

S_FN uint64_t reuse_work(uint64_t n)
{
	volatile uint64_t x = 7;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}
