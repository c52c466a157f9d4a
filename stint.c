/*
 * stint.c - main(): the command table and dispatch.  Adding a command takes
 * one row here and one cmd/cmd_<name>.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "cmd/cmd.h"

#ifndef STINT_VERSION
#define STINT_VERSION "0.1.0"
#endif

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_struct commands[] = {
	{"record", cmd_record, "run a program and record where its time goes"},
	{"report", cmd_report, "show the values of a data file"},
	{"callers", cmd_callers, "who called a function, and what it called (butterfly)"},
	{"callees", cmd_callees, "what a function called, and who called it (butterfly)"},
	{"diff", cmd_diff, "per-function changes between two data files"},
	{"export", cmd_export, "write the profile for other tools: folded, pprof, callgrind, chrome"},
	{"html", cmd_html, "write a browsable, self-contained HTML report"},
	{"annotate", cmd_annotate, "show a function's source with its samples per line"},
	{"recover", cmd_recover, "make the data file of a recording kept after a full disk"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: stint COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'stint COMMAND --help' describes a command's options\n");
}

/* Edit distance of two short words, for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 32 || lb > 32)
		return 99;
	size_t row[33];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const struct cmd_struct *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	warn("'%s' is not a stint command. See 'stint --help'.", name);
	int shown = 0;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *cand = commands[i].name;
		int prefix = strlen(name) >= 2 && !strncmp(name, cand, strlen(name));
		if (!prefix && edit_distance(name, cand) > 2)
			continue;
		fprintf(stderr, "%s\t%s\n", shown++ ? "" : "\nthe most similar command:\n", cand);
	}
	return 2;
}

/* rc, once what went to standard output is written: what could not be (a
 * full disk, a closed standard output) is one line and status 2, as
 * report's own check says, for every command (callers, diff, annotate and
 * --help exited 0 with nothing written) */
static int written(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die("cannot write to standard output: %s", errno ? strerror(errno) : "output error");
	return rc;
}

int main(int argc, char **argv)
{
	opterr = 0; /* a command names a bad option in one line itself (cmd_bad_option) */
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return written(argc < 2 ? 2 : 0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v") || !strcmp(argv[1], "version")) {
		printf("stint version %s\n", STINT_VERSION);
		return written(0);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return written(0);
		}
		const struct cmd_struct *c = find_command(argv[2]);
		if (!c)
			return unknown_command(argv[2]);
		char *help_argv[] = {argv[2], "--help", NULL};
		return written(c->fn(2, help_argv));
	}
	const struct cmd_struct *c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	int rc = written(c->fn(argc - 1, argv + 1));
	if (cmd_exit_signal)
		cmd_exit(rc);
	/* a damaged data file: what could be read was reported */
	return rc == 0 && cmd_damaged ? CMD_EXIT_DAMAGED : rc;
}
