/*
 * cmd_report.c - `stint report`: the values of a data file by function,
 * module, thread, process, source line or address, or as a
 * call tree; as a table, CSV or JSON; filtered by process, thread, module,
 * function, or just my code.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "../analysis/an_view.h"
#include "../lib/util.h"
#include "../output/out_tree.h"
#include "../output/output.h"

static const char report_usage[] =
	"usage: stint report [-i FILE] [--by function|module|thread|process|line|address]\n"
	"                    [--tree [--hot-path] [--threshold PCT]] [--sort KEY] [--limit N]\n"
	"                    [--format table|csv|json] [--per-call] [--no-compensation] [filters]\n"
	"\n"
	"  -i, --input FILE     data file (default stint.data)\n"
	"      --by VIEW        rows per function (default), module, thread, process,\n"
	"                       source line or address (sampling: instruction addresses;\n"
	"                       instrumentation: call sites and function entries)\n"
	"      --tree           the calling-context tree, hottest paths first\n"
	"      --hot-path       with --tree: expand only the hottest call at each level\n"
	"      --threshold PCT  with --tree: fold paths below PCT% of the total (default 1)\n"
	"  -s, --sort KEY       instrumentation: ei, ee, ai, ae (or the JSON keys), calls;\n"
	"                       sampling: inclusive, exclusive; both: name, module\n"
	"  -n, --limit N        show the first N rows only\n"
	"      --format FMT     table (default), csv or json\n"
	"      --per-call       add average, minimum and maximum per call\n"
	"      --no-compensation  do not subtract the probe cost from the times\n"
	"      --no-pager       on a terminal, print instead of paging ($STINT_PAGER, $PAGER, less)\n"
	"      --width N        shorten names to N columns (default: the terminal's; 0: never)\n"
	"      --color[=WHEN]   colour hot percentages: auto (default), always, never\n"
	"      --why            programs patched at load: list the functions not instrumented, and why\n" CMD_FILTER_HELP;

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},  {"by", required_argument, NULL, 1},
		{"sort", required_argument, NULL, 's'},   {"limit", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 2},   {"per-call", no_argument, NULL, 3},
		{"no-compensation", no_argument, NULL, 4}, {"tree", no_argument, NULL, 5},
		{"hot-path", no_argument, NULL, 6},       {"threshold", required_argument, NULL, 7},
		{"no-pager", no_argument, NULL, 8},       {"width", required_argument, NULL, 9},
		{"color", optional_argument, NULL, 10},   {"colour", optional_argument, NULL, 10},
		{"why", no_argument, NULL, 11},
		{"help", no_argument, NULL, 'h'},         CMD_FILTER_OPTIONS,
		{NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	struct out_opts o = {0};
	struct an_filter flt = {0};
	int tree = 0, hot = 0, pager = 1, width = -1, color = OUT_COLOR_AUTO, c;
	double threshold = 1.0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:n:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		switch (c) {
		case 'i': input = optarg; break;
		case 's': o.sort = optarg; break;
		case 'n': {
			char *end;
			o.limit = strtol(optarg, &end, 10);
			if (*end || o.limit < 0)
				die("report: --limit wants a number, not '%s'", optarg);
			break;
		}
		case 1:
			if (!strcmp(optarg, "function")) o.by = OUT_BY_FUNCTION;
			else if (!strcmp(optarg, "module")) o.by = OUT_BY_MODULE;
			else if (!strcmp(optarg, "thread")) o.by = OUT_BY_THREAD;
			else if (!strcmp(optarg, "process")) o.by = OUT_BY_PROCESS;
			else if (!strcmp(optarg, "line")) o.by = OUT_BY_LINE;
			else if (!strcmp(optarg, "address")) o.by = OUT_BY_ADDRESS;
			else die("report: unknown view '%s' (function, module, thread, process, line, address)", optarg);
			break;
		case 2:
			if (!strcmp(optarg, "table")) o.format = OUT_TABLE;
			else if (!strcmp(optarg, "csv")) o.format = OUT_CSV;
			else if (!strcmp(optarg, "json")) o.format = OUT_JSON;
			else die("report: unknown format '%s' (table, csv, json)", optarg);
			break;
		case 3: o.per_call = 1; break;
		case 4: o.no_compensation = 1; break;
		case 5: tree = 1; break;
		case 6: tree = hot = 1; break;
		case 7: {
			char *end;
			threshold = strtod(optarg, &end);
			if (end == optarg || *end || !(threshold >= 0 && threshold <= 100))
				die("report: --threshold wants a percentage, not '%s'", optarg);
			break;
		}
		case 8: pager = 0; break;
		case 9: width = cmd_width_arg("report", optarg); break;
		case 10:
			if (!optarg || !strcmp(optarg, "always")) color = OUT_COLOR_ALWAYS;
			else if (!strcmp(optarg, "never")) color = OUT_COLOR_NEVER;
			else if (!strcmp(optarg, "auto")) color = OUT_COLOR_AUTO;
			else die("report: --color wants auto, always or never, not '%s'", optarg);
			break;
		case 11: o.why = 1; break;
		case 'h': fputs(report_usage, stdout); return 0;
		default: cmd_bad_option("report", argv, "i:s:n:h", longopts);
		}
	}
	if (optind < argc)
		cmd_unexpected("report", argv[optind]);
	if (o.sort && out_sort_key_ok(o.sort) < 0)
		die("report: unknown sort key '%s'", o.sort);
	struct fmt_data d;
	struct an_result r;
	cmd_load(input, &d, &r, o.no_compensation, &flt);
	struct an_lines lines;
	memset(&lines, 0, sizeof(lines));
	if (!r.sampling && (o.by == OUT_BY_LINE || o.by == OUT_BY_ADDRESS) && !tree)
		cmd_instr_lines(input, &d, &r, o.no_compensation, &flt, &lines);
	if (o.format == OUT_TABLE) {
		/* decided before the pager takes stdout, which is then a pipe */
		o.width = width >= 0 ? width : out_term_width();
		o.color = out_color_wanted(color);
		if (pager)
			out_pager_start();
	}
	char *selection = cmd_filter_describe(&flt);
	o.selection = selection;
	if (tree || selection) {
		struct an_view v;
		an_view_build(&d, &r, &flt, &v);
		if (tree) {
			out_tree(stdout, &v, threshold, hot, o.format == OUT_JSON ? 1 : o.format == OUT_CSV ? 2 : 0);
		} else {
			cmd_filter_rows(&r, &flt, &v);
		}
		an_view_release(&v);
	}
	if (!tree && out_report(stdout, &d, &r, &o) < 0)
		die("report: sort key '%s' does not apply to %s data", o.sort ? o.sort : "", d.method);
	free(selection);
	an_result_free(&r);
	an_lines_free(&lines);
	fmt_data_free(&d);
	if (fflush(stdout) != 0)
		die("cannot write the report: output error");
	return 0;
}
