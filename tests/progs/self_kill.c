/*
 * self_kill.c - e2e target: sends itself SIGKILL after known calls
 * (test e2e.self_sigkill).  tick is called 1000 times, then die_now once,
 * which raises SIGKILL: nothing in the process gets to run afterwards.
 */
#include <signal.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void tick(void) { sink += e2e_burn(2000, 1); }

E2E_FN void die_now(void) { raise(SIGKILL); }

int main(void)
{
	for (int i = 0; i < 1000; i++)
		tick();
	die_now();
	return 0;
}
