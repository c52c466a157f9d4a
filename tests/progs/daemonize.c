/*
 * daemonize.c - e2e target (run_safety.py daemon_not_waited_for): calls
 * work() 3 times, then starts a daemon the usual way (fork, setsid, fork
 * again, the middle process exits) and exits 0 at once.  The daemon writes
 * its pid to PIDFILE and sleeps until RELEASE-FILE exists (60 s at most),
 * so the test can tell that `stint record` returned while the daemon still
 * ran.  Usage: e2e_daemonize PIDFILE RELEASE-FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void work(void) { sink += e2e_burn(20000, 1); }

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	for (int i = 0; i < 3; i++)
		work();
	pid_t p = fork();
	if (p == 0) {
		setsid();
		if (fork() == 0) {
			/* as daemons do: no terminal, no inherited output */
			int nul = open("/dev/null", O_RDWR);
			for (int fd = 0; fd < 3 && nul >= 0; fd++)
				dup2(nul, fd);
			char tmp[4096];
			snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
			FILE *f = fopen(tmp, "w");
			if (f) {
				fprintf(f, "%d\n", (int)getpid());
				fclose(f);
				rename(tmp, argv[1]);
			}
			for (int i = 0; i < 600 && access(argv[2], F_OK) != 0; i++)
				usleep(100000);
			_exit(0);
		}
		_exit(0);
	}
	waitpid(p, NULL, 0);
	return 0;
}
