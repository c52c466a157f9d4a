/*
 * out_schema.c - the value schema of each method (out_schema.h): which
 * values it reports, under which keys and headings, and the writers of a
 * row's values that every view shares.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <string.h>

#include "out_schema.h"
#include "output.h"

/*
 * Instrumentation: the four values of doc/numbers.md, in nanoseconds;
 * the percentages of the elapsed values are of the session's EI, of the
 * application values of its AI.  A new value: one line here.
 */
static const struct out_column out_instr_cols[] = {
	/* value  key                      percentage key               alias  pct    table title     abbrev denom  tree: % only */
	{AN_EI, "elapsed_inclusive", "elapsed_inclusive_pct", "ei", "ei%", "Elapsed incl", "EI", AN_EI, 0},
	{AN_EE, "elapsed_exclusive", "elapsed_exclusive_pct", "ee", "ee%", "Elapsed excl", "EE", AN_EI, 0},
	{AN_AI, "application_inclusive", "application_inclusive_pct", "ai", "ai%", "Applic. incl", "AI", AN_AI, 1},
	{AN_AE, "application_exclusive", "application_exclusive_pct", "ae", "ae%", "Applic. excl", "AE", AN_AI, 1},
};

/* Sampling: samples with the function anywhere on the stack, and on top;
 * both percentages of the samples kept (the selection's). */
static const struct out_column out_sample_cols[] = {
	{AN_EI, "inclusive_samples", "inclusive_pct", "inclusive", "incl%", "Inclusive", "Incl", AN_EI, 0},
	{AN_EE, "exclusive_samples", "exclusive_pct", "exclusive", "excl%", "Exclusive", "Excl", AN_EI, 0},
};

static const struct out_schema out_schemas[OUT_NMETHODS] = {
	[OUT_METHOD_INSTRUMENTATION] = {
		.method = OUT_METHOD_INSTRUMENTATION, .name = "instrumentation", .unit = OUT_UNIT_NS,
		.calls = 1, .pct_beside = 1, .lines_on_request = 1,
		.sort_function = AN_EE, .sort_other = AN_EI,
		.table_value_width = 12, .table_pct_width = 6, .tree_value_width = 10,
		.ncols = sizeof(out_instr_cols) / sizeof(out_instr_cols[0]), .cols = out_instr_cols,
	},
	[OUT_METHOD_SAMPLING] = {
		.method = OUT_METHOD_SAMPLING, .name = "sampling", .unit = OUT_UNIT_SAMPLES,
		.calls = 0, .pct_beside = 0, .lines_on_request = 0,
		.sort_function = AN_EE, .sort_other = AN_EE,
		.table_value_width = 10, .table_pct_width = 7, .tree_value_width = 8,
		.ncols = sizeof(out_sample_cols) / sizeof(out_sample_cols[0]), .cols = out_sample_cols,
	},
};

const struct out_schema *out_schema_of(int sampling)
{
	return &out_schemas[sampling ? OUT_METHOD_SAMPLING : OUT_METHOD_INSTRUMENTATION];
}

int out_schema_has(const struct out_schema *s, int v)
{
	for (int c = 0; c < s->ncols; c++)
		if (s->cols[c].v == v)
			return 1;
	return 0;
}

int out_sort_column(const struct out_schema *s, const char *key)
{
	int col = -1;
	for (int m = 0; m < OUT_NMETHODS && col < 0; m++)
		for (int c = 0; c < out_schemas[m].ncols; c++) {
			const struct out_column *k = &out_schemas[m].cols[c];
			if (!strcasecmp(key, k->key) || !strcasecmp(key, k->alias) || !strcasecmp(key, k->pct_key) ||
			    !strcasecmp(key, k->pct_alias)) {
				col = k->v;
				break;
			}
		}
	if (col < 0)
		col = !strcasecmp(key, "calls")				       ? OUT_SORT_CALLS
		      : !strcasecmp(key, "name") || !strcasecmp(key, "function") ? OUT_SORT_NAME
		      : !strcasecmp(key, "module")				       ? OUT_SORT_MODULE
										       : -1;
	if (s && col >= 0 && col < OUT_SORT_CALLS && !out_schema_has(s, col))
		return -1;
	if (s && col == OUT_SORT_CALLS && !s->calls)
		return -1;
	return col;
}

