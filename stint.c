/*
 * stint.c - main(): the command table and dispatch.  Adding a command takes
 * one row here and one cmd/cmd_<name>.c.
 */
#include <stdio.h>
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

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("stint %s\n", STINT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int rc = commands[i].fn(argc - 1, argv + 1);
			/* a damaged data file: what could be read was reported */
			return rc == 0 && cmd_damaged ? CMD_EXIT_DAMAGED : rc;
		}
	fprintf(stderr, "stint: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
