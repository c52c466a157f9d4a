/*
 * deep_exit.c - e2e target: leaves the process from deep inside the call
 * stack (tests e2e.exit_from_deep and e2e.underscore_exit_from_deep).
 * Usage: e2e_deep_exit exit|_exit
 *
 * main registers at_exit_handler with atexit, calls descend(8): descend is
 * called 8 times; at the bottom bottom_work (about 5 ms of CPU) is called
 * once, then the process leaves with exit(3), which runs at_exit_handler
 * (about 2 ms) with the 8 descend frames still open, or with _exit(4),
 * which runs nothing.  All those open frames must be closed by the report.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_prog.h"

static int use_underscore_exit;

E2E_FN void at_exit_handler(void) { e2e_spin_ms(2); }

E2E_FN void bottom_work(void) { e2e_spin_ms(5); }

/* not instrumented; noipa hides from GCC that it never returns */
__attribute__((noipa, no_instrument_function)) static void leave_process(void)
{
	if (use_underscore_exit)
		_exit(4);
	exit(3);
}

E2E_FN void descend(int n)
{
	if (n > 1) {
		descend(n - 1);
		return;
	}
	bottom_work();
	leave_process();
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "exit") && strcmp(argv[1], "_exit")))
		return 2;
	use_underscore_exit = strcmp(argv[1], "_exit") == 0;
	atexit(at_exit_handler);
	descend(8);
	return 0;
}
