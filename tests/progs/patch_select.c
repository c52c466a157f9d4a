/*
 * patch_select.c - e2e target for record-time selection on a program
 * patched at load (test e2e.select_patched_bytes): with
 * `stint record --function alpha`, only alpha's entry is rewritten.
 *
 * At the start of main (the runtime patched the program in its
 * constructor, before) it compares the first bytes of each of its
 * functions in memory with the same bytes in its own file, and prints
 * "changed: alpha=A beta=B gamma=C main=M" (1: rewritten by stint), then
 * calls alpha 7 times, beta 5 times, gamma 3 times.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long alpha(long x)
{
	return (long)e2e_burn(100, (uint64_t)x) & 0xff;
}

E2E_FN long beta(long x)
{
	return alpha(x) + ((long)e2e_burn(50, (uint64_t)x) & 0xf);
}

E2E_FN long gamma_(long x)
{
	return beta(x) * 2 + 1;
}

struct e2e_text {
	uintptr_t base;
	const ElfW(Phdr) *ph;
	int phnum;
};

static E2E_NOINSTR int e2e_first(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct e2e_text *t = arg;
	t->base = info->dlpi_addr;
	t->ph = info->dlpi_phdr;
	t->phnum = info->dlpi_phnum;
	return 1; /* the program is the first module */
}

/* Whether the 5 bytes at fn differ from the program file's. */
static E2E_NOINSTR int e2e_changed(const void *fn)
{
	struct e2e_text t;
	dl_iterate_phdr(e2e_first, &t);
	uintptr_t vaddr = (uintptr_t)fn - t.base;
	for (int i = 0; i < t.phnum; i++) {
		const ElfW(Phdr) *ph = &t.ph[i];
		if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr || vaddr + 5 > ph->p_vaddr + ph->p_filesz)
			continue;
		unsigned char file[9];
		int fd = open("/proc/self/exe", O_RDONLY);
		ssize_t n = pread(fd, file, sizeof(file), (off_t)(vaddr - ph->p_vaddr + ph->p_offset));
		close(fd);
		return n != (ssize_t)sizeof(file) || memcmp(file, fn, sizeof(file)) != 0;
	}
	return -1;
}

int main(void)
{
	printf("changed: alpha=%d beta=%d gamma=%d main=%d\n", e2e_changed((void *)alpha), e2e_changed((void *)beta),
	       e2e_changed((void *)gamma_), e2e_changed((void *)main));
	long s = 0;
	for (long i = 0; i < 3; i++)
		s += gamma_(i);
	for (long i = 0; i < 2; i++)
		s += beta(i);
	for (long i = 0; i < 2; i++)
		s += alpha(i);
	printf("sum=%ld\n", s);
	return 0;
}
