/*
 * s_syscalls.c - sampling e2e target for kernel time under the in-process
 * sampler (test sample.inproc_system_time).
 *
 * user_burn computes 2 parts of CPU in user mode; then sys_burn reads
 * /dev/zero 1 MiB at a time (N reads, argument 1; default 6000), time
 * that is nearly all the kernel's (clearing the buffer).  CPU-time timers
 * count both: the samples taken in the read system calls must not be
 * charged to user code (as perf without --kernel takes none there).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

S_FN uint64_t user_burn(uint64_t n)
{
	volatile uint64_t x = 1;
	for (uint64_t i = 0; i < n; i++)
		x = x * S_MUL + S_ADD;
	return x;
}

S_FN int sys_burn(int reads)
{
	int fd = open("/dev/zero", O_RDONLY);
	static char buf[1 << 20];
	if (fd < 0)
		return 1;
	for (int i = 0; i < reads; i++)
		if (read(fd, buf, sizeof(buf)) <= 0)
			break;
	close(fd);
	return buf[12345];
}

int main(int argc, char **argv)
{
	int reads = argc > 1 ? atoi(argv[1]) : 6000;
	sink = user_burn(s_iters(2.0));
	int r = sys_burn(reads);
	printf("syscalls done\n");
	return r;
}
