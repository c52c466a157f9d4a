/*
 * s_twofiles_a.c - sampling and instrumentation e2e target (tests
 * sample.static_functions_two_files, e2e.static_functions_two_files): a
 * static function "work" here and another in s_twofiles_b.c, one program.
 * Two functions of one name in one module, told apart by their source
 * files: never one row, never mixed by annotate, callers or diff.
 */
#include <stdio.h>

#include "s_sample.h"

unsigned long b_entry(unsigned long n);

static S_FN unsigned long work(unsigned long n)
{
	unsigned long s = 1;
	for (unsigned long i = 0; i < n; i++)
		s = s * 17 + (i ^ (s >> 3)); /* FILE A'S LOOP */
	return s;
}

int main(void)
{
	unsigned long n = s_iters(1), s = 0;
	for (int i = 0; i < 3; i++)
		s += work(n);
	printf("%lu\n", s + b_entry(n));
	return 0;
}
