/*
 * retitle.c - e2e target (test e2e.process_title_kept): a daemon's way
 * with its title.  The parent forks a worker, which writes "retitle:
 * worker" over its arguments (setproctitle, as nginx does: the rest
 * padded with NULs), works, and exits; ps shows it by that title, and so
 * must the report.  Run with a long argument to make room.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long worker_step(long i)
{
	return (long)e2e_burn(50, (uint64_t)i) & 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char *lo = argv[0], *hi = argv[argc - 1] + strlen(argv[argc - 1]);
	pid_t pid = fork();
	if (pid == 0) {
		static const char title[] = "retitle: worker";
		if ((size_t)(hi - lo) < sizeof(title))
			return 3;
		memset(lo, 0, (size_t)(hi - lo));
		memcpy(lo, title, sizeof(title) - 1);
		long s = 0;
		for (long i = 0; i < 10; i++)
			s += worker_step(i);
		return (int)(s & 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("worker %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
