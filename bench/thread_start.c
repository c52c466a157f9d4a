/*
 * thread_start.c - the work of bench-threads.sh: start THREADS threads (2,000
 * by default) one after the other, each making one call and waiting at a
 * barrier until all are started, then join them.  Prints the seconds the
 * starting took (CLOCK_MONOTONIC): what a program that makes many threads at
 * once pays for each thread's recording to begin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t all_started;

__attribute__((noinline)) int thread_work(int x)
{
	return x * 2;
}

static void *thread_body(void *arg)
{
	thread_work((int)(long)arg);
	pthread_barrier_wait(&all_started);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	if (n < 1 || n > 100000)
		return 2;
	pthread_t *t = malloc((size_t)n * sizeof(*t));
	if (!t)
		return 1;
	pthread_barrier_init(&all_started, NULL, (unsigned)n + 1);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_body, (void *)(long)i) != 0)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_barrier_wait(&all_started);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	free(t);
	return 0;
}
