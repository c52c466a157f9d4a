/*
 * out_diff.c - `stint diff`'s table, CSV and JSON of two runs' matched
 * function rows (analysis/an_diff.h).  The CSV and JSON keys are the
 * method's value schema (out_schema.c): its values (instrumentation, then
 * calls) or, for sampling, their percentages (an_diff_rows compares
 * sampling as percentages of each run's samples).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "out_diff.h"
#include "output.h"
#include "../lib/util.h"
#include "out_schema.h"

/* The schema's key of the value a diff compares in column c. */
static const char *diff_key(const struct out_schema *s, int c)
{
	return s->unit == OUT_UNIT_SAMPLES ? s->cols[c].pct_key : s->cols[c].key;
}

int out_diff_sort_key(int sampling, const char *key)
{
	const struct out_schema *s = out_schema_of(sampling);
	for (int c = 0; c < s->ncols; c++)
		if (strcmp(key, s->cols[c].alias) == 0 || strcmp(key, diff_key(s, c)) == 0)
			return s->cols[c].v;
	if (s->calls && strcmp(key, "calls") == 0)
		return AN_NVALUES;
	return -1;
}

/* A change: "+12.34 ms" (a time) or "+1.25" (percentage points). */
static void out_fmt_delta(const struct out_schema *s, char *buf, size_t n, double v)
{
	if (s->unit == OUT_UNIT_SAMPLES) {
		snprintf(buf, n, "%+.2f", v);
		return;
	}
	char t[32];
	out_fmt_time(t, sizeof(t), fabs(v));
	snprintf(buf, n, "%s%.30s", v < 0 ? "-" : "+", t);
}

static void diff_json(FILE *f, const struct out_schema *s, const struct out_diff_run *a, const struct out_diff_run *b,
		      const struct an_diff_row *rows, uint32_t n)
{
	fprintf(f, "{\"method\":\"%s\",\"a\":", a->method);
	out_json_str(f, a->path);
	fputs(",\"b\":", f);
	out_json_str(f, b->path);
	fputs(",\"functions\":[", f);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		out_json_str(f, rows[i].name);
		fputs(",\"module\":", f);
		out_json_str(f, rows[i].module);
		if (rows[i].file && *rows[i].file) {
			fputs(",\"file\":", f);
			out_json_str(f, rows[i].file);
		}
		fprintf(f, ",\"in_a\":%s,\"in_b\":%s", rows[i].in_a ? "true" : "false", rows[i].in_b ? "true" : "false");
		for (int c = 0; c < s->ncols + (s->calls ? 1 : 0); c++) {
			const char *k = c < s->ncols ? diff_key(s, c) : "calls";
			int v = c < s->ncols ? s->cols[c].v : AN_NVALUES;
			fprintf(f, ",\"a_%s\":%.4f,\"b_%s\":%.4f,\"delta_%s\":%.4f", k, rows[i].a[v], k, rows[i].b[v], k,
				rows[i].b[v] - rows[i].a[v]);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static void diff_csv(FILE *f, const struct out_schema *s, const struct an_diff_row *rows, uint32_t n)
{
	int ncols = s->ncols + (s->calls ? 1 : 0);
	fputs("name,module", f);
	for (int c = 0; c < ncols; c++) {
		const char *k = c < s->ncols ? diff_key(s, c) : "calls";
		fprintf(f, ",a_%s,b_%s,delta_%s", k, k, k);
	}
	fputc('\n', f);
	for (uint32_t i = 0; i < n; i++) {
		out_csv_str(f, rows[i].name);
		fputc(',', f);
		out_csv_str(f, rows[i].module);
		for (int c = 0; c < ncols; c++) {
			int v = c < s->ncols ? s->cols[c].v : AN_NVALUES;
			fprintf(f, ",%.4f,%.4f,%.4f", rows[i].a[v], rows[i].b[v], rows[i].b[v] - rows[i].a[v]);
		}
		fputc('\n', f);
	}
}

/* The table's columns, per method: instrumentation's exclusive times and
 * every change; sampling's exclusive and inclusive shares and changes. */
static void diff_instr_header(FILE *f, int width)
{
	fprintf(f, "\n%11s %11s %11s %11s %11s %11s %11s  ", "EE A", "EE B", "dEE", "dEI", "dAI", "dAE", "dCalls");
	out_put_label(f, width, 85, "Function [module]");
}

static void diff_instr_row(FILE *f, const struct out_schema *s, const struct an_diff_row *r)
{
	char b[AN_NVALUES][32], ea[32], eb[32];
	out_fmt_delta(s, ea, 32, r->a[AN_EE]);
	out_fmt_delta(s, eb, 32, r->b[AN_EE]);
	for (int k = 0; k < AN_NVALUES; k++)
		out_fmt_delta(s, b[k], 32, r->b[k] - r->a[k]);
	fprintf(f, "%11s %11s %11s %11s %11s %11s %+11.0f  ", ea + 1, eb + 1, b[AN_EE], b[AN_EI], b[AN_AI], b[AN_AE],
		r->b[AN_NVALUES] - r->a[AN_NVALUES]);
}

static void diff_sample_header(FILE *f, int width)
{
	fprintf(f, "# changes in percentage points of each run's samples\n\n%10s %10s %10s %10s %10s  ", "Excl% A",
		"Excl% B", "dExcl%", "Incl% B", "dIncl%");
	out_put_label(f, width, 56, "Function [module]");
}

static void diff_sample_row(FILE *f, const struct out_schema *s, const struct an_diff_row *r)
{
	char de[32], di[32];
	out_fmt_delta(s, de, 32, r->b[AN_EE] - r->a[AN_EE]);
	out_fmt_delta(s, di, 32, r->b[AN_EI] - r->a[AN_EI]);
	fprintf(f, "%10.2f %10.2f %10s %10.2f %10s  ", r->a[AN_EE], r->b[AN_EE], de, r->b[AN_EI], di);
}

static const struct {
	void (*header)(FILE *f, int width);
	void (*row)(FILE *f, const struct out_schema *s, const struct an_diff_row *r);
} diff_table[OUT_NMETHODS] = {
	[OUT_METHOD_INSTRUMENTATION] = {diff_instr_header, diff_instr_row},
	[OUT_METHOD_SAMPLING] = {diff_sample_header, diff_sample_row},
};

void out_diff(FILE *f, int sampling, const struct out_diff_run *a, const struct out_diff_run *b,
	      const struct an_diff_row *rows, uint32_t n, int format, int width)
{
	const struct out_schema *s = out_schema_of(sampling);
	if (format == OUT_JSON) {
		diff_json(f, s, a, b, rows, n);
		return;
	}
	if (format == OUT_CSV) {
		diff_csv(f, s, rows, n);
		return;
	}
	fprintf(f, "# stint diff (%s): A = %s (%s), B = %s (%s)\n", a->method, a->path, a->command, b->path,
		b->command);
	diff_table[s->method].header(f, width);
	for (uint32_t i = 0; i < n; i++) {
		const struct an_diff_row *r = &rows[i];
		diff_table[s->method].row(f, s, r);
		int used = s->method == OUT_METHOD_SAMPLING ? 56 : 85; /* (the row's columns) */
		char *label = xasprintf("%s%s%s " OUT_MOD_FMT "%s",
					r->same_name && r->file && *r->file ? r->file : "", /* (as report labels them) */
					r->same_name && r->file && *r->file ? ":" : "", r->name, OUT_MOD_ARGS(r->module),
					!r->in_a ? " (new in B)" : !r->in_b ? " (only in A)" : "");
		out_put_label(f, width, used, label);
		free(label);
	}
}
