/*
 * reload_a.c - libe2e_reload_a.so, loaded and unloaded by reload_host.c:
 * a_entry calls a_step 3 times.  Laid out like reload_b.c, so that b_entry
 * lands where a_entry was.
 */
#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void a_step(void) { sink += e2e_burn(3000, 1); }

E2E_FN void a_entry(void)
{
	for (int i = 0; i < 3; i++)
		a_step();
}
