/*
 * fnoplt.c - e2e target built with -fno-plt (and a second time with
 * -fno-plt -Wl,-z,now): every call into a shared library goes through a
 * GOT entry (R_X86_64_GLOB_DAT) instead of the PLT (test e2e.fno_plt_calls).
 *
 * use_libc() calls usleep 3 times, malloc 10 times and qsort once, and
 * free 10 times; main also takes free's address, which must stay the
 * address of libc's free (the program prints "identity same").
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
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
	void (*volatile mine)(void *) = free;
	printf("identity %s\n", (void *)mine == dlsym(RTLD_DEFAULT, "free") ? "same" : "DIFFERENT");
	return numbers[0] == 0 && numbers[63] == 63 ? 0 : 1;
}
