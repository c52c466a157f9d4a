/*
 * fd_exhaust.c - e2e target for a program that uses up its file
 * descriptors (test e2e.descriptors_used_up): it lowers RLIMIT_NOFILE to
 * 24 (argv[1] "hard": the hard limit too), opens /dev/null until EMFILE,
 * then starts 2 threads; each thread and main call work 100000 times.  It
 * prints how many descriptors it got, which must not change under stint.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "e2e_prog.h"

E2E_FN long work(long x)
{
	return (long)(e2e_burn(20, (uint64_t)x) & 1);
}

E2E_FN void *worker(void *arg)
{
	long s = 0;
	for (long i = 0; i < 100000; i++)
		s += work(i);
	return arg ? (void *)s : NULL;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	rl.rlim_cur = 24;
	if (argc > 1 && strcmp(argv[1], "hard") == 0)
		rl.rlim_max = 24;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	int n = 0;
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	worker(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("opened %d descriptors\n", n);
	return 0;
}
