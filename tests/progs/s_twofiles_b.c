/*
 * s_twofiles_b.c - the second source file of s_twofiles (see
 * s_twofiles_a.c): its own static "work".
 */
#include "s_sample.h"

static S_FN unsigned long work(unsigned long n)
{
	unsigned long s = 3;
	for (unsigned long i = 0; i < n; i++)
		s = s * 29 + (i ^ (s >> 5)); /* FILE B'S LOOP */
	return s;
}

S_FN unsigned long b_entry(unsigned long n)
{
	return work(n);
}
