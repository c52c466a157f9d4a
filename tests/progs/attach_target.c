/*
 * attach_target.c - e2e target of attaching instrumentation to a running
 * process (stint record -p PID; tests e2e.attach_*).
 *
 *   attach_target READYFILE STOPFILE
 *
 * Two worker threads and main compute rounds of deterministic work
 * (round_value: a little recursion and arithmetic through instrumented
 * functions).  After each thread's first 50 rounds main writes READYFILE;
 * every round's value is checked against the value of the same round
 * number modulo 50 computed before, so that any disturbance of the
 * program's computation shows as an error.  When STOPFILE exists the
 * threads stop; main prints "checksum C errors E" (C over the first 50
 * rounds of each thread: the same in every run) and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile int ready[3];
static const char *stopfile;
static uint64_t first[3][50];
static unsigned long errors[3];

E2E_FN uint64_t mix(uint64_t x)
{
	return e2e_burn(20, x) ^ (x >> 3);
}

E2E_FN uint64_t walk(uint64_t x, int depth)
{
	return depth ? walk(mix(x), depth - 1) + 1 : mix(x);
}

E2E_FN uint64_t round_value(int id, unsigned r)
{
	uint64_t v = (uint64_t)id * 1000003u + r % 50;
	for (int i = 0; i < 20; i++)
		v = walk(v, 4);
	return v;
}

E2E_FN void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	for (unsigned r = 0;; r++) {
		uint64_t v = round_value(id, r);
		if (r < 50) {
			first[id][r] = v;
		} else {
			if (v != first[id][r % 50])
				errors[id]++;
			ready[id] = 1;
			if ((r & 15) == 0 && access(stopfile, F_OK) == 0)
				break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	stopfile = argv[2];
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(i + 1));
	int written = 0;
	for (unsigned r = 0;; r++) {
		uint64_t v = round_value(0, r);
		if (r < 50) {
			first[0][r] = v;
			continue;
		}
		if (v != first[0][r % 50])
			errors[0]++;
		if (!written && ready[1] && ready[2]) {
			FILE *f = fopen(argv[1], "w");
			if (f)
				fclose(f);
			written = 1;
		}
		if ((r & 15) == 0 && access(stopfile, F_OK) == 0)
			break;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	uint64_t c = 0;
	for (int i = 0; i < 3; i++)
		for (int r = 0; r < 50; r++)
			c = c * 31 + first[i][r];
	printf("checksum %llu errors %lu\n", (unsigned long long)c, errors[0] + errors[1] + errors[2]);
	return 0;
}
