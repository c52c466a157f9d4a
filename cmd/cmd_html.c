/*
 * cmd_html.c - `stint html`: the profile as one self-contained HTML file
 * (summary, sortable tables, flame graph, callers/callees) that opens
 * offline in any browser.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "../lib/util.h"
#include "../output/out_html.h"

static const char html_usage[] =
	"usage: stint html [-i FILE] [-o OUT.html] [--min-share PCT] [--max-nodes N]\n"
	"                  [--no-compensation] [filters]\n"
	"\n"
	"  -i, --input FILE     data file (default stint.data)\n"
	"  -o, --output FILE    the HTML file to write (default stint.html; - for stdout)\n"
	"      --min-share PCT  flame graph: fold call paths below PCT% of the total into\n"
	"                       \"(other)\" nodes (default 0.001; 0 keeps every path)\n"
	"      --max-nodes N    flame graph: at most N nodes in the page, folding the\n"
	"                       smallest paths first (default 50000)\n"
	"      --no-compensation  do not subtract the probe cost from the times\n"
	"      --no-pager       accepted as by report (html writes a file, never pages)\n" CMD_FILTER_HELP;

static double html_number(const char *opt, const char *arg, double lo, double hi)
{
	char *end;
	errno = 0;
	double x = strtod(arg, &end);
	if (errno || end == arg || *end || !(x >= lo && x <= hi))
		die("html: %s wants a number from %g to %g, not '%s'", opt, lo, hi, arg);
	return x;
}

int cmd_html(int argc, char **argv)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"output", required_argument, NULL, 'o'},
						  {"min-share", required_argument, NULL, 2},
						  {"max-nodes", required_argument, NULL, 3},
						  {"no-compensation", no_argument, NULL, 4},
						  {"no-pager", no_argument, NULL, 5},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data", *output = "stint.html";
	struct an_filter flt = {0};
	struct out_html_opts o = {.min_share = OUT_HTML_MIN_SHARE,
				  .max_nodes = OUT_HTML_MAX_NODES,
				  .max_edges = OUT_HTML_MAX_EDGES};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		switch (c) {
		case 'i': input = optarg; break;
		case 'o': output = optarg; break;
		case 2: o.min_share = html_number("--min-share", optarg, 0, 100); break;
		case 3: o.max_nodes = (uint32_t)html_number("--max-nodes", optarg, 16, 1e8); break;
		case 4: o.no_compensation = 1; break;
		case 5: break; /* (html never pages: accepted as by report) */
		case 'h': fputs(html_usage, stdout); return 0;
		default: cmd_bad_option("html", argv, "i:o:h", longopts);
		}
	}
	if (optind < argc)
		cmd_unexpected("html", argv[optind]);

	struct fmt_data d;
	struct an_result r;
	cmd_output_not_input(output, input);
	cmd_load(input, &d, &r, o.no_compensation, &flt);
	struct an_view v;
	an_view_build(&d, &r, &flt, &v);
	char *filter = cmd_filter_describe(&flt);
	if (filter) {
		cmd_filter_rows(&r, &flt, &v);
		o.filter = filter;
	}
	/* instrumentation: the values per line of each function, for its source
	 * panel (none for a file of format version 1: its calls have no sites) */
	struct an_lines lines;
	memset(&lines, 0, sizeof(lines));
	int has_sites = !r.sampling;
	for (uint32_t i = 0; i < d.nthreads; i++)
		has_sites &= !d.threads[i].nosites;
	if (has_sites) {
		struct an_lines_opts lo = {.no_compensation = o.no_compensation, .filter = &flt,
					   .mode = AN_LINES_PER_FUNCTION};
		if (an_lines_run(&d, &r, &lo, &lines) < 0)
			die("out of memory");
		o.lines = &lines;
	}

	int to_stdout = strcmp(output, "-") == 0;
	/* a new file renamed over the output when whole (util_out) */
	struct util_out uo = {.fd = -1};
	FILE *f = stdout;
	if (!to_stdout && (util_out_open(&uo, output) < 0 || !(f = fdopen(uo.fd, "w"))))
		die("cannot write '%s': %s", output, strerror(errno));
	struct out_html_stats st;
	int rc = out_html(f, &d, &r, &v, &o, &st);
	if (rc < 0 && errno == ENOMEM)
		die("out of memory");
	if (fflush(f) != 0 || rc < 0) {
		if (!to_stdout)
			util_out_abort(&uo);
		die("cannot write '%s': %s", to_stdout ? "stdout" : output, strerror(errno));
	}
	if (!to_stdout) {
		/* util_out closes its own copy of the descriptor */
		uo.fd = dup(uo.fd);
		if (fclose(f) != 0 || uo.fd < 0 || util_out_commit(&uo) < 0) {
			util_out_abort(&uo);
			die("cannot write '%s': %s", output, strerror(errno));
		}
		if (st.folded_nodes)
			warn("wrote '%s'; flame graph: %u of %u call paths shown, %u folded into %u \"(other)\" nodes",
			     output, st.shown_nodes - st.other_nodes, st.source_nodes, st.folded_nodes,
			     st.other_nodes);
		else
			warn("wrote '%s'", output);
	}
	free(filter);
	an_view_release(&v);
	an_result_free(&r);
	an_lines_free(&lines);
	fmt_data_free(&d);
	return 0;
}
