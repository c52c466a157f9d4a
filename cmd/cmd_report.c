/*
 * cmd_report.c - `stint report`: the values of a data file, by function,
 * module, thread or process, as a table, CSV or JSON.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "../analysis/analysis.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../output/output.h"

static const char report_usage[] =
	"usage: stint report [-i FILE] [--by function|module|thread|process|line|address]\n"
	"                    [--sort KEY] [--limit N] [--format table|csv|json]\n"
	"                    [--per-call] [--no-compensation]\n"
	"\n"
	"  -i, --input FILE     data file (default stint.data)\n"
	"      --by VIEW        rows per function (default), module, thread, process;\n"
	"                       sampling also per source line and instruction address\n"
	"  -s, --sort KEY       instrumentation: ei, ee, ai, ae (or the JSON keys), calls;\n"
	"                       sampling: inclusive, exclusive; both: name, module\n"
	"  -n, --limit N        show the first N rows only\n"
	"      --format FMT     table (default), csv or json\n"
	"      --per-call       add average, minimum and maximum per call\n"
	"      --no-compensation  do not subtract the probe cost from the times\n";

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},  {"by", required_argument, NULL, 1},
		{"sort", required_argument, NULL, 's'},   {"limit", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 2},   {"per-call", no_argument, NULL, 3},
		{"no-compensation", no_argument, NULL, 4}, {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	struct out_opts o = {0};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:s:n:h", longopts, NULL)) != -1) {
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
		case 'h': fputs(report_usage, stdout); return 0;
		default: fputs(report_usage, stderr); return 2;
		}
	}
	if (optind < argc)
		die("report: unexpected argument '%s'", argv[optind]);
	if (o.sort && out_sort_key_ok(o.sort) < 0)
		die("report: unknown sort key '%s'", o.sort);
	struct fmt_data d;
	char err[1024];
	if (fmt_read(input, &d, err, sizeof(err)) < 0)
		die("%s", err);
	if (d.damage)
		warn("'%s' is damaged: %s; reporting what precedes the damage", input, d.damage);
	struct an_result r;
	struct an_opts ao = {.no_compensation = o.no_compensation};
	int sampling = strcmp(d.method, "sampling") == 0;
	if (!sampling && strcmp(d.method, "instrumentation") != 0)
		die("'%s' holds '%s' data, which this stint cannot report", input, d.method);
	if (!sampling && (o.by == OUT_BY_LINE || o.by == OUT_BY_ADDRESS))
		die("report: --by line and --by address need sampling data (stint record -m sample)");
	if ((sampling ? an_sample_run(&d, &r) : an_instr_run(&d, &ao, &r)) < 0)
		die("out of memory");
	if (r.damaged_threads && !d.damage)
		warn("'%s': events of %u thread%s are damaged; reporting what precedes the damage",
		     input, r.damaged_threads, r.damaged_threads == 1 ? "" : "s");
	if (out_report(stdout, &d, &r, &o) < 0)
		die("report: sort key '%s' does not apply to %s data", o.sort ? o.sort : "", d.method);
	an_result_free(&r);
	fmt_data_free(&d);
	if (fflush(stdout) != 0)
		die("cannot write the report: output error");
	return 0;
}
