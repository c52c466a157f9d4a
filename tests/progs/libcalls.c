/*
 * libcalls.c - e2e target: calls into shared libraries from an instrumented
 * function (tests e2e.libcalls and e2e.no_libcalls_option).
 *
 * use_libc() calls usleep 3 times (1 ms each), malloc 10 times, free 10
 * times and qsort once; qsort calls back the instrumented cmp_ints.
 */
#include <stdlib.h>
#include <unistd.h>

#include "e2e_prog.h"

static void *volatile blocks[10];
static int numbers[64];

E2E_FN int cmp_ints(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

E2E_FN void use_libc(void)
{
	for (int i = 0; i < 3; i++)
		usleep(1000);
	for (int i = 0; i < 10; i++)
		blocks[i] = malloc(100 + (size_t)i);
	for (int i = 0; i < 10; i++)
		free(blocks[i]);
	for (int i = 0; i < 64; i++)
		numbers[i] = (i * 37) % 64;
	qsort(numbers, 64, sizeof(numbers[0]), cmp_ints);
}

int main(void)
{
	use_libc();
	return numbers[0] == 0 && numbers[63] == 63 ? 0 : 1;
}
