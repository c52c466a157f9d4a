/*
 * out_schema.h - the values each method reports, as one table per method
 * (its value schema): the views (report table, CSV and JSON, call tree,
 * callers/callees, HTML data) iterate over it instead of asking which
 * method recorded the file, so each view is written once.
 *
 * Adding a value to a method is one line in its column table in
 * out_schema.c (the value itself comes from analysis/: an index into
 * an_row.v and cct_node.v); every view then shows it, with its JSON key,
 * CSV header, table heading, percentage and --sort keys.
 */
#ifndef STINT_OUT_SCHEMA_H
#define STINT_OUT_SCHEMA_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

/* How a value is counted, and so written. */
enum out_unit {
	OUT_UNIT_NS,      /* nanoseconds: "12.34 ms" in tables, whole ns in CSV and JSON */
	OUT_UNIT_SAMPLES, /* a count of samples */
};

/* The methods, as indices (e.g. of a view's per-method text). */
enum out_method { OUT_METHOD_INSTRUMENTATION, OUT_METHOD_SAMPLING, OUT_NMETHODS };

/* One value column. */
struct out_column {
	int v;                  /* the value: index into an_row.v and cct_node.v (enum an_value) */
	const char *key;        /* JSON key and CSV header; "<key>_avg", "_min", "_max"
				 * its per-call values */
	const char *pct_key;    /* the same of its percentage */
	const char *alias;      /* the short --sort name of the value */
	const char *pct_alias;  /* the short --sort name of its percentage */
	const char *title;      /* heading in the report's table */
	const char *abbrev;     /* short heading: call tree, per-call columns ("EI avg") */
	int denom;              /* the percentage is of the selection's total of this value */
	int tree_pct_only;      /* the call tree's text shows only its percentage */
};

struct out_schema {
	int method;             /* enum out_method */
	const char *name;       /* "instrumentation", "sampling": the JSON "method" */
	int unit;               /* enum out_unit, of every column */
	int calls;              /* rows count calls: a calls column, and per function the
				 * average, minimum and maximum per call of each value */
	int pct_beside;         /* JSON and the report's CSV: each percentage right after its
				 * value; else all percentages after all values */
	int lines_on_request;   /* the report's JSON has "lines" and "addresses" only
				 * with --by line|address (computed then only) */
	int sort_function;      /* the default sort: of the function view, */
	int sort_other;         /* and of the others (an_value) */
	int table_value_width;  /* the report's table: a value's width, */
	int table_pct_width;    /* and its percentage's */
	int tree_value_width;   /* the call tree's text: a value's width */
	int ncols;
	const struct out_column *cols;
};

/* The schema of the method that recorded the analysis (an_result.sampling). */
const struct out_schema *out_schema_of(int sampling);
/* Whether s reports value v (an_value). */
int out_schema_has(const struct out_schema *s, int v);

/*
 * --sort key (a column's key, alias, percentage key or alias, of any
 * method; calls, name, module) to its sort column: the value index, or
 * OUT_SORT_CALLS / _NAME / _MODULE; -1 if unknown.  With s, also -1 for a
 * value s does not report (or calls, when s counts none).
 */
enum { OUT_SORT_CALLS = 10, OUT_SORT_NAME = 11, OUT_SORT_MODULE = 12 };
int out_sort_column(const struct out_schema *s, const char *key);

/* A value as a table shows it: a time ("12.34 ms") or a count. */
void out_fmt_value(const struct out_schema *s, char *buf, size_t n, double x);

/*
 * A row's values: calls (when the schema counts them) and each column with
 * its percentage of total[col.denom], in JSON (",\"key\":..." members, to
 * follow others) or as CSV fields (each after a comma).  pct_beside: as
 * s->pct_beside, or 0 for all percentages after the values.
 */
void out_json_values(FILE *f, const struct out_schema *s, uint64_t calls, const double *v, const double *total);
void out_csv_values(FILE *f, const struct out_schema *s, uint64_t calls, const double *v, const double *total,
		    int pct_beside);
void out_csv_values_header(FILE *f, const struct out_schema *s, int pct_beside);
/*
 * The per-call members and fields of a function's row (nothing when s counts
 * no calls).  callsum: the calls' values, each activation whole (an_row),
 * so that the average lies between the minimum and the maximum per call,
 * recursion or not.
 */
double out_per_call_avg(uint64_t calls, double callsum);
void out_json_per_call(FILE *f, const struct out_schema *s, uint64_t calls, const double *callsum,
		       const double *vmin, const double *vmax);
void out_csv_per_call(FILE *f, const struct out_schema *s, uint64_t calls, const double *callsum,
		      const double *vmin, const double *vmax);
void out_csv_per_call_header(FILE *f, const struct out_schema *s);

#endif
