/*
 * fuzz_reader.c - the libFuzzer target over a data file as every reading
 * command sees it: the reader (fmt_read_mem), the analysis of its method,
 * and each view and export written to /dev/null: report by every view in
 * table, CSV and JSON, the call tree in all three (with and without the hot
 * path and a filter), callers/callees, folded, callgrind, pprof, Chrome
 * trace and the HTML page (a quarter of them per input, chosen by its
 * length, so that each run is quick).  Nothing may crash, leak or read out of bounds;
 * the sanitizers say when something does.  Built with clang by
 * tests/fuzz/CMakeLists.txt; how to run it is in doc/safety.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/an_view.h"
#include "../../format/format.h"
#include "../../output/out_export.h"
#include "../../output/out_html.h"
#include "../../output/out_tree.h"
#include "../../output/output.h"

static FILE *sink;

static void views(const struct fmt_data *d, struct an_result *r, const struct an_filter *f, int html)
{
	struct an_view v;
	an_view_build(d, r, f, &v);
	for (int fmt = 0; fmt < 3; fmt++) {
		out_tree(sink, &v, 0, 0, fmt);
		out_tree(sink, &v, 1, 1, fmt);
	}
	if (r->nfuncs) {
		out_butterfly(sink, &v, 0, 0, 0, 0);
		out_butterfly(sink, &v, r->nfuncs - 1, 1, 1, 0);
		out_butterfly(sink, &v, r->nfuncs / 2, 0, 2, 0);
	}
	if (html) {
		struct out_html_opts ho = {.min_share = OUT_HTML_MIN_SHARE, .max_nodes = 64, .max_edges = 64};
		struct out_html_stats st;
		out_html(sink, d, r, &v, &ho, &st);
		an_view_release(&v);
		return;
	}
	out_folded(sink, &v, AN_EE);
	out_folded(sink, &v, AN_AE);
	out_callgrind(sink, &v, d, r, f);
	fflush(sink);
	out_pprof(fileno(sink), &v, d, r, f);
	an_view_release(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!sink && !(sink = fopen("/dev/null", "w")))
		abort();
	struct fmt_data d;
	char err[512];
	if (fmt_read_mem(data, size, "fuzz", &d, err, sizeof(err)) < 0)
		return 0;
	int sampling = strcmp(d.method, "sampling") == 0;
	if (!sampling && strcmp(d.method, "instrumentation") != 0) {
		fmt_data_free(&d);
		return 0;
	}
	struct an_result r;
	struct an_opts ao = {0};
	if (sampling)
		an_sample_run(&d, NULL, &r);
	else
		an_instr_run(&d, &ao, &r);
	struct an_filter all = {0}, some = {.just_my_code = 1, .function = "*a*", .module = "*"};
	struct out_chrome_opts co = {.filter = &all, .max_events = 100};
	switch (size % 4) {
	case 0: {
		int nby = sampling ? OUT_BY_ADDRESS + 1 : OUT_BY_PROCESS + 1;
		for (int by = 0; by < nby; by++)
			for (int fmt = OUT_TABLE; fmt <= OUT_JSON; fmt++) {
				struct out_opts o = {.by = by, .format = fmt, .per_call = fmt == OUT_TABLE,
						     .limit = by * 3};
				out_report(sink, &d, &r, &o);
			}
		break;
	}
	case 1:
		views(&d, &r, &all, 0);
		break;
	case 2:
		views(&d, &r, &some, 0);
		out_chrome(sink, &d, &r, &co);
		co.filter = &some;
		out_chrome(sink, &d, &r, &co);
		break;
	case 3:
		views(&d, &r, &all, 1);
		break;
	}
	an_result_free(&r);
	fmt_data_free(&d);
	return 0;
}
