/*
 * spawn_env.c - e2e target: starts env_child (argv[1]) seven ways, each
 * with an environment that lacks the profiler's variables
 * (test e2e.children_with_own_environment):
 *
 *   posix_spawn, posix_spawnp, execve, execle, execvpe (envp of their own;
 *   execve's keeps an LD_PRELOAD entry of the program's), fexecve, and
 *   execv after clearenv().
 *
 * launch_step is called once per child.  Exits 0 when every child exited
 * 0 (env_child checks its own environment), else 1.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void launch_step(void) { sink += e2e_burn(1000, 13); }

static E2E_NOINSTR int child_status(pid_t pid, const char *how)
{
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "spawn_env: the %s child failed (status %d)\n", how, st);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *child = argv[1];
	char *cargv[] = {(char *)child, NULL};
	int bad = 0;
	pid_t pid;

	launch_step();
	char *env1[] = {"E2E_MARK=posix_spawn", NULL};
	bad |= posix_spawn(&pid, child, NULL, NULL, cargv, env1) != 0 || child_status(pid, "posix_spawn");

	launch_step();
	char *env2[] = {"E2E_MARK=posix_spawnp", NULL};
	bad |= posix_spawnp(&pid, child, NULL, NULL, cargv, env2) != 0 || child_status(pid, "posix_spawnp");

	launch_step();
	char *env3[] = {"E2E_MARK=execve", "LD_PRELOAD=libm.so.6", "E2E_PRELOAD_ALSO=libm.so.6", NULL};
	if ((pid = fork()) == 0) {
		execve(child, cargv, env3);
		_exit(127);
	}
	bad |= child_status(pid, "execve");

	launch_step();
	char *env4[] = {"E2E_MARK=execle", NULL};
	if ((pid = fork()) == 0) {
		execle(child, child, (char *)NULL, env4);
		_exit(127);
	}
	bad |= child_status(pid, "execle");

	launch_step();
	char *env5[] = {"E2E_MARK=execvpe", NULL};
	if ((pid = fork()) == 0) {
		execvpe(child, cargv, env5);
		_exit(127);
	}
	bad |= child_status(pid, "execvpe");

	launch_step();
	char *env6[] = {"E2E_MARK=fexecve", NULL};
	int fd = open(child, O_RDONLY | O_CLOEXEC);
	if ((pid = fork()) == 0) {
		fexecve(fd, cargv, env6);
		_exit(127);
	}
	close(fd);
	bad |= child_status(pid, "fexecve");

	launch_step();
	if ((pid = fork()) == 0) {
		clearenv();
		setenv("E2E_MARK", "clearenv+execv", 1);
		execv(child, cargv);
		_exit(127);
	}
	bad |= child_status(pid, "clearenv+execv");
	return bad ? 1 : 0;
}
