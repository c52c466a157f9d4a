/*
 * cmd_diff.c - `stint diff A.data B.data`: per-function changes of every
 * value of the method between two runs of a program, largest change first.
 * Functions are matched by name and module (analysis/an_diff.c).  For instrumentation the
 * changes are in nanoseconds (and calls); for sampling, whose sample
 * counts depend on the run's length, in percentage points of the samples.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "../lib/util.h"
#include "../analysis/an_diff.h"
#include "../output/out_diff.h"
#include "../output/output.h"

static const char diff_usage[] =
	"usage: stint diff [--sort KEY] [--limit N] [--format table|csv|json] [filters] A.data B.data\n"
	"\n"
	"  -s, --sort KEY     the change to order by: ei, ee (default), ai, ae, calls\n"
	"                     (sampling: inclusive, exclusive (default))\n"
	"  -n, --limit N      show the N largest changes only\n"
	"      --no-pager     on a terminal, print instead of paging ($STINT_PAGER, $PAGER, less)\n"
	"      --width N      shorten names to N columns (default: the terminal's; 0: never)\n" CMD_FILTER_HELP;

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {{"sort", required_argument, NULL, 's'},
						  {"limit", required_argument, NULL, 'n'},
						  {"format", required_argument, NULL, 2},
						  {"no-pager", no_argument, NULL, 3},
						  {"width", required_argument, NULL, 4},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	struct an_filter flt = {0};
	const char *sort = NULL;
	int format = OUT_TABLE;
	long limit = 0;
	int c, pager = 1, width = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		switch (c) {
		case 's': sort = optarg; break;
		case 'n': limit = atol(optarg); break;
		case 2:
			format = !strcmp(optarg, "table") ? OUT_TABLE : !strcmp(optarg, "csv") ? OUT_CSV
				 : !strcmp(optarg, "json") ? OUT_JSON : -1;
			if (format < 0)
				die("diff: unknown format '%s' (table, csv, json)", optarg);
			break;
		case 3: pager = 0; break;
		case 4: width = cmd_width_arg("diff", optarg); break;
		case 'h': fputs(diff_usage, stdout); return 0;
		default: cmd_bad_option("diff", argv, "s:n:h", longopts);
		}
	}
	if (optind != argc - 2) {
		die("diff: give two data files (stint diff --help)");
	}
	struct fmt_data da, db;
	struct an_result ra, rb;
	struct an_row *rowa, *rowb;
	uint32_t na, nb;
	cmd_load_any(argv[optind], &da, &ra, 0, &flt);
	cmd_load_any(argv[optind + 1], &db, &rb, 0, &flt);
	if (!cmd_filter_names_match(&ra, &flt) && !cmd_filter_names_match(&rb, &flt)) {
		char *where = xasprintf("neither '%s' nor '%s'", argv[optind], argv[optind + 1]);
		cmd_filter_names_die(&flt, where);
	}
	if (ra.sampling != rb.sampling)
		die("diff: '%s' holds %s data and '%s' %s data", argv[optind], da.method, argv[optind + 1], db.method);
	cmd_load_warn(argv[optind], &da, &ra);
	cmd_load_warn(argv[optind + 1], &db, &rb);
	an_diff_rows(&da, &ra, &flt, &rowa, &na);
	an_diff_rows(&db, &rb, &flt, &rowb, &nb);
	int key = sort ? out_diff_sort_key(ra.sampling, sort) : AN_EE;
	if (key < 0)
		die("diff: unknown sort key '%s'", sort);
	struct an_diff_row *rows;
	uint32_t n;
	if (an_diff_match(&da, rowa, na, &db, rowb, nb, &rows, &n) < 0)
		die("out of memory");
	an_diff_sort(rows, n, key);
	if (format == OUT_TABLE && pager)
		out_pager_start();
	if (limit > 0 && (uint32_t)limit < n)
		n = (uint32_t)limit;
	struct out_diff_run a = {argv[optind], da.method, da.command}, b = {argv[optind + 1], db.method, db.command};
	out_diff(stdout, ra.sampling, &a, &b, rows, n, format, width >= 0 ? width : out_term_width());
	free(rows);
	free(rowa);
	free(rowb);
	an_result_free(&ra);
	an_result_free(&rb);
	fmt_data_free(&da);
	fmt_data_free(&db);
	return 0;
}
