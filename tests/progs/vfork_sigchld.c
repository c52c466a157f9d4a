/*
 * vfork_sigchld.c - e2e target (test e2e.vfork_sigchld_handler): vfork in a
 * loop, each child calls a function and _exits, and a SIGCHLD handler
 * calls the program's functions as the children end, as gdb's does around
 * its vfork + exec of the program it debugs.  Prints a sum that depends on
 * every call of the parent's, and how many children ran.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN int scale(int x, int k)
{
	return x * k + 1;
}

E2E_FN int child_setup(int x)
{
	return scale(x, 2) + scale(x, 3);
}

E2E_FN int parent_after(int x)
{
	return scale(x, 5) + scale(x, 7);
}

static volatile int handled;

E2E_FN void on_child_end(int sig)
{
	handled += scale(sig, 1) > 0;
}

/* the child never returns from here (vfork's rule), the parent does */
static pid_t spawn(int i)
{
	pid_t p = vfork();
	if (p == 0) {
		child_setup(i);
		_exit(0);
	}
	return p;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_child_end;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	int n = argc > 1 ? atoi(argv[1]) : 1, sum = 0, ran = 0;
	for (int i = 0; i < n; i++) {
		pid_t p = spawn(i);
		sum += parent_after(i);
		int st = 0;
		if (waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ran++;
	}
	printf("%d %d\n", sum, ran);
	return 0;
}
