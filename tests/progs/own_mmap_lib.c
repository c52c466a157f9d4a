/*
 * own_mmap_lib.c - a library that defines mmap and munmap, as gperftools'
 * tcmalloc does (test e2e.program_defines_mmap): linked before the C
 * library, its definitions are the ones every call by name reaches,
 * stint's runtime's included, one of them while the runtime patched it.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
long mmap_calls;
void *mmap(void *a, size_t l, int p, int f, int fd, off_t o) { mmap_calls++; return (void *)syscall(SYS_mmap, a, l, p, f, fd, o); }
int munmap(void *a, size_t l) { return (int)syscall(SYS_munmap, a, l); }
void *mmap64(void *a, size_t l, int p, int f, int fd, off_t o) __attribute__((alias("mmap")));
