/*
 * s_anon_code.c - sampling e2e target (test sample.anon_code_apart): a
 * page of code made at run time (no file: perf names it //anon, as a JIT's)
 * on each side of the C library, then work in the C library (qsort).  The
 * recorder once made one module of all //anon mappings, from the lowest to
 * the highest, and named libc's functions as in "anon".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "s_sample.h"

static uintptr_t libc_lo = UINTPTR_MAX, libc_hi;

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			uintptr_t b = a + info->dlpi_phdr[i].p_memsz;
			if (a < libc_lo)
				libc_lo = a;
			if (b > libc_hi)
				libc_hi = b;
		}
	return 1;
}

static void *code_page_near(uintptr_t at)
{
	for (int tries = 0; tries < 64; tries++, at += 1u << 20) {
		void *p = mmap((void *)(at & ~(uintptr_t)4095), 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED) {
			*(unsigned char *)p = 0xc3; /* ret */
			return p;
		}
	}
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	dl_iterate_phdr(find_libc, NULL);
	if (!libc_hi || !code_page_near(libc_lo - (64u << 20)) || !code_page_near(libc_hi + (64u << 20))) {
		puts("no room around libc");
		return 0;
	}
	size_t n = (size_t)s_iters(0.02);
	uint64_t *v = malloc(n * sizeof *v), x = 1;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < n; i++)
			v[i] = x = x * S_MUL + S_ADD;
		qsort(v, n, sizeof *v, cmp);
	}
	printf("sorted %zu\n", n);
	return 0;
}
