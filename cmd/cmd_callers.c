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
#include "../output/output.h"

static const char butterfly_usage[] =
	"usage: stint callers|callees [-i FILE] [--format table|csv|json] [--by line] [--width N] [filters] FUNCTION\n"
	"\n"
	"  -i, --input FILE   data file (default stint.data)\n"
	"      --by line      callers (instrumentation): per calling source line and call site\n"
	"      --no-pager     on a terminal, print instead of paging ($STINT_PAGER, $PAGER, less)\n"
	"      --width N      shorten names to N columns (default: the terminal's; 0: never)\n" CMD_FILTER_HELP;

static const char *const cl_keys[AN_NVALUES] = {"elapsed_inclusive", "elapsed_exclusive", "application_inclusive",
						 "application_exclusive"};

static int cl_cmp(const void *a, const void *b)
{
	const struct an_line_row *x = a, *y = b;
	return x->row.v[AN_EI] < y->row.v[AN_EI] ? 1 : x->row.v[AN_EI] > y->row.v[AN_EI] ? -1 : 0;
}

/*
 * stint callers FUNC --by line: FUNC's activations per calling line (the
 * line of the call, in the caller's code), with the values that went along
 * (an_lines.h, AN_LINES_CALLERS); percentages of the session's, as for
 * functions.
 */
static void callers_by_line(const char *input, const struct fmt_data *d, struct an_result *r, uint32_t fn,
			    int nocomp, const struct an_filter *flt, int format, int width)
{
	cmd_need_sites(input, d, "callers");
	struct an_lines l;
	struct an_lines_opts lo = {.no_compensation = nocomp, .filter = flt, .mode = AN_LINES_CALLERS, .fn = fn};
	if (an_lines_run(d, r, &lo, &l) < 0)
		die("out of memory");
	if (l.nlines)
		qsort(l.lines, l.nlines, sizeof(*l.lines), cl_cmp);
	const double den[AN_NVALUES] = {r->session.v[AN_EI], r->session.v[AN_EI], r->session.v[AN_AI],
					r->session.v[AN_AI]};
	const struct an_func *f = &r->funcs[fn];
	if (format == 1) {
		fputs("{\"function\":", stdout);
		out_json_str(stdout, f->name);
		fputs(",\"module\":", stdout);
		out_json_str(stdout, r->mods[f->module].base);
		fputs(",\"by\":\"line\",\"callers\":[", stdout);
	} else if (format == 2) {
		fputs("caller,module,file,line,calls", stdout);
		for (int k = 0; k < AN_NVALUES; k++)
			printf(",%s,%s_pct", cl_keys[k], cl_keys[k]);
		putchar('\n');
	} else {
		printf("# callers of %s [%s], per calling line (instrumentation)\n\n", f->name,
		       r->mods[f->module].base);
		printf("%10s %12s %6s %12s %6s %12s %6s %12s %6s  %s\n", "Calls", "Elapsed incl", "%", "Elapsed excl",
		       "%", "Applic. incl", "%", "Applic. excl", "%", "Caller at line [module]");
	}
	uint32_t shown = 0;
	for (uint32_t i = 0; i < l.nlines; i++) {
		const struct an_line_row *x = &l.lines[i];
		if (an_line_row_empty(x))
			continue;
		const char *caller = x->fn < r->nfuncs ? r->funcs[x->fn].name : "?";
		if (format == 1) {
			fputs(shown++ ? ",\n {\"name\":" : "\n {\"name\":", stdout);
			out_json_str(stdout, caller);
			fputs(",\"module\":", stdout);
			out_json_str(stdout, x->row.module);
			fputs(",\"file\":", stdout);
			out_json_str(stdout, x->file ? x->file : "");
			printf(",\"line\":%u,\"calls\":%llu", x->line, (unsigned long long)x->row.calls);
			for (int k = 0; k < AN_NVALUES; k++)
				printf(",\"%s\":%.0f,\"%s_pct\":%.4f", cl_keys[k], x->row.v[k], cl_keys[k],
				       out_pct(x->row.v[k], den[k]));
			putchar('}');
		} else if (format == 2) {
			out_csv_str(stdout, caller);
			putchar(',');
			out_csv_str(stdout, x->row.module);
			putchar(',');
			out_csv_str(stdout, x->file ? x->file : "");
			printf(",%u,%llu", x->line, (unsigned long long)x->row.calls);
			for (int k = 0; k < AN_NVALUES; k++)
				printf(",%.0f,%.4f", x->row.v[k], out_pct(x->row.v[k], den[k]));
			putchar('\n');
		} else {
			printf("%10llu", (unsigned long long)x->row.calls);
			for (int k = 0; k < AN_NVALUES; k++) {
				char t[32];
				out_fmt_time(t, sizeof(t), x->row.v[k]);
				printf(" %12s %6.2f", t, out_pct(x->row.v[k], den[k]));
			}
			char *label = xasprintf("%s at %s [%s]", caller, x->row.name, x->row.module);
			fputs("  ", stdout);
			out_put_label(stdout, width, 10 + AN_NVALUES * 20 + 2, label);
			free(label);
		}
	}
	if (format == 1)
		fputs("\n]}\n", stdout);
	/* calls whose calling line is not known (no debug information): by address */
	an_lines_free(&l);
}

static int butterfly(int argc, char **argv, int callees_first)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"format", required_argument, NULL, 2},
						  {"no-compensation", no_argument, NULL, 4},
						  {"by", required_argument, NULL, 5},
						  {"no-pager", no_argument, NULL, 6},
						  {"width", required_argument, NULL, 7},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	struct an_filter flt = {0};
	int format = 0, nocomp = 0, by_line = 0, pager = 1, width = -1, c;
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
		else if (c == 6)
			pager = 0;
		else if (c == 7)
			width = cmd_width_arg(callees_first ? "callees" : "callers", optarg);
		else if (c == 5) {
			if (strcmp(optarg, "line") == 0)
				by_line = 1;
			else if (strcmp(optarg, "function") != 0)
				die("unknown --by '%s' (function or line)", optarg);
		}
		else if (c == 'h') {
			fputs(butterfly_usage, stdout);
			return 0;
		} else {
			cmd_bad_option(callees_first ? "callees" : "callers", argv, "i:h", longopts);
		}
	}
	if (optind != argc - 1) {
		die("give one function name");
	}
	const char *want = argv[optind];
	struct fmt_data d;
	struct an_result r;
	cmd_load_any(input, &d, &r, nocomp, &flt);
	cmd_filter_names_check(&r, &flt, input);
	uint32_t fn = cmd_pick_function(&r, want, flt.module, input, callees_first ? "callees" : "callers");
	if (by_line && (callees_first || r.sampling))
		die("--by line is for callers of instrumentation data (stint annotate shows lines "
		    "of sampling data)");
	cmd_load_warn(input, &d, &r); /* (after the checks: an error is then the one line) */
	/* decided before the pager takes stdout, which is then a pipe */
	if (format == 0 && width < 0)
		width = out_term_width();
	if (format == 0 && pager)
		out_pager_start();
	if (by_line) {
		callers_by_line(input, &d, &r, fn, nocomp, &flt, format, width);
	} else {
		struct an_view v;
		an_view_build(&d, &r, &flt, &v);
		/* the same name in several modules (or processes' copies): the first */
		out_butterfly(stdout, &v, fn, callees_first, format, width);
		an_view_release(&v);
	}
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
