/*
 * s_strict.c - sampling e2e target (test sample.inproc_seccomp_strict):
 * burns CPU, then enters seccomp's strict mode (only read, write, exit
 * and sigreturn from then on: prctl, or seccomp(2) with argv[1] "syscall",
 * after the failing check libseccomp makes), burns CPU again, writes its
 * result with write() and leaves with the exit system call.  The
 * in-process sampler's handler made system calls there, and the kernel
 * killed the program (SIGKILL).
 */
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN static void before_strict(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink * S_MUL + S_ADD;
}

S_FN static void in_strict(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink * S_MUL + S_ADD;
}

int main(int argc, char **argv)
{
	uint64_t n = s_iters(4);
	before_strict(n);
	int via_syscall = argc > 1 && strcmp(argv[1], "syscall") == 0;
	if (via_syscall && syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) == 0)
		return 1; /* (refused: EINVAL) */
	if (via_syscall ? syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) != 0
			: prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
		puts("no strict mode here");
		return 0;
	}
	in_strict(n);
	static const char done[] = "done in strict mode\n";
	if (write(1, done, sizeof(done) - 1) < 0)
		sink++;
	syscall(SYS_exit, 0);
	return 0;
}
