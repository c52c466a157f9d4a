/*
 * an_lines.h - the four instrumentation values per source line and per
 * call-site address (doc/numbers.md, "Lines and instructions"), from a
 * replay of the events (an_walk_events) whose entries carry their call
 * sites (format version 2).
 *
 * An interval of a function's own code is charged to the event that ends
 * it: the call it reaches (its call site's line and address) or, when it
 * ends with the function's exit (whose return instruction the probes do not
 * know), to where the function's code was last known to be: the site of its
 * latest call, or its entry (the function's first line) if it made none.
 * A line's Exclusive values are the intervals charged to it; its Inclusive
 * values add the calls made on it, each interval once however many of the
 * line's calls are open (recursion counts once).  A library call is a call
 * made on the line that called it.
 */
#ifndef STINT_AN_LINES_H
#define STINT_AN_LINES_H

#include <stdint.h>
#include "analysis.h"

enum an_lines_mode {
	AN_LINES_ALL,          /* rows per source line ("file:line") and per address */
	AN_LINES_PER_FUNCTION, /* the same, kept apart per function holding the code */
	AN_LINES_OF_FUNCTION,  /* only the code of function fn (stint annotate) */
	AN_LINES_CALLERS,      /* fn's activations, per line (address) that called it */
	AN_LINES_EVENTS,       /* no rows: each charged interval and each call to o->cb */
};

/*
 * AN_LINES_EVENTS: one piece of cost at a place in a function's code.
 * call 0: an interval of fn's own code (its length in e, in a too when
 * it had no OS event); call 1: a call fn made there, when it returned, with
 * the callee's activation's inclusive values in e and a.  A frame a forked
 * child inherited (its copy of fork, say) is a call of its caller too, with
 * inherited set and no place (it was not called in this process), so that
 * its time is in its caller's inclusive values there as well.
 */
struct an_line_ev {
	int call;
	uint32_t fn, callee;        /* an_func indices (callee: calls only) */
	int fn_again, callee_again; /* the function is open below it too (recursion) */
	const char *file;           /* the place's source file and line; NULL if unknown */
	uint32_t line;
	uint64_t addr;              /* its address: a call site, or the function's entry */
	uint32_t proc;
	int inherited;              /* a call: the callee is a frame inherited across fork */
	double e, a;                /* ns */
};
typedef void (*an_line_event_fn)(void *ctx, const struct an_line_ev *e);

struct an_lines_opts {
	int no_compensation;
	const struct an_filter *filter; /* threads, and intervals with a matching function on the stack */
	int mode;                       /* enum an_lines_mode */
	uint32_t fn;                    /* OF_FUNCTION, CALLERS: the function */
	an_line_event_fn cb;            /* EVENTS */
	void *ctx;
	int paths;                      /* PER_FUNCTION: also the call paths by place (an_lines.paths) */
};

struct an_line_row {
	struct an_row row;  /* name: "file:line" (lines) or "0xOFFSET func+0xN" (addresses);
			     * module; calls made there; v[]: EI EE AI AE in ns */
	uint32_t fn;        /* the function whose code it is (CALLERS: the caller), ~0u if unknown */
	const char *file;   /* lines: the source file */
	uint32_t line;
	uint64_t addr;      /* addresses: the run-time address (a call's return address,
			     * or the function's entry); proc its process */
	uint64_t offset;    /* the address as an offset in its module's file */
	uint32_t proc;
};

struct an_lines {
	struct an_line_row *lines, *addrs;
	uint32_t nlines, naddrs;
	uint64_t sites;     /* entries that carried a call site with a known line */
	uint64_t entries;   /* entries walked */
	char **owned;       /* strings the rows point to */
	uint32_t nowned, capowned;
	/*
	 * With opts.paths: the calling-context tree of places, a place being a
	 * function at one of its lines (its line row, ~0u for a function with
	 * no line known).  A path holds each place once (recursion folded, as
	 * pprof wants it); per node its own values: EE, AE and the calls of
	 * functions entered there (at their first line).
	 */
	struct cct paths;   /* cct_node.fn: a place index; node 0 the root */
	double (*pv)[3];    /* per node */
	uint32_t *place_fn, *place_row;
	uint32_t nplaces;
};

/*
 * Walk every selected thread of d (r: its an_instr_run result, whose
 * functions it interns more of) and fill out.  Rows come unsorted.
 * Returns 0, -1 on OOM.
 */
int an_lines_run(const struct fmt_data *d, struct an_result *r, const struct an_lines_opts *o,
		 struct an_lines *out);
void an_lines_free(struct an_lines *l);

/* Whether a row holds nothing: no call made there, nothing charged to it. */
int an_line_row_empty(const struct an_line_row *x);

/* Copies of the rows into r->lines and r->addresses (what out_report prints);
 * their strings stay l's: free l after r. */
void an_lines_to_result(const struct an_lines *l, struct an_result *r);

#endif
