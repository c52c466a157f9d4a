/*
 * small_threads.c - e2e target for threads on small stacks and many short
 * threads (test e2e.small_thread_stacks).  Four threads are made with
 * stacks of PTHREAD_STACK_MIN (16 KiB), each calls run_leaves(50000), and
 * the first forks a child that calls run_leaves(1000).  Then 500 short
 * threads call leaf() 10 times each; the program prints by how many lines
 * its /proc/self/maps grew between the 100th and the last (0 alone: a
 * profiler that kept a mapping per ended thread would make a long-running
 * server reach vm.max_map_count).  What it prints must not change.
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

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

static long sums[4];

E2E_FN void *small_worker(void *arg)
{
	long k = (long)arg;
	sums[k] = run_leaves(50000);
	if (k == 0) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(run_leaves(1000) == 1499500 ? 0 : 3);
		int status = -1;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			sums[k] = -1;
	}
	return NULL;
}

E2E_FN void *short_worker(void *arg)
{
	(void)arg;
	long s = 0;
	for (int i = 0; i < 10; i++)
		s += leaf(i);
	return (void *)s;
}

static int maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;
	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	pthread_t t[4];
	for (long k = 0; k < 4; k++) {
		int e = pthread_create(&t[k], &attr, small_worker, (void *)k);
		if (e) {
			printf("pthread_create with a %d-byte stack: %s\n", PTHREAD_STACK_MIN, strerror(e));
			return 1;
		}
	}
	for (int k = 0; k < 4; k++)
		pthread_join(t[k], NULL);
	printf("small stacks: %ld %ld %ld %ld\n", sums[0], sums[1], sums[2], sums[3]);
	int before = 0;
	for (int i = 0; i < 500; i++) {
		pthread_t s;
		if (pthread_create(&s, NULL, short_worker, NULL) != 0)
			return 1;
		pthread_join(s, NULL);
		if (i == 99)
			before = maps_lines();
	}
	printf("maps grew by %d lines over 400 threads\n", maps_lines() - before);
	return 0;
}
