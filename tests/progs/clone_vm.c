/*
 * clone_vm.c - e2e target for a child made with clone(CLONE_VM) without
 * CLONE_SETTLS (test e2e.clone_shared_tls): it runs on the parent's memory
 * with the parent's thread pointer, so it sees the parent's thread-local
 * variables.  argv[1] "concurrent": the child (CLONE_VM | SIGCHLD) and the
 * parent call leaf() at the same time; "vfork": CLONE_VM | CLONE_VFORK,
 * the parent waits until the child has exited.  The parent calls before()
 * first, after() last; both print their sums, which the profiler must not
 * change.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

#define CHILD_STACK (256 << 10)

E2E_FN long leaf(long x)
{
	return x * 3 + 1;
}

E2E_FN long run_leaves(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += leaf(i);
	return s;
}

E2E_FN long before(void)
{
	return run_leaves(100000);
}

E2E_FN long after(void)
{
	return run_leaves(200000);
}

static volatile long child_sum;

E2E_FN int child_main(void *arg)
{
	child_sum = run_leaves((long)arg);
	return 0;
}

int main(int argc, char **argv)
{
	int vfork = argc > 1 && strcmp(argv[1], "vfork") == 0;
	char *stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	long b = before();
	int flags = CLONE_VM | SIGCHLD | (vfork ? CLONE_VFORK : 0);
	int pid = clone(child_main, stack + CHILD_STACK, flags, (void *)2000000L);
	if (pid < 0) {
		perror("clone");
		return 1;
	}
	long a = after();
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("child failed: status %d\n", status);
		return 1;
	}
	printf("before %ld after %ld child %ld\n", b, a, child_sum);
	return 0;
}
