/*
 * out_term.c - what a report does differently on a terminal: a pager (as
 * git and perf start one), the terminal's width for shortening names, and
 * colour for the hot rows.  Nothing here changes what a pipe or a file gets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output.h"

static pid_t out_pager_pid;

int out_term_width(void)
{
	if (!isatty(STDOUT_FILENO))
		return 0;
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *cols = getenv("COLUMNS");
	return cols && atoi(cols) > 0 ? atoi(cols) : 80;
}

int out_color_wanted(int mode)
{
	if (mode != OUT_COLOR_AUTO)
		return mode == OUT_COLOR_ALWAYS;
	const char *term = getenv("TERM"), *no = getenv("NO_COLOR");
	/* (no-color.org: NO_COLOR set to anything but the empty string) */
	return isatty(STDOUT_FILENO) && !(no && *no) && term && strcmp(term, "dumb") != 0;
}

static void out_pager_wait(void)
{
	if (out_pager_pid <= 0)
		return;
	fflush(stdout);
	fclose(stdout);
	int status;
	while (waitpid(out_pager_pid, &status, 0) < 0)
		;
	out_pager_pid = 0;
	/* the shell found no such pager (127) or could not run it (126): what
	 * went to it is lost, which the exit status says (it was 0) */
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126)) {
		fprintf(stderr, "stint: the pager could not be run (PAGER or STINT_PAGER); "
				"--no-pager writes to the terminal\n");
		_exit(2);
	}
}

void out_pager_start(void)
{
	if (!isatty(STDOUT_FILENO))
		return;
	const char *pager = getenv("STINT_PAGER");
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat"))
		return;
	int fds[2];
	if (pipe(fds) < 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		/* quit if one screen, raw colours, chop long lines, keep the screen */
		setenv("LESS", "FRSX", 0);
		/* the user's own setting, run as git runs $PAGER: through the shell */
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	dup2(fds[1], STDOUT_FILENO);
	close(fds[1]);
	out_pager_pid = pid;
	atexit(out_pager_wait);
}
