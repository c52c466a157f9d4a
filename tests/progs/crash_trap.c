/*
 * crash_trap.c - e2e target: dies of a trap that returns past its
 * instruction (tests e2e.crash_int3_and_sigsys, sample.inproc_crash_int3).
 *
 *   crash_trap int3    before_trap x5, then trap_here: int3 (SIGTRAP, 133)
 *   crash_trap sigsys  before_trap x5, then trap_here: a system call a
 *                      seccomp filter answers with SIGSYS (159)
 *   crash_trap ill     ... ud2 (SIGILL, 132)
 *   crash_trap fpe     ... an integer division by zero (SIGFPE, 136)
 *   crash_trap int3-blocked  int3 with SIGTRAP blocked (the kernel forces it: 133)
 *
 * Without a debugger both kill the program; if a handler of the profiler
 * returned instead, the program would print "survived" and exit 0.
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
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

E2E_FN void trap_here(const char *mode)
{
	if (strcmp(mode, "sigsys") == 0)
		syscall(__NR_getpriority, 0, 0);
	else if (strcmp(mode, "ill") == 0)
		__asm__ volatile("ud2");
	else if (strcmp(mode, "fpe") == 0) /* (GCC turns 1 / x into a compare) */
		__asm__ volatile("xorl %%ecx, %%ecx\n\tmovl $1, %%eax\n\tcltd\n\tidivl %%ecx"
				 ::: "eax", "ecx", "edx");
	else
		__asm__ volatile("int3");
	sink++;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "int3";
	if (strcmp(mode, "sigsys") == 0 && trap_getpriority() < 0) {
		perror("seccomp");
		return 2;
	}
	if (strcmp(mode, "int3-blocked") == 0) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGTRAP);
		sigprocmask(SIG_BLOCK, &s, NULL);
	}
	for (int i = 0; i < 5; i++)
		before_trap();
	trap_here(mode);
	printf("survived %s\n", mode);
	return 0;
}
