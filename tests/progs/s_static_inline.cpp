/*
 * s_static_inline.cpp - sampling e2e target (test
 * sample.static_cxx_function_one_row): a static C++ function, mix, inlined
 * into main's first loop and called out of line (through a pointer) in the
 * second.  GCC gives it no linkage name in DWARF: its inlined copy must be
 * named as its out-of-line one, "mix(unsigned long, unsigned long)".
 */
#include <cstdio>

#include "s_sample.h"

static unsigned long mix(unsigned long s, unsigned long i)
{
	for (int k = 0; k < 8; k++)
		s = s * 31 + (i ^ (s >> 7));
	return s;
}

unsigned long (*volatile indirect)(unsigned long, unsigned long) = mix;

int main()
{
	unsigned long s = 0, n = s_iters(0.4);
	for (unsigned long i = 0; i < n; i++)
		s = mix(s, i); /* inlined */
	for (unsigned long i = 0; i < n; i++)
		s = indirect(s, i); /* the out-of-line copy */
	std::printf("%lu\n", s);
	return 0;
}
