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
#include "../output/output.h"

static const char diff_usage[] =
	"usage: stint diff [--sort KEY] [--limit N] [--format table|csv|json] [filters] A.data B.data\n"
	"\n"
	"  -s, --sort KEY     the change to order by: ei, ee (default), ai, ae, calls\n"
	"                     (sampling: inclusive, exclusive (default))\n"
	"  -n, --limit N      show the N largest changes only\n" CMD_FILTER_HELP;

static const char *const diff_keys[2][AN_NVALUES + 1] = {
	{"elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive", "calls"},
	{"inclusive_pct", "exclusive_pct", "", "", ""}};

static void fmt_delta(char *buf, size_t n, double v, int sampling)
{
	if (sampling) {
		snprintf(buf, n, "%+.2f", v);
		return;
	}
	char t[32];
	out_fmt_time(t, sizeof(t), fabs(v));
	snprintf(buf, n, "%s%.30s", v < 0 ? "-" : "+", t);
}

/* The function rows of one file, under the filter. */
static void load_rows(const char *path, struct fmt_data *d, struct an_result *r, const struct an_filter *f,
		      struct an_row **rows, uint32_t *n)
{
	cmd_load(path, d, r, 0, f);
	struct an_view v;
	if (an_view_build(d, r, f, &v) < 0)
		die("out of memory");
	an_view_functions(&v, rows, n);
	if (r->sampling) /* as percentages of the selection's samples */
		for (uint32_t i = 0; i < *n; i++)
			for (int k = 0; k < 2; k++)
				(*rows)[i].v[k] = v.total[AN_EI] > 0 ? 100.0 * (*rows)[i].v[k] / v.total[AN_EI] : 0;
	an_view_release(&v);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {{"sort", required_argument, NULL, 's'},
						  {"limit", required_argument, NULL, 'n'},
						  {"format", required_argument, NULL, 2},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	struct an_filter flt = {0};
	const char *sort = NULL, *format = "table";
	long limit = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		switch (c) {
		case 's': sort = optarg; break;
		case 'n': limit = atol(optarg); break;
		case 2:
			if (strcmp(optarg, "table") && strcmp(optarg, "csv") && strcmp(optarg, "json"))
				die("diff: unknown format '%s' (table, csv, json)", optarg);
			format = optarg;
			break;
		case 'h': fputs(diff_usage, stdout); return 0;
		default: fputs(diff_usage, stderr); return 2;
		}
	}
	if (optind != argc - 2) {
		die("diff: give two data files (stint diff --help)");
	}
	struct fmt_data da, db;
	struct an_result ra, rb;
	struct an_row *rowa, *rowb;
	uint32_t na, nb;
	load_rows(argv[optind], &da, &ra, &flt, &rowa, &na);
	load_rows(argv[optind + 1], &db, &rb, &flt, &rowb, &nb);
	if (ra.sampling != rb.sampling)
		die("diff: '%s' holds %s data and '%s' %s data", argv[optind], da.method, argv[optind + 1], db.method);
	int sampling = ra.sampling;
	int nvals = sampling ? 2 : AN_NVALUES + 1;
	int key = AN_EE;
	if (sort) {
		static const char *const names[2][5] = {{"ei", "ee", "ai", "ae", "calls"}, {"inclusive", "exclusive"}};
		key = -1;
		for (int k = 0; k < nvals; k++)
			if (strcmp(sort, names[sampling][k]) == 0 || strcmp(sort, diff_keys[sampling][k]) == 0)
				key = k;
		if (key < 0)
			die("diff: unknown sort key '%s'", sort);
	}
	struct an_diff_row *rows;
	uint32_t n;
	if (an_diff_match(&da, rowa, na, &db, rowb, nb, &rows, &n) < 0)
		die("out of memory");
	an_diff_sort(rows, n, key);
	if (limit > 0 && (uint32_t)limit < n)
		n = (uint32_t)limit;
	if (strcmp(format, "json") == 0) {
		printf("{\"method\":\"%s\",\"a\":", da.method);
		out_json_str(stdout, argv[optind]);
		printf(",\"b\":");
		out_json_str(stdout, argv[optind + 1]);
		printf(",\"functions\":[");
		for (uint32_t i = 0; i < n; i++) {
			printf(i ? ",\n{\"name\":" : "\n{\"name\":");
			out_json_str(stdout, rows[i].name);
			printf(",\"module\":");
			out_json_str(stdout, rows[i].module);
			printf(",\"in_a\":%s,\"in_b\":%s", rows[i].in_a ? "true" : "false", rows[i].in_b ? "true" : "false");
			for (int k = 0; k < nvals; k++)
				printf(",\"a_%s\":%.4f,\"b_%s\":%.4f,\"delta_%s\":%.4f", diff_keys[sampling][k], rows[i].a[k],
				       diff_keys[sampling][k], rows[i].b[k], diff_keys[sampling][k], rows[i].b[k] - rows[i].a[k]);
			putchar('}');
		}
		printf("]}\n");
	} else if (strcmp(format, "csv") == 0) {
		printf("name,module");
		for (int k = 0; k < nvals; k++)
			printf(",a_%s,b_%s,delta_%s", diff_keys[sampling][k], diff_keys[sampling][k], diff_keys[sampling][k]);
		putchar('\n');
		for (uint32_t i = 0; i < n; i++) {
			out_csv_str(stdout, rows[i].name);
			putchar(',');
			out_csv_str(stdout, rows[i].module);
			for (int k = 0; k < nvals; k++)
				printf(",%.4f,%.4f,%.4f", rows[i].a[k], rows[i].b[k], rows[i].b[k] - rows[i].a[k]);
			putchar('\n');
		}
	} else {
		printf("# stint diff (%s): A = %s (%s), B = %s (%s)\n", da.method, argv[optind], da.command,
		       argv[optind + 1], db.command);
		if (sampling)
			printf("# changes in percentage points of each run's samples\n\n%10s %10s %10s %10s %10s  %s\n",
			       "Excl% A", "Excl% B", "dExcl%", "Incl% B", "dIncl%", "Function [module]");
		else
			printf("\n%11s %11s %11s %11s %11s %11s %11s  %s\n", "EE A", "EE B", "dEE", "dEI", "dAI", "dAE",
			       "dCalls", "Function [module]");
		for (uint32_t i = 0; i < n; i++) {
			const struct an_diff_row *r = &rows[i];
			char b[5][32];
			if (sampling) {
				fmt_delta(b[0], 32, r->b[AN_EE] - r->a[AN_EE], 1);
				fmt_delta(b[1], 32, r->b[AN_EI] - r->a[AN_EI], 1);
				printf("%10.2f %10.2f %10s %10.2f %10s  ", r->a[AN_EE], r->b[AN_EE], b[0], r->b[AN_EI], b[1]);
			} else {
				char ea[32], eb[32];
				fmt_delta(ea, 32, r->a[AN_EE], 0);
				fmt_delta(eb, 32, r->b[AN_EE], 0);
				for (int k = 0; k < AN_NVALUES; k++)
					fmt_delta(b[k], 32, r->b[k] - r->a[k], 0);
				printf("%11s %11s %11s %11s %11s %11s %+11.0f  ", ea + 1, eb + 1, b[AN_EE], b[AN_EI], b[AN_AI],
				       b[AN_AE], r->b[AN_NVALUES] - r->a[AN_NVALUES]);
			}
			printf("%s [%s]%s\n", r->name, r->module, !r->in_a ? " (new in B)" : !r->in_b ? " (only in A)" : "");
		}
	}
	free(rows);
	free(rowa);
	free(rowb);
	an_result_free(&ra);
	an_result_free(&rb);
	fmt_data_free(&da);
	fmt_data_free(&db);
	return 0;
}
