/*
 * cmd_callers.c - `stint callers FUNC` and `stint callees FUNC`: the
 * butterfly of one function: who called it and what it called, each edge
 * with the values that went along it and its share of the function's.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "../lib/util.h"
#include "../output/out_tree.h"

static const char butterfly_usage[] =
	"usage: stint callers|callees [-i FILE] [--format table|csv|json] [filters] FUNCTION\n"
	"\n"
	"  -i, --input FILE   data file (default stint.data)\n" CMD_FILTER_HELP;

static int butterfly(int argc, char **argv, int callees_first)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"format", required_argument, NULL, 2},
						  {"no-compensation", no_argument, NULL, 4},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	struct an_filter flt = {0};
	int format = 0, nocomp = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		if (c == 'i')
			input = optarg;
		else if (c == 2) {
			if (strcmp(optarg, "json") == 0)
				format = 1;
			else if (strcmp(optarg, "csv") == 0)
				format = 2;
			else if (strcmp(optarg, "table") != 0)
				die("unknown format '%s' (table, csv or json)", optarg);
		} else if (c == 4)
			nocomp = 1;
		else if (c == 'h') {
			fputs(butterfly_usage, stdout);
			return 0;
		} else {
			fputs(butterfly_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		die("give one function name");
	}
	const char *want = argv[optind];
	struct fmt_data d;
	struct an_result r;
	cmd_load(input, &d, &r, nocomp, &flt);
	uint32_t found[16];
	uint32_t n = an_find_functions(&r, want, found, 16);
	if (n == 0)
		die("no function '%s' in '%s'", want, input);
	if (n > 1 && strcmp(r.funcs[found[0]].name, want) != 0) {
		fprintf(stderr, "stint: '%s' matches several functions:\n", want);
		for (uint32_t i = 0; i < n; i++)
			fprintf(stderr, "  %s [%s]\n", r.funcs[found[i]].name, r.mods[r.funcs[found[i]].module].base);
		die("name the function exactly");
	}
	struct an_view v;
	an_view_build(&d, &r, &flt, &v);
	/* the same name in several modules (or processes' copies): the first */
	out_butterfly(stdout, &v, found[0], callees_first, format);
	an_view_release(&v);
	an_result_free(&r);
	fmt_data_free(&d);
	return 0;
}

int cmd_callers(int argc, char **argv)
{
	return butterfly(argc, argv, 0);
}

int cmd_callees(int argc, char **argv)
{
	return butterfly(argc, argv, 1);
}
