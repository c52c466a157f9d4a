/*
 * an_view.h - the calling-context tree as views show it: the trees of the
 * threads that pass a filter merged into one, with "just my code" folding
 * system-library frames into their callers, and the function and module
 * tables, callers and callees folded from it.  Works for both methods: for
 * instrumentation v[] holds EI EE AI AE in nanoseconds, for sampling
 * v[AN_EI] inclusive and v[AN_EE] exclusive samples.
 */
#ifndef STINT_AN_VIEW_H
#define STINT_AN_VIEW_H

#include <stdint.h>
#include "analysis.h"

/*
 * The merged tree, a struct cct (analysis.h: one node per distinct call
 * path) with node values in nanoseconds (samples), the selection's totals
 * and the names.  Its nodes are at once tree.n and n (the fields of the
 * struct cct by name, for the views that read them).
 */
struct an_view {
	union {
		struct cct tree;
		struct {
			struct cct_node *n;
			uint32_t len, cap;
			struct util_index index; /* (parent, fn) -> node */
		};
	};
	int sampling;
	double total[AN_NVALUES];   /* the selection's totals (percent denominators) */
	const struct an_result *r;  /* names and modules */
	/* just-my-code: per view node, the exclusive values (EE, AE) of the
	 * hidden frames it was charged with: in its totals, in none of its
	 * calls (the per-call figures are of each call's own code) */
	double (*charged)[2];
	uint32_t ncharged;
};

/* Whether module path is a system library (for just-my-code). */
int an_is_system_module(const char *path);

/*
 * Build the view of r (the analysis of d, run with filter f: its trees hold
 * the selection's values only, see analysis.h) with f's just-my-code
 * folding.  Only the selected call paths are in the view; its totals are
 * the selection's.
 */
void an_view_build(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f,
		  struct an_view *v);
void an_view_release(struct an_view *v);

/*
 * Rows per function and per module folded from the view (recursion counted
 * once for inclusive values); *rows malloc'd, names point into r.
 */
void an_view_functions(const struct an_view *v, struct an_row **rows, uint32_t *n);
void an_view_modules(const struct an_view *v, struct an_row **rows, uint32_t *n);

/*
 * Callers and callees of function fn: one row per caller (callee) function,
 * with the values of fn's activations under that caller (of that callee's
 * activations under fn).  rows[].func is the caller (callee); self holds fn's
 * own totals, and the "[root]" caller row stands for activations with no
 * caller in the selection.
 */
void an_view_callers(const struct an_view *v, uint32_t fn, struct an_row **rows, uint32_t *n,
		     struct an_row *self);
void an_view_callees(const struct an_view *v, uint32_t fn, struct an_row **rows, uint32_t *n);

/* Per node of v, the outermost call of its function on its path
 * (cct_preorder_outer); malloc'd, v->len long. */
uint32_t *an_view_outermost(const struct an_view *v);

/* cct_preorder() of v's tree by function. */
uint32_t an_view_preorder(const struct an_view *v, uint32_t **order, uint32_t **same);

/* Functions whose name matches pattern (exact first, else fnmatch/substring). */
uint32_t an_find_functions(const struct an_result *r, const char *pattern, uint32_t *out, uint32_t max);

#endif
