/*
 * wait_file.c - e2e target of the safety tests (run_safety.py): calls tick()
 * every millisecond until the file named by its argument exists, then
 * exits 0.  The test does something to stint or its spool meanwhile and
 * then creates the file.  Its pid goes to PIDFILE if given.  Safety net:
 * exits 3 after 60 s.  Usage: e2e_wait_file RELEASE-FILE [PIDFILE]
 */
#include <stdio.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void tick(void) { sink += e2e_burn(2000, 1); }

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 2;
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	for (int i = 0; i < 60000; i++) {
		tick();
		if (access(argv[1], F_OK) == 0)
			return 0;
		usleep(1000);
	}
	return 3;
}
