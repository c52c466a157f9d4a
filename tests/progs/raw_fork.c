/*
 * raw_fork.c - e2e target for processes made by raw system calls through
 * syscall(): SYS_fork, SYS_clone with SIGCHLD only, and SYS_clone3 without
 * CLONE_VM (test e2e.raw_fork_child).  No pthread_atfork handler runs in
 * these children.  Each child calls child_work 3 times and exits 7; the
 * parent prints what each child got.  A kernel without clone3 (ENOSYS)
 * prints "clone3 unavailable" instead of its line.  With argv[1] "spin"
 * each child_work call burns ~30 ms of CPU (for the samplers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static uint64_t burn_iters = 1000;

E2E_FN long child_work(long x)
{
	return (long)e2e_burn(burn_iters, (uint64_t)x) & 0xff;
}

E2E_FN void child_main(const char *how)
{
	long s = 0;
	for (int i = 0; i < 3; i++)
		s += child_work(i) >= 0;
	printf("%s child sum=%ld\n", how, s);
	fflush(stdout);
	_exit(7);
}

E2E_FN long make_child(int how)
{
	if (how == 0)
		return syscall(SYS_fork);
	if (how == 1)
		return syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
#ifdef SYS_clone3
	struct clone_args args;
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	return syscall(SYS_clone3, &args, sizeof(args));
#else
	errno = ENOSYS;
	return -1;
#endif
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "spin") == 0)
		burn_iters = 30000000;
	static const char *const names[] = {"fork", "clone", "clone3"};
	for (int how = 0; how < 3; how++) {
		fflush(stdout); /* or the child's copy of the buffer is printed twice */
		long pid = make_child(how);
		if (pid == 0)
			child_main(names[how]);
		if (pid < 0) {
			if (how == 2 && (errno == ENOSYS || errno == EPERM)) {
				printf("clone3 unavailable\n");
				continue;
			}
			return 1;
		}
		int status = 0;
		waitpid((pid_t)pid, &status, 0);
		printf("%s child %s %d\n", names[how], WIFEXITED(status) ? "exited" : "killed by signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	return 0;
}
