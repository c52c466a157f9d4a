/*
 * exec_target.c - e2e target run through exec by fork_exec.c (test
 * e2e.fork_exec).  Calls exec_target_work argv[1] times (fork_exec passes 40).
 */
#include <stdlib.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void exec_target_work(void) { sink += e2e_burn(5000, 7); }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < n; i++)
		exec_target_work();
	return 0;
}
