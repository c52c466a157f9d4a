/*
 * own_mmap.c - e2e target (test e2e.program_defines_mmap): a program
 * linked with own_mmap_lib.c's mmap, patched at load.  It died of SIGSEGV
 * before main under stint: the runtime's mmap call, made while patching,
 * reached the library's half-patched mmap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
extern long mmap_calls; /* own_mmap_lib.c: every call of its mmap, the runtime's too */
__attribute__((noinline)) long work(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ (s >> 3); return s; }
int main(void) { void *p = mmap(0, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); long s = 0; for (int i = 0; i < 100; i++) s += work(1000 + i); printf("%ld %d mmap calls %ld\n", s, p != MAP_FAILED, mmap_calls); return 0; }
