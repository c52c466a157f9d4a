/*
 * clock_off.c - e2e target: a thread that turns its time-stamp counter off
 * (test e2e.clock_turned_off).  "strict": seccomp's strict mode (which also
 * allows only read, write and _exit); "tsc": prctl(PR_SET_TSC,
 * PR_TSC_SIGSEGV), then a thread and a forked child, which inherit it.
 * Either way before_off runs twice before, after_off 20 times after, and
 * the program prints what it computed: under stint, the same output and
 * exit status (a probe's clock read killed it with SIGSEGV), before_off's
 * calls recorded.
 */
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile long sink;

E2E_FN long before_off(long i) { return (long)e2e_burn(200, (uint64_t)i) & 0xf; }
E2E_FN long after_off(long i) { return (long)e2e_burn(200, (uint64_t)i + 7) & 0xf; }

static void *thread_main(void *arg)
{
	long s = 0;
	for (long i = 0; i < 20; i++)
		s += after_off(i);
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	long s = before_off(1) + before_off(2);
	if (argc > 1 && strcmp(argv[1], "strict") == 0) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
			return 2;
		for (long i = 0; i < 20; i++)
			s += after_off(i);
		char line[32];
		int n = snprintf(line, sizeof(line), "strict %ld\n", s);
		if (write(1, line, (size_t)n) != n)
			syscall(SYS_exit, 3);
		syscall(SYS_exit, 0);
	}
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
		return 2;
	for (long i = 0; i < 20; i++)
		s += after_off(i);
	long t = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, thread_main, &t) != 0 || pthread_join(th, NULL) != 0)
		return 4;
	pid_t pid = fork();
	if (pid == 0)
		_exit((int)(after_off(3) & 0x7f));
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 5;
	printf("tsc %ld %ld %d\n", s, t, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
