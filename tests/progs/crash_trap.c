/*
 * crash_trap.c - e2e target: dies of a trap that returns past its
 * instruction (tests e2e.crash_int3_and_sigsys, sample.inproc_crash_int3).
 *
 *   crash_trap int3    before_trap x5, then trap_here: int3 (SIGTRAP, 133)
 *   crash_trap sigsys  before_trap x5, then trap_here: a system call a
 *                      seccomp filter answers with SIGSYS (159)
 *
 * Without a debugger both kill the program; if a handler of the profiler
 * returned instead, the program would print "survived" and exit 0.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void before_trap(void) { sink += e2e_burn(5000, 1); }

/* SIGSYS for getpriority, everything else allowed */
static E2E_NOINSTR int trap_getpriority(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpriority, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

E2E_FN void trap_here(int sys)
{
	if (sys)
		syscall(__NR_getpriority, 0, 0);
	else
		__asm__ volatile("int3");
	sink++;
}

int main(int argc, char **argv)
{
	int sys = argc > 1 && strcmp(argv[1], "sigsys") == 0;
	if (sys && trap_getpriority() < 0) {
		perror("seccomp");
		return 2;
	}
	for (int i = 0; i < 5; i++)
		before_trap();
	trap_here(sys);
	printf("survived %s\n", sys ? "sigsys" : "int3");
	return 0;
}
