/*
 * demo.c - the program the README profiles: some computing, some sleeping,
 * some library calls, two threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static void nap(void)
{
	usleep(20000);
}

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void sort_numbers(void)
{
	enum { N = 20000 };
	int *v = malloc(N * sizeof(*v));
	for (int i = 0; i < N; i++)
		v[i] = rand();
	qsort(v, N, sizeof(*v), cmp);
	free(v);
}

static void *worker(void *arg)
{
	(void)arg;
	long s = 0;
	for (int i = 0; i < 3; i++)
		s += fib(18);
	return (void *)s;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	long r = fib(22);
	nap();
	sort_numbers();
	void *w;
	pthread_join(t, &w);
	printf("fib(22) = %ld, worker %ld\n", r, (long)w);
	return 0;
}
