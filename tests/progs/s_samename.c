/*
 * s_samename.c - sampling e2e target (test sample.same_name_two_modules):
 * a static function "work" here and another in libs_samename.so
 * (s_lib_samename.c), each computing for a while: two functions of one name
 * in two modules, which annotate and callers must not mix up.
 */
#include <stdio.h>

#include "s_sample.h"

unsigned long lib_entry(unsigned long n);

static S_FN unsigned long work(unsigned long n)
{
	unsigned long s = 1;
	for (unsigned long i = 0; i < n; i++)
		s = s * 17 + (i ^ (s >> 3)); /* THE PROGRAM'S LOOP */
	return s;
}

int main(void)
{
	unsigned long n = s_iters(3);
	printf("%lu\n", work(n) + lib_entry(n));
	return 0;
}