void out_fmt_value(const struct out_schema *s, char *buf, size_t n, double x)
{
	if (s->unit == OUT_UNIT_NS)
		out_fmt_time(buf, n, x);
	else
		snprintf(buf, n, "%.0f", x);
}

void out_json_values(FILE *f, const struct out_schema *s, uint64_t calls, const double *v, const double *total)
{
	if (s->calls)
		fprintf(f, ",\"calls\":%" PRIu64, calls);
	for (int c = 0; c < s->ncols; c++) {
		const struct out_column *k = &s->cols[c];
		fprintf(f, ",\"%s\":%.0f", k->key, v[k->v]);
		if (s->pct_beside)
			fprintf(f, ",\"%s\":%.4f", k->pct_key, out_pct(v[k->v], total[k->denom]));
	}
	for (int c = 0; c < s->ncols && !s->pct_beside; c++)
		fprintf(f, ",\"%s\":%.4f", s->cols[c].pct_key, out_pct(v[s->cols[c].v], total[s->cols[c].denom]));
}

void out_csv_values_header(FILE *f, const struct out_schema *s, int pct_beside)
{
	if (s->calls)
		fputs(",calls", f);
	for (int c = 0; c < s->ncols; c++) {
		fprintf(f, ",%s", s->cols[c].key);
		if (pct_beside)
			fprintf(f, ",%s", s->cols[c].pct_key);
	}
	for (int c = 0; c < s->ncols && !pct_beside; c++)
		fprintf(f, ",%s", s->cols[c].pct_key);
}

void out_csv_values(FILE *f, const struct out_schema *s, uint64_t calls, const double *v, const double *total,
		    int pct_beside)
{
	if (s->calls)
		fprintf(f, ",%" PRIu64, calls);
	for (int c = 0; c < s->ncols; c++) {
		const struct out_column *k = &s->cols[c];
		fprintf(f, ",%.0f", v[k->v]);
		if (pct_beside)
			fprintf(f, ",%.4f", out_pct(v[k->v], total[k->denom]));
	}
	for (int c = 0; c < s->ncols && !pct_beside; c++)
		fprintf(f, ",%.4f", out_pct(v[s->cols[c].v], total[s->cols[c].denom]));
}

double out_per_call_avg(uint64_t calls, double callsum)
{
	return calls ? callsum / (double)calls : 0.0;
}

/* The average as printed beside the minimum and maximum, which are printed
 * whole: within them (one call of 1991903.08 ns was avg 1991903.1 against
 * min and max 1991903) */
static double avg_shown(uint64_t calls, double callsum, double vmin, double vmax)
{
	double a = out_per_call_avg(calls, callsum), lo = (double)(int64_t)(vmin + 0.5), hi = (double)(int64_t)(vmax + 0.5);
	return a < lo ? lo : a > hi ? hi : a;
}

void out_json_per_call(FILE *f, const struct out_schema *s, uint64_t calls, const double *callsum,
		       const double *vmin, const double *vmax)
{
	for (int c = 0; c < s->ncols && s->calls; c++) {
		const struct out_column *k = &s->cols[c];
		fprintf(f, ",\"%s_avg\":%.1f,\"%s_min\":%.0f,\"%s_max\":%.0f", k->key,
			avg_shown(calls, callsum[k->v], vmin[k->v], vmax[k->v]), k->key, vmin[k->v], k->key, vmax[k->v]);
	}
}

void out_csv_per_call_header(FILE *f, const struct out_schema *s)
{
	for (int c = 0; c < s->ncols && s->calls; c++)
		fprintf(f, ",%s_avg,%s_min,%s_max", s->cols[c].key, s->cols[c].key, s->cols[c].key);
}

void out_csv_per_call(FILE *f, const struct out_schema *s, uint64_t calls, const double *callsum,
		      const double *vmin, const double *vmax)
{
	for (int c = 0; c < s->ncols && s->calls; c++) {
		const struct out_column *k = &s->cols[c];
		fprintf(f, ",%.1f,%.0f,%.0f", avg_shown(calls, callsum[k->v], vmin[k->v], vmax[k->v]), vmin[k->v],
			vmax[k->v]);
	}
}
