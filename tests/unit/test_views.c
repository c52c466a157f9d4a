/*
 * test_views.c - every report view of two small made-up recordings (one
 * per method: the worked example of doc/numbers.md, and sampled stacks),
 * byte for byte against the golden files in tests/unit/golden/: the table,
 * CSV and JSON of each --by view, --per-call, the call tree, callers and
 * callees.  The views write each method's values from its schema
 * (output/out_schema.c); a change to what they write shows here.  After an
 * intended change, STINT_GOLDEN_UPDATE=1 rewrites the files (review the
 * diff).  Also the --sort keys of each method.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evbuild.h"
#include "../../format/fmt_sample.h"
#include "../../analysis/analysis.h"
#include "../../analysis/an_view.h"
#include "../../output/output.h"
#include "../../output/out_schema.h"
#include "../../output/out_tree.h"

#ifndef GOLDEN_DIR
#error "GOLDEN_DIR: the folder of the golden files"
#endif

/* doc/numbers.md (instrumentation): main calls a, then b, which sleeps; two threads. */
static void instr_data(struct fmt_data *d)
{
	static const char *const names[] = {"main", "a", "b", "lib:memcpy"};
	struct evb b;
	evb_data(d, names, 4);
	for (uint32_t t = 0; t < 2; t++) {
		evb_init(&b);
		evb_enter(&b, 0, 0x1000, 0);
		evb_enter(&b, 10, 0x2000, 0);
		evb_enter(&b, 12, 0x81000 + 0x2000, 0);
		evb_exit(&b, 15, 0);
		evb_exit(&b, 30, 0);
		evb_enter(&b, 35, 0x3000, 0);
		evb_exit(&b, 85 + 5 * t, 1); /* b slept */
		evb_enter(&b, 90 + 5 * t, 0x2000, 0);
		evb_exit(&b, 93 + 5 * t, 0);
		evb_exit(&b, 100 + 5 * t, 0);
		evb_add_thread(d, &b, 100 + t);
	}
	d->wall_start = 1700000000ull * 1000000000ull;
	d->duration_ns = 105000;
}

/* Sampled stacks, innermost first, over main -> a -> b and main -> b. */
static void sample_data(struct fmt_data *d)
{
	static const char *const names[] = {"main", "a", "b"};
	evb_data(d, names, 3);
	free(d->method);
	d->method = strdup("sampling");
	free(d->clock);
	d->clock = strdup("task-clock");
	free(d->os);
	d->os = strdup("dwarf");
	d->rate = 1000;
	free(d->notes);
	d->notes = strdup("lost=2 stack=16384 stackout=1");
	struct fmt_process *p = &d->procs[0];
	p->nlines = 3;
	p->lines = calloc(3, sizeof(*p->lines));
	p->lines[0] = (struct fmt_line){0x1010, strdup("m.c"), 3, NULL, 0};
	p->lines[1] = (struct fmt_line){0x2010, strdup("a.c"), 10, NULL, 0};
	p->lines[2] = (struct fmt_line){0x3010, strdup("b.c"), 7, NULL, 0};
	static const uint64_t stacks[][3] = {{0x3010, 0x2011, 0x1011}, {0x3010, 0x2011, 0x1011},
					    {0x2010, 0x1011, 0}, {0x3010, 0x1021, 0}, {0x1010, 0, 0}};
	static const uint32_t depth[] = {3, 3, 2, 2, 1};
	uint8_t *buf = malloc(1024), *e = buf;
	for (int i = 0; i < 5; i++)
		e = fmt_put_sample(e, 1000 * (uint64_t)(i + 1), stacks[i], depth[i], 0);
	d->nthreads = 1;
	d->threads = calloc(1, sizeof(*d->threads));
	d->threads[0] = (struct fmt_thread){.tid = 100, .name = strdup("t"), .nevents = 5, .ev = buf,
					    .ev_len = (size_t)(e - buf), .ev_owned = buf};
	d->wall_start = 1700000000ull * 1000000000ull;
	d->duration_ns = 5000000;
}

