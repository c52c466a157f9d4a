/*
 * clone_child.c - e2e target for a child made with clone() without
 * CLONE_VM, on a small stack of its own (test e2e.clone_child): a process
 * as fork makes, but no pthread_atfork handler runs in it (googletest's
 * "threadsafe" death tests do this, then exec).  The child calls
 * child_work 3 times and exits 7; the parent prints what it got.  A
 * second child on such a stack runs "true" through execvp (PATH searched),
 * as googletest's children exec the test program: the exec's wrapper in
 * the runtime runs on that stack too.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long child_work(long x)
{
	return (long)e2e_burn(1000, (uint64_t)x) & 0xff;
}

E2E_FN int child_main(void *arg)
{
	long s = *(long *)arg;
	for (int i = 0; i < 3; i++)
		s += child_work(i) >= 0;
	printf("child sum=%ld\n", s);
	fflush(stdout);
	_exit(7);
}

E2E_FN int exec_main(void *arg)
{
	(void)arg;
	/* the frames googletest's child has on its stack before it execs */
	volatile char frames[3072];
	frames[0] = frames[sizeof(frames) - 1] = 1;
	char *argv[] = {"true", NULL};
	execvp("true", argv);
	_exit(127 + frames[0] - 1);
}

int main(void)
{
	size_t size = 2 * (size_t)getpagesize(); /* as small as googletest's */
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	long arg = 40;
	pid_t pid = clone(child_main, stack + size, SIGCHLD, &arg);
	if (pid < 0)
		return 1;
	int status = 0;
	waitpid(pid, &status, 0);
	printf("child %s %d\n", WIFEXITED(status) ? "exited" : "killed by signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	fflush(stdout);
	pid = clone(exec_main, stack + size, SIGCHLD, NULL);
	if (pid < 0)
		return 1;
	waitpid(pid, &status, 0);
	printf("exec child %s %d\n", WIFEXITED(status) ? "exited" : "killed by signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}
