/*
 * s_lib_samename.c - libs_samename.so, of s_samename.c: its own static
 * "work", called through lib_entry.
 */
#include "s_sample.h"

static S_FN unsigned long work(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s = s * 31 + (i ^ (s >> 7)); /* THE LIBRARY'S LOOP */
	return s;
}

unsigned long lib_entry(unsigned long n)
{
	return work(n) + n;
}
