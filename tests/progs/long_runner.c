/*
 * long_runner.c - e2e target: makes calls until told to stop
 * (test e2e.recorder_killed_program_runs_on).
 *
 *   long_runner STOPFILE DONEFILE
 *
 * Calls round_step in rounds of 20000 calls until STOPFILE exists, then
 * writes "rounds N" to DONEFILE and exits 0.  If the profiler disturbed it
 * once its recorder was killed, DONEFILE would never appear.
 */
#include <stdio.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void round_step(void) { sink += e2e_burn(2, 9); }

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	unsigned long rounds = 0;
	while (access(argv[1], F_OK) != 0) {
		for (int i = 0; i < 20000; i++)
			round_step();
		rounds++;
	}
	FILE *f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "rounds %lu\n", rounds);
	return fclose(f) == 0 ? 0 : 1;
}
