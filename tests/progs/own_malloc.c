/*
 * own_malloc.c - e2e target: a program with its own malloc, free, calloc
 * and realloc, instrumented like the rest (test e2e.program_defines_malloc).
 *
 * main calls malloc 10 times and free 10 times and nothing else that could
 * allocate (no stdio): every other call of these functions in the report
 * would be the profiler's own, which must never call into the program.
 */
#include <stddef.h>
#include <string.h>

#include "e2e_prog.h"

static _Alignas(16) unsigned char arena[1 << 22];
static size_t used;

E2E_FN void *malloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n + 16 > sizeof(arena) - used)
		return NULL;
	unsigned char *p = arena + used + 16;
	memcpy(p - 16, &n, sizeof(n)); /* the size, for realloc */
	used += n + 16;
	return p;
}

E2E_FN void free(void *p) { (void)p; }

E2E_FN void *calloc(size_t a, size_t b)
{
	if (b && a > (size_t)-1 / b)
		return NULL;
	void *p = malloc(a * b);
	if (p)
		memset(p, 0, a * b);
	return p;
}

E2E_FN void *realloc(void *old, size_t n)
{
	void *p = malloc(n);
	if (p && old) {
		size_t had;
		memcpy(&had, (unsigned char *)old - 16, sizeof(had));
		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

int main(void)
{
	void *blocks[10];
	for (int i = 0; i < 10; i++)
		blocks[i] = malloc(100 + (size_t)i);
	for (int i = 0; i < 10; i++)
		free(blocks[i]);
	return 0;
}
