/*
 * s_retitle.c - sampling e2e target (test sample.process_titles in
 * tests/e2e/run_sample.py): a forked worker that writes its title over its
 * arguments, as nginx's workers do (ps shows "s_retitle: worker"), and a
 * child that execs sh -c with a loop.  Each burns CPU, so each has samples
 * and is a process of the report, named by its command line as ps shows
 * it, not by its comm.  argv[1] gives the room the title needs.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN static void burn(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink * S_MUL + S_ADD;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strlen(argv[1]) < 20) {
		fprintf(stderr, "usage: s_retitle PADDING (20 characters or more)\n");
		return 2;
	}
	pid_t worker = fork();
	if (worker == 0) {
		size_t room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
		memset(argv[0], 0, room);
		snprintf(argv[0], room, "s_retitle: worker");
		burn(s_iters(6));
		return 0;
	}
	burn(s_iters(2));
	waitpid(worker, NULL, 0);
	pid_t shell = fork();
	if (shell == 0) {
		execlp("sh", "sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done", (char *)NULL);
		_exit(127);
	}
	waitpid(shell, NULL, 0);
	puts("done");
	return 0;
}
