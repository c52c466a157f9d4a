/*
 * seccomp_sandbox.c - e2e target for a program that shuts itself in a
 * seccomp sandbox (test e2e.seccomp_sandbox): a filter that kills the
 * process (SIGSYS) at any of the system calls a profiler's runtime would
 * make to open or grow its files, installed with prctl (argv[1]
 * "prctl") or with seccomp(2) through syscall() ("syscall"), as libseccomp
 * does, after the call by which libseccomp's seccomp_init() checks that
 * seccomp(2) exists (strict mode with a flag: refused, nothing restricted).
 * Then main calls work 1000000 times and one thread started inside the
 * sandbox 1000 times; it prints the sum.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long work(long x)
{
	return (long)(e2e_burn(10, (uint64_t)x) & 1);
}

E2E_FN void *worker(void *arg)
{
	long s = 0;
	for (long i = 0; i < (arg ? 1000000 : 1000); i++)
		s += work(i);
	return (void *)s;
}

#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_openat), DENY(SYS_open), DENY(SYS_perf_event_open), DENY(SYS_prlimit64),
		DENY(SYS_kill), DENY(SYS_fallocate), DENY(SYS_ftruncate), DENY(SYS_mremap),
		DENY(SYS_getrusage),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	int via_syscall = argc > 1 && strcmp(argv[1], "syscall") == 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 1;
	if (via_syscall && syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) == 0)
		return 1; /* (refused: EINVAL) */
	if (via_syscall ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0
			: prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		printf("no seccomp here\n");
		return 0;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	long s = (long)worker((void *)1);
	void *ts;
	pthread_join(t, &ts);
	printf("sum %ld\n", s + (long)ts);
	return 0;
}
