/*
 * exit_code.c - e2e target: calls tiny() once and exits with the status
 * given as argv[1] (test e2e.exit_status_passthrough; also the small
 * instrumented program of the error-case tests).
 */
#include <stdlib.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void tiny(void) { sink += e2e_burn(1000, 1); }

int main(int argc, char **argv)
{
	tiny();
	return argc > 1 ? atoi(argv[1]) : 0;
}
