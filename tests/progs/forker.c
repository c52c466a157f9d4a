/*
 * forker.c - e2e target: fork without exec (test e2e.fork_children).
 *
 * Before the fork the process calls before_fork 2 times.  The child calls
 * child_main once, which calls child_work 30 times, and exits with 5.  The
 * parent calls parent_work 20 times, waits for the child and exits 0 if the
 * child's status was 5 (1 otherwise).
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void before_fork(void) { sink += e2e_burn(5000, 1); }
E2E_FN void child_work(void) { sink += e2e_burn(5000, 2); }
E2E_FN void parent_work(void) { sink += e2e_burn(5000, 3); }

E2E_FN int child_main(void)
{
	for (int i = 0; i < 30; i++)
		child_work();
	return 5;
}

int main(void)
{
	for (int i = 0; i < 2; i++)
		before_fork();
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		exit(child_main());
	for (int i = 0; i < 20; i++)
		parent_work();
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 3;
	return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 1;
}
