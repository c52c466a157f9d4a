/*
 * s_fork.c - sampling e2e target (test sample.fork_child).
 *
 * The parent forks; the child burns 3 parts of CPU in child_work and
 * exits; the parent burns 1 part in parent_work, then waits.  The parent
 * prints "child PID" on stdout so that the test knows which process row
 * is the child's.  About 0.6 s of CPU in all.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t child_work(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

S_FN uint64_t parent_work(uint64_t n)
{
	volatile uint64_t x = 7;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

int main(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		sink = child_work(s_iters(7.5));
		_exit(0);
	}
	printf("child %d\n", (int)pid);
	fflush(stdout);
	sink = parent_work(s_iters(2.5));
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 2;
	return 0;
}
