/*
 * s_text_again.c - sampling e2e target (test sample.code_mapped_twice):
 * maps the page of its own file that holds spin_again a second time, away
 * from its text (as V8 maps node's embedded builtins again), and runs the
 * function only there.  Its samples must be named spin_again, as perf
 * names them, not one bare address each.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "s_sample.h"

S_FN uint64_t spin_again(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s = s * 31 + (i ^ (s >> 7));
	return s;
}

static uintptr_t text_lo, text_off;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (info->dlpi_name[0])
		return 0; /* the program only */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			text_lo = info->dlpi_addr + (p->p_vaddr & ~(uintptr_t)0xfff);
			text_off = p->p_offset & ~(uintptr_t)0xfff;
		}
	}
	return 1;
}

int main(void)
{
	dl_iterate_phdr(find_text, NULL);
	int fd = open("/proc/self/exe", O_RDONLY);
	uintptr_t page = ((uintptr_t)spin_again - text_lo) & ~(uintptr_t)0xfff;
	void *again = fd < 0 ? MAP_FAILED
			     : mmap(NULL, 0x2000, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)(text_off + page));
	if (again == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	uint64_t (*f)(uint64_t) = (uint64_t (*)(uint64_t))((uintptr_t)again + ((uintptr_t)spin_again - text_lo - page));
	printf("%llu\n", (unsigned long long)f(s_iters(6)));
	return 0;
}
