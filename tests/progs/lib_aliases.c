/*
 * lib_aliases.c - e2e target: calls into the C library under names that
 * land in one function, or in a function the library's symbols do not
 * name (test e2e.library_call_names).
 *
 * glibc's memcpy and memmove are IFUNCs that choose one function; memset
 * and strlen choose functions named only in the library's debug symbols.
 * move_it calls memmove 3 times, copy_it memcpy once, fill_it memset twice,
 * measure_it strlen once.  The sizes come from argc: no call is inlined.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_prog.h"

E2E_FN void move_it(char *b, size_t n)
{
	memmove(b + 1, b, n);
}

E2E_FN void copy_it(char *d, const char *s, size_t n)
{
	memcpy(d, s, n);
}

E2E_FN void fill_it(char *b, int c, size_t n)
{
	memset(b, c, n);
}

E2E_FN size_t measure_it(const char *s)
{
	return strlen(s);
}

int main(int argc, char **argv)
{
	(void)argv;
	size_t n = (size_t)argc + 100;
	char *b = malloc(4096), *d = malloc(4096);
	if (!b || !d)
		return 1;
	fill_it(b, 'x', 4000);
	fill_it(d, 0, 4096);
	for (int i = 0; i < 3; i++)
		move_it(b, n);
	copy_it(d, b, n);
	printf("%zu\n", measure_it(d));
	free(b);
	free(d);
	return 0;
}
