/*
 * reload_b.c - libe2e_reload_b.so, loaded by reload_host.c after
 * libe2e_reload_a.so was unloaded: b_entry calls b_step 5 times.
 */
#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void b_step(void) { sink += e2e_burn(3000, 1); }

E2E_FN void b_entry(void)
{
	for (int i = 0; i < 5; i++)
		b_step();
}
