/*
 * crash_abort.c - e2e target: dies of abort() (SIGABRT) after known calls
 * (test e2e.crash_abort).  step is called 4 times, then give_up once,
 * which computes for a few ms (no probe fires meanwhile) and calls abort().
 */
#include <stdlib.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void step(void) { sink += e2e_burn(5000, 1); }

E2E_FN void give_up(void)
{
	sink += e2e_burn(2000000, 2); /* a few ms of pure CPU, no event */
	abort();
}

int main(void)
{
	for (int i = 0; i < 4; i++)
		step();
	give_up();
	return 0;
}
