/*
 * vfork_exec.c - e2e target: vfork, then exec another instrumented program
 * (test e2e.vfork_exec).  Usage: e2e_vfork_exec PATH-OF-e2e_exec_target
 *
 * The parent calls launcher_step 3 times and vforks; the child calls
 * child_before_exec once and execs the target (which calls
 * exec_target_work 40 times); the parent, once resumed, waits for it and
 * calls after_wait once.  Exits 0 if the target exited 0.  The child's
 * calls belong to a process entry of its own, not to the parent's thread.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void launcher_step(void) { sink += e2e_burn(5000, 1); }
E2E_FN void child_before_exec(void) { sink += e2e_burn(5000, 2); }
E2E_FN void after_wait(void) { sink += e2e_burn(5000, 3); }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: e2e_vfork_exec PATH-OF-e2e_exec_target\n");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		launcher_step();
	pid_t pid = vfork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		child_before_exec();
		execl(argv[1], argv[1], "40", (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 3;
	after_wait();
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
