/*
 * crash_segv.c - e2e target: dies of SIGSEGV after known calls
 * (test e2e.crash_sigsegv).  before_crash is called 7 times, then
 * crash_here once, which computes for a few ms (no probe fires meanwhile)
 * and then writes through a null pointer.
 */
#include <stddef.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void before_crash(void) { sink += e2e_burn(5000, 1); }

E2E_FN void crash_here(void)
{
	volatile int *volatile p = NULL;
	sink += e2e_burn(2000000, 2); /* a few ms of pure CPU, no event */
	*p = 1;
}

int main(void)
{
	for (int i = 0; i < 7; i++)
		before_crash();
	crash_here();
	return 0;
}
