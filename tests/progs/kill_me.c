/*
 * kill_me.c - e2e target: loops calling tick() until the test SIGKILLs it
 * (test e2e.killed_externally).  Usage: e2e_kill_me COUNTER-FILE
 *
 * COUNTER-FILE (16 bytes, mapped shared) receives the pid in its first 8
 * bytes and, in the next 8, how many times tick has started: tick
 * increments it first thing, so after the kill the number of recorded calls
 * of tick is the counter or the counter + 1 (killed between the entry probe
 * and the increment).  Safety net: it exits 3 by itself after 60 s.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t *shared; /* [0] pid, [1] ticks started */
static volatile uint64_t sink;

E2E_FN void tick(void)
{
	shared[1] = shared[1] + 1;
	sink += e2e_burn(3000, 1);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 16) < 0)
		return 2;
	shared = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (shared == MAP_FAILED)
		return 2;
	time_t start = time(NULL);
	tick();
	shared[0] = (uint64_t)getpid(); /* ready: the test may kill from now on */
	for (;;) {
		for (int i = 0; i < 1000; i++)
			tick();
		if (time(NULL) - start > 60)
			return 3;
	}
}