/* Everything the views write of d, into one text. */
static char *all_views(const struct fmt_data *d, const struct an_result *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	static const char *const by[] = {"function", "module", "thread", "process", "line", "address"};
	static const char *const fmt[] = {"table", "csv", "json"};
	for (int b = 0; b < 6; b++)
		for (int k = 0; k < 3; k++) {
			/* line and address rows: instrumentation computes them on request only */
			if (!r->sampling && b >= OUT_BY_LINE)
				continue;
			struct out_opts o = {.by = b, .format = k};
			fprintf(f, "==== --by %s --format %s\n", by[b], fmt[k]);
			assert_int_equal(out_report(f, d, r, &o), 0);
		}
	struct out_opts pc = {.by = OUT_BY_FUNCTION, .per_call = 1, .width = 120, .color = 1, .sort = "name"};
	fputs("==== --per-call --width 120 --color --sort name\n", f);
	assert_int_equal(out_report(f, d, r, &pc), 0);
	struct out_opts sel = {.by = OUT_BY_FUNCTION, .format = OUT_JSON, .selection = "--function b", .limit = 2};
	fputs("==== --format json --limit 2 (a selection)\n", f);
	assert_int_equal(out_report(f, d, r, &sel), 0);
	struct an_view v;
	struct an_filter whole = {0};
	an_view_build(d, r, &whole, &v);
	for (int k = 0; k < 3; k++) {
		fprintf(f, "==== --tree --threshold 0 --format %s\n", fmt[k]);
		out_tree(f, &v, 0, 0, k);
		fprintf(f, "==== --tree --hot-path --format %s\n", fmt[k]);
		out_tree(f, &v, 1, 1, k);
		uint32_t fn;
		assert_int_equal(an_find_functions(r, "b", &fn, 1), 1);
		fprintf(f, "==== callers b --format %s\n", fmt[k]);
		out_butterfly(f, &v, fn, 0, k, 0);
		fprintf(f, "==== callees b --format %s\n", fmt[k]);
		out_butterfly(f, &v, fn, 1, k, 0);
	}
	an_view_release(&v);
	fclose(f);
	return text;
}

static void check_golden(const char *name, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", GOLDEN_DIR, name);
	const char *update = getenv("STINT_GOLDEN_UPDATE");
	if (update && *update == '1') {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		return;
	}
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *want = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&want, &cap, '\0', f);
	fclose(f);
	assert_true(n >= 0);
	if (strcmp(want, text) != 0) { /* say where, then fail */
		size_t i = 0;
		while (want[i] && want[i] == text[i])
			i++;
		size_t from = i > 200 ? i - 200 : 0;
		fprintf(stderr, "%s differs at byte %zu:\n--- want:\n%.400s\n--- got:\n%.400s\n", name, i, want + from,
			text + from);
	}
	assert_string_equal(want, text);
	free(want);
}

/* The views of d, analysed by its method, against the golden file. */
static void check_views(struct fmt_data *d, const char *golden)
{
	struct an_result r;
	struct an_opts o = {0};
	if (strcmp(d->method, "sampling") == 0)
		an_sample_run(d, &o, &r);
	else
		an_instr_run(d, &o, &r);
	char *text = all_views(d, &r);
	check_golden(golden, text);
	free(text);
	an_result_free(&r);
	fmt_data_free(d);
}

static void test_instrumentation_views(void **state)
{
	(void)state;
	struct fmt_data d;
	instr_data(&d);
	check_views(&d, "views_instrumentation.txt");
}

static void test_sampling_views(void **state)
{
	(void)state;
	struct fmt_data d;
	sample_data(&d);
	check_views(&d, "views_sampling.txt");
}

/* --sort: every method's keys are known; a method refuses the values it does not report. */
static void test_sort_keys(void **state)
{
	(void)state;
	assert_int_equal(out_sort_key_ok("ei"), 0);
	assert_int_equal(out_sort_key_ok("incl%"), 0);
	assert_int_equal(out_sort_key_ok("Application_Exclusive_pct"), 0);
	assert_int_equal(out_sort_key_ok("function"), 0);
	assert_int_equal(out_sort_key_ok("bogus"), -1);
	const struct out_schema *in = out_schema_of(0), *sa = out_schema_of(1);
	assert_int_equal(out_sort_column(in, "ae%"), AN_AE);
	assert_int_equal(out_sort_column(in, "inclusive"), AN_EI);
	assert_int_equal(out_sort_column(in, "calls"), OUT_SORT_CALLS);
	assert_int_equal(out_sort_column(sa, "exclusive_pct"), AN_EE);
	assert_int_equal(out_sort_column(sa, "elapsed_inclusive"), AN_EI);
	assert_int_equal(out_sort_column(sa, "ai"), -1);
	assert_int_equal(out_sort_column(sa, "calls"), -1);
	assert_int_equal(out_sort_column(sa, "module"), OUT_SORT_MODULE);
	/* each column's keys are its own */
	for (int m = 0; m < 2; m++) {
		const struct out_schema *s = out_schema_of(m);
		for (int c = 0; c < s->ncols; c++) {
			assert_true(s->cols[c].v >= 0 && s->cols[c].v < AN_NVALUES);
			assert_true(s->cols[c].denom >= 0 && s->cols[c].denom < AN_NVALUES);
			assert_int_equal(out_sort_column(s, s->cols[c].key), s->cols[c].v);
			assert_int_equal(out_sort_column(s, s->cols[c].pct_alias), s->cols[c].v);
		}
	}
}

int main(void)
{
	setenv("TZ", "UTC", 1); /* the table's header gives the local time of the recording */
	tzset();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instrumentation_views),
		cmocka_unit_test(test_sampling_views),
		cmocka_unit_test(test_sort_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
