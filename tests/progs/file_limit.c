/*
 * file_limit.c - e2e target: a program that lowers its own file size limit
 * (RLIMIT_FSIZE, as `ulimit -f` does) to argv[2] bytes, then calls
 * limited_work argv[1] times, in a thread 1000 times and in a forked child
 * once (test e2e.file_size_limit).  Growing a file past the limit raises
 * SIGXFSZ, which ends a program: under stint it must print the same, the
 * recording's files stopping short of the limit instead.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile long sink;

E2E_FN void limited_work(void) { sink++; }

static void *thread_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		limited_work();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	long n = atol(argv[1]);
	struct rlimit rl = {.rlim_cur = (rlim_t)atol(argv[2]), .rlim_max = (rlim_t)atol(argv[2])};
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 3;
	for (long i = 0; i < n; i++)
		limited_work();
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 4;
	pid_t pid = fork();
	if (pid == 0) {
		limited_work();
		_exit(7);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 5;
	printf("limit %ld %ld %d\n", n, (long)sink, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
