/*
 * out_html.h - the self-contained HTML report (out_html.c): summary,
 * sortable tables, a flame graph of the calling-context tree and the
 * callers/callees view in one file that opens offline.
 */
#ifndef STINT_OUT_HTML_H
#define STINT_OUT_HTML_H

#include <stdint.h>
#include <stdio.h>
#include "../analysis/an_lines.h"
#include "../analysis/an_view.h"
#include "../format/format.h"

struct out_html_opts {
	double min_share;        /* percent of the total inclusive value below which
				    call paths fold into "(other)" nodes; 0 keeps all */
	uint32_t max_nodes;      /* most flame-graph nodes in the page, "(other)" included */
	uint32_t max_edges;      /* most caller->callee edges in the page */
	int no_compensation;     /* the analysis ran without probe-cost compensation */
	const char *filter;      /* a description of the view's filter, or NULL */
	const struct an_lines *lines; /* instrumentation: values per line of each function
				       * (AN_LINES_PER_FUNCTION), for the source panel; or NULL */
};

/* Defaults of the options above. */
#define OUT_HTML_MIN_SHARE 0.001
#define OUT_HTML_MAX_NODES 50000
#define OUT_HTML_MAX_EDGES 200000

/* What out_html() pruned from the calling-context tree. */
struct out_html_stats {
	uint32_t source_nodes;   /* call paths in the view (root excluded) */
	uint32_t shown_nodes;    /* call paths in the page, "(other)" nodes included */
	uint32_t other_nodes;    /* "(other)" nodes made */
	uint32_t folded_nodes;   /* call paths folded into them */
	double threshold;        /* the inclusive value a path needed to be kept */
	uint32_t edges, dropped_edges;
};

/*
 * Write the HTML report of d, its analysis r and the view v of it to f.
 * The function, module, thread and process rows are r's (the caller
 * restricts them to v's selection when a filter is in force, as `stint
 * report` does); the flame graph and callers/callees come from v, whose
 * totals are the percentage denominators.  d may be NULL (no run details).
 * Returns 0, or -1 when writing failed (errno set); stats, if not NULL,
 * says what was pruned.
 */
int out_html(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct an_view *v,
	     const struct out_html_opts *o, struct out_html_stats *stats);

#endif
