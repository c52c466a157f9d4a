/*
 * count_sigint.c - e2e target (run_safety.py ctrl_c_*): counts the SIGINTs
 * it receives.  Writes "ready" to STATEFILE when its handler is in place,
 * then calls tick() until the first SIGINT, waits 500 ms more for a second
 * one, writes the count to STATEFILE and exits 0.  With "ignore" it ignores
 * SIGINT instead and runs until RELEASE-FILE exists (60 s at most).
 * Usage: e2e_count_sigint STATEFILE [ignore RELEASE-FILE]
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile sig_atomic_t count;
static volatile uint64_t sink;

E2E_FN void tick(void) { sink += e2e_burn(2000, 1); }

static void on_int(int sig)
{
	(void)sig;
	count++;
}

static void put(const char *path, const char *text)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	rename(tmp, path);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int ignore = argc > 3 && strcmp(argv[2], "ignore") == 0;
	signal(SIGINT, ignore ? SIG_IGN : on_int);
	put(argv[1], "ready\n");
	for (int i = 0; i < 60000; i++) {
		tick();
		if (ignore ? access(argv[3], F_OK) == 0 : count > 0)
			break;
		usleep(1000);
	}
	if (!ignore) {
		usleep(500000);
		char buf[32];
		snprintf(buf, sizeof(buf), "%d\n", (int)count);
		put(argv[1], buf);
	}
	return 0;
}
