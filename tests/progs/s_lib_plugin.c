/*
 * s_lib_plugin.c - libs_plugin.so, a shared library of the sampling e2e
 * tests that s_libs loads with dlopen and burns CPU in plugin_work (test
 * sample.shared_libs).
 */
#include "s_sample.h"

S_FN uint64_t plugin_work(uint64_t n)
{
	volatile uint64_t x = 5;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}
