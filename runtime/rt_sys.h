/*
 * rt_sys.h - the runtime's memory mappings by system call, never through
 * the C library's names: a program's allocator may define its own mmap,
 * munmap, mremap (gperftools' tcmalloc does), which the runtime's calls
 * then reached, one of them in the middle of being patched (SIGSEGV before
 * main), and a program counting its own calls counted the runtime's.  The
 * runtime calls nothing of the program's.  Every runtime file includes it
 * (through rt_int.h, rt_elf.h, rt_file.h, rt_fork.h) after its system
 * headers.
 */
#ifndef STINT_RT_SYS_H
#define STINT_RT_SYS_H

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include "../arch/arch.h"

static inline long rt_sys_result(long r)
{
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static inline void *rt_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = rt_sys_result(arch_syscall6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, (long)off));
	return r == -1 ? MAP_FAILED : (void *)r;
}

static inline int rt_sys_munmap(void *addr, size_t len)
{
	return (int)rt_sys_result(arch_syscall6(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0));
}

static inline int rt_sys_mprotect(void *addr, size_t len, int prot)
{
	return (int)rt_sys_result(arch_syscall6(SYS_mprotect, (long)addr, (long)len, prot, 0, 0, 0));
}

static inline void *rt_sys_mremap(void *old, size_t old_len, size_t len, int flags)
{
	long r = rt_sys_result(arch_syscall6(SYS_mremap, (long)old, (long)old_len, (long)len, flags, 0, 0));
	return r == -1 ? MAP_FAILED : (void *)r;
}

static inline int rt_sys_madvise(void *addr, size_t len, int advice)
{
	return (int)rt_sys_result(arch_syscall6(SYS_madvise, (long)addr, (long)len, advice, 0, 0, 0));
}

#define mmap rt_sys_mmap
#define munmap rt_sys_munmap
#define mprotect rt_sys_mprotect
#define mremap rt_sys_mremap
#define madvise rt_sys_madvise

#endif
