/*
 * s_forkmap.c - sampling e2e target (test sample.fork_child_maps_files):
 * a forked child (no exec) maps a file twice, as PostgreSQL's parallel
 * workers map their shared memory segments; parent and child burn CPU.
 * The recorder once wrote past its copy of the parent's mapping history
 * for the child, and died with the recording.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN static void child_work(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink * S_MUL + S_ADD;
}

S_FN static void parent_work(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink = sink * S_MUL + S_ADD;
}

int main(void)
{
	char path[] = "/tmp/s_forkmap.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 64 * 4096) < 0) {
		perror("s_forkmap: temporary file");
		return 1;
	}
	unlink(path);
	pid_t c = fork();
	if (c == 0) {
		char *a = mmap(NULL, 12 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		char *b = mmap(NULL, 7 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (a == MAP_FAILED || b == MAP_FAILED)
			_exit(1);
		a[0] = b[0] = 1;
		child_work(s_iters(4));
		_exit(0);
	}
	parent_work(s_iters(4));
	int st = 0;
	waitpid(c, &st, 0);
	puts(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "done" : "child failed");
	return 0;
}
