/*
 * group_signal.c - e2e target of the tests of stint record's signals
 * (run_e2e.py: fork_child_signalled_at_once, group_signal_once,
 * signal_dispositions_kept, outside_signal_forwarded, sigpipe_closed_output,
 * second_sigterm_named).
 *
 *   e2e_group_signal group SIGNUM
 *       a handler for SIGNUM, a child forked with it, then kill(0, SIGNUM):
 *       the whole process group (stint record too) gets it.  Once the
 *       child has exited and 300 ms more have passed (time for a copy
 *       stint would wrongly pass on), prints "child got=N" and
 *       "parent got=N": 1 and 1, as without stint.
 *   e2e_group_signal wait SIGNUM READY-FILE
 *       a handler for SIGNUM, its pid written to READY-FILE, then waits
 *       for the signal (60 s at most) and prints "got=N".
 *   e2e_group_signal storm
 *       forks a child and sends it SIGUSR1 again and again from the moment
 *       it exists until it writes that it runs its own code (its handler
 *       counts them); prints "child exited N" or "child killed by N":
 *       "child exited 0", as without stint.
 *   e2e_group_signal ignore SIGNUM READY-FILE RELEASE-FILE
 *       ignores SIGNUM, writes its pid to READY-FILE, then runs until
 *       RELEASE-FILE exists (60 s at most) and exits 0.
 *   e2e_group_signal dispositions
 *       prints the action of every signal, one letter each from 1 to
 *       SIGRTMAX: d default, i ignored, h a handler (then exits 0).
 *   e2e_group_signal write
 *       writes lines to stdout until a write fails (a closed pipe ends
 *       it with SIGPIPE unless that is ignored), then exits 4.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile sig_atomic_t got;
static volatile uint64_t sink;

static void on_signal(int sig)
{
	(void)sig;
	got++;
}

E2E_FN void tick(void) { sink += e2e_burn(2000, 1); }

static void catch_it(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* up to 60 s for the handler to have run; 1 if it did */
static int wait_got(void)
{
	for (int i = 0; i < 60000 && !got; i++) {
		tick();
		usleep(1000);
	}
	return got > 0;
}

static int group(int sig)
{
	catch_it(sig);
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0) {
		wait_got();
		printf("child got=%d\n", (int)got);
		fflush(stdout);
		_exit(0);
	}
	kill(0, sig);
	waitpid(c, NULL, 0);
	for (int i = 0; i < 300; i++) {
		tick();
		usleep(1000);
	}
	printf("parent got=%d\n", (int)got);
	return 0;
}

static int storm(void)
{
	catch_it(SIGUSR1);
	int p[2];
	if (pipe(p) < 0)
		return 2;
	pid_t c = fork();
	if (c < 0)
		return 2;
	if (c == 0) {
		close(p[0]);
		if (write(p[1], "r", 1) != 1)
			_exit(2);
		wait_got();
		_exit(got > 0 ? 0 : 3);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	char b;
	for (int i = 0; i < 1000000 && read(p[0], &b, 1) < 0; i++)
		kill(c, SIGUSR1);
	kill(c, SIGUSR1);
	int st = 0;
	waitpid(c, &st, 0);
	if (WIFSIGNALED(st))
		printf("child killed by %d\n", WTERMSIG(st));
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	return 0;
}

static int wait_for(int sig, const char *ready)
{
	catch_it(sig);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, ready);
	wait_got();
	printf("got=%d\n", (int)got);
	return 0;
}

static int ignore_until(int sig, const char *ready, const char *release)
{
	signal(sig, SIG_IGN);
	FILE *f = fopen(ready, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (int i = 0; i < 60000 && access(release, F_OK) != 0; i++) {
		tick();
		usleep(1000);
	}
	return 0;
}

static int dispositions(void)
{
	for (int s = 1; s <= SIGRTMAX; s++) {
		struct sigaction old;
		char c = '?';
		if (sigaction(s, NULL, &old) == 0)
			c = (old.sa_flags & SA_SIGINFO) ? 'h' : old.sa_handler == SIG_DFL ? 'd'
								 : old.sa_handler == SIG_IGN ? 'i' : 'h';
		putchar(c);
	}
	putchar('\n');
	return 0;
}

static int write_lines(void)
{
	for (long i = 0;; i++) {
		tick();
		if (printf("line %ld\n", i) < 0 || fflush(stdout) != 0)
			return 4;
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "group") == 0)
		return group(atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "wait") == 0)
		return wait_for(atoi(argv[2]), argv[3]);
	if (argc == 5 && strcmp(argv[1], "ignore") == 0)
		return ignore_until(atoi(argv[2]), argv[3], argv[4]);
	if (argc == 2 && strcmp(argv[1], "storm") == 0)
		return storm();
	if (argc == 2 && strcmp(argv[1], "dispositions") == 0)
		return dispositions();
	if (argc == 2 && strcmp(argv[1], "write") == 0)
		return write_lines();
	return 2;
}
