/*
 * analysis.h - the engine that turns a data file's events into the values
 * of doc/numbers.md: one streaming pass per thread builds a calling-context tree
 * (CCT), and the per-function, per-module, per-thread, per-process and
 * session rows are derived from the trees.  No I/O happens here.
 *
 * Errors: the analyses cannot fail on any input (a damaged file is read as
 * far as it goes, an_thread.damaged); running out of memory exits with one
 * line (lib/util.h, x*alloc), as everywhere in stint.
 *
 * Instrumentation values are kept in "fixed ticks" (clock ticks << 10, so
 * the probe-cost compensation, a fraction of a tick, can be subtracted
 * exactly) until the rows (an_row) convert them to nanoseconds.
 */
#ifndef STINT_ANALYSIS_H
#define STINT_ANALYSIS_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../format/format.h"
#include "../lib/util.h"

enum an_value { AN_EI = 0, AN_EE = 1, AN_AI = 2, AN_AE = 3, AN_NVALUES = 4 };

struct an_result;

/* A function, identified across processes by (module, name). */
struct an_func {
	char *name;
	uint32_t module; /* index into an_result.mods */
	char *file;
	uint32_t line;
};

struct an_module {
	char *path;
	const char *base; /* points into path */
};

/*
 * The calling-context tree, the one tree type of the analyses, the views
 * and the exports.  One node is one distinct call path; v[] holds the four
 * values of the activations on this path (recursion is not folded here: a
 * recursive call is a deeper node), vmin/vmax the extremes per call.
 *
 * Units: a thread's tree (an_thread.tree) holds fixed ticks for
 * instrumentation (whole numbers, exact in a double up to 2^53, 49 minutes
 * of one call path at 3 GHz) or samples; a view (an_view.h) nanoseconds or
 * samples.
 */
struct cct_node {
	uint32_t fn;        /* an_func index; ~0u for the root */
	uint32_t parent;    /* node index; the root is node 0 with parent ~0u */
	uint32_t child;     /* first child, 0 if none */
	uint32_t next;      /* next sibling, 0 if none */
	uint64_t calls;
	double v[AN_NVALUES];
	double vmin[AN_NVALUES], vmax[AN_NVALUES]; /* vmin < 0: no call yet */
	uint8_t selected;   /* some activation (sample) on this path is in the
			     * filter's selection; the selected nodes form a
			     * subtree holding the root (an_select_ancestors) */
};

/*
 * An activation that is no call: a frame a forked child inherits, or one
 * open when recording began (attach).  Its values are in its node's v[], and
 * in no call's: the per-call average leaves them out.  Few (at most the
 * depth of a thread's stack when it began), so kept aside, not in each node.
 */
struct cct_uncounted {
	uint32_t node;
	double v[AN_NVALUES];
};

struct cct {
	struct cct_node *n;
	uint32_t len, cap;
	struct util_index index; /* (parent, fn) -> node */
	struct cct_uncounted *unc;
	uint32_t nunc, uncap;
};

void cct_init(struct cct *t);
void cct_release(struct cct *t);
/* The child of parent for fn, created if missing. */
uint32_t cct_child(struct cct *t, uint32_t parent, uint32_t fn);
/* Note values v (already in node's v[]) as those of an activation that is no call. */
void cct_add_uncounted(struct cct *t, uint32_t node, const double *v);

/*
 * Depth-first order of t's nodes (root excluded) into *order, and per node
 * in *same how many of its ancestors share its key: its function, or with
 * by_module its function's module (r names them).  Both malloc'd, t->len
 * long.  Returns the number of nodes in *order.  This one walk is how
 * recursion counts once: an inclusive value is summed only where same is 0.
 */
uint32_t cct_preorder(const struct cct *t, const struct an_result *r, int by_module, uint32_t **order,
		      uint32_t **same);
/* The same, and per node in *outermost the outermost node of its key on its
 * path (itself where same is 0): the call under whose caller a recursive
 * call's time is counted (callers, callees, the HTML page's edges). */
uint32_t cct_preorder_outer(const struct cct *t, const struct an_result *r, int by_module, uint32_t **order,
			    uint32_t **same, uint32_t **outermost);

/* A report row, in nanoseconds (instrumentation) or samples (sampling). */
struct an_row {
	const char *name;
	const char *module;
	uint64_t calls;
	double v[AN_NVALUES];    /* instrumentation: EI EE AI AE; sampling: incl, excl */
	double vmin[AN_NVALUES], vmax[AN_NVALUES];
	double callsum[AN_NVALUES]; /* the calls' values, each activation whole (the per-call average's) */
	uint32_t pid, tid;
	const char *extra;       /* thread name, or process command */
	uint32_t func;           /* an_func index, functions only */
	const char *file;        /* functions: the source file defining it, "" unknown */
};

struct an_thread {
	uint32_t proc, index;  /* fmt_data indices */
	struct cct tree;
	uint64_t total_e, total_a; /* fixed ticks (sampling: samples): EI and AI of
				    * the thread's selected intervals (samples) */
	int selected;              /* the thread passes the filter's pid and tid */
	uint64_t nsel;             /* its selected intervals (samples) */
	uint64_t whole_e, whole_a; /* EI and AI of all its intervals (samples) */
	uint64_t compensated;      /* fixed ticks subtracted */
	uint64_t probe_events;     /* records of probes of instrumented functions */
	uint64_t lib_events;       /* records of library-call probes */
	uint64_t overhead;         /* fixed ticks of OVERHEAD intervals */
	uint64_t unsubtracted;     /* fixed ticks of probe cost not subtracted:
				    * intervals shorter than it, a probe's half
				    * inside an OVERHEAD interval or after the
				    * thread's last record.  So compensated =
				    * probe_events x cost + lib_events x lib cost
				    * + overhead - unsubtracted, exactly */
	uint64_t events, lost;
	int damaged;               /* events unreadable past some point */
};

/*
 * A filter selects samples (sampling) or intervals (instrumentation): those
 * of the threads that pass pid and tid and, when module or function is
 * set, those with a matching function on their stack.  Every value and
 * every percentage is then computed from the selection only.
 */
struct an_filter {
	uint32_t pid;           /* 0: every process */
	uint32_t tid;           /* 0: every thread */
	const char *module;     /* NULL, or a module's base name (fnmatch pattern) */
	const char *function;   /* NULL, or a function-name pattern (fnmatch) */
	int just_my_code;       /* views fold system-library frames into their callers */
};

/* Whether the filter selects anything less than the whole run. */
int an_filter_active(const struct an_filter *f);

/* Whether function fn passes the module and function parts of the filter. */
int an_filter_match(const struct an_result *r, const struct an_filter *f, uint32_t fn);

/* Whether thread ti of d passes the pid and tid parts of the filter. */
int an_filter_thread(const struct fmt_data *d, const struct an_filter *f, uint32_t ti);

/* an_filter_match() remembered per function (the analyses ask per event). */
struct an_match_cache {
	uint8_t *k; /* per function: 0 not asked yet, 1 no, 2 yes */
	uint32_t cap;
};
int an_filter_match_cached(const struct an_result *r, const struct an_filter *f, struct an_match_cache *c,
			   uint32_t fn);
void an_match_cache_free(struct an_match_cache *c);

/* Mark the ancestors of every selected node of t as selected. */
void an_select_ancestors(struct cct *t);

struct an_opts {
	int no_compensation;
	const struct an_filter *filter; /* NULL: the whole run */
};

struct an_result {
	int sampling;
	struct an_func *funcs;
	uint32_t nfuncs, capfuncs;
	struct an_module *mods;
	uint32_t nmods, capmods;
	struct an_thread *threads;
	uint32_t nthreads;
	double fixed_to_ns;     /* multiply fixed ticks by this for ns */
	double cost_ns;         /* mean probe cost per event, ns */
	double lib_cost_ns;     /* mean cost per library-call event, ns */
	double call_cost_ns;    /* mean of two function probes' cost, the part in
				 * the interval from an entry to its exit, ns */
	uint32_t patched_cost_procs; /* processes whose cost is that of functions
				      * patched at load (fmt_process.cost_patched) */
	uint32_t cost_samples;  /* calibrations the cost is the median of, over
				 * the processes (1: the start-up's only) */
	double cost_min_ns, cost_max_ns; /* the least and greatest of them */
	double compensated_ns;  /* total subtracted */
	double overhead_ns;     /* of it, the profiler's own time (OVERHEAD records) */
	double unsubtracted_ns; /* probe cost not subtracted (an_thread) */
	uint64_t probe_events, lib_events;
	uint64_t events, lost;
	uint32_t damaged_threads;
	int filtered;           /* a filter selected part of the run */
	double whole[AN_NVALUES]; /* the whole run's session totals (the selection's
				   * are in session) */
	/* rows, filled by an_finish() */
	struct an_row session;
	struct an_row *functions, *modules, *thread_rows, *processes;
	uint32_t nfunctions, nmodules, nthread_rows, nprocesses;
	/* sampling */
	uint64_t samples, lost_samples, cut_stacks;
	struct an_row *lines, *addresses;
	uint32_t nlines, naddresses;
	char **owned;          /* strings the line/address rows point to */
	uint32_t nowned;
	/* for interning: (name, module) -> function, path -> module */
	struct util_index fn_index, mod_index;
	/* set while an_instr_run's workers walk threads at once: interning and
	 * reading funcs/mods (which interning may move) then hold it */
	pthread_mutex_t *intern_lock;
};

/*
 * Number modules by path and functions by (module, name), the trees'
 * nodes renumbered with them: interning numbers them in the order they are
 * met, which an_instr_run's threads make vary from run to run, and rows
 * that tie are listed in this order.
 */
void an_canonical_order(struct an_result *r);
void an_module_labels(struct an_result *r); /* base: the path where two modules share a file name */

/* address -> function index, one per process */
struct an_addr_map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t len, cap;
	uint8_t timed_known, timed; /* whether the process's modules changed */
};

/* The function at address a of process p, interned in r (cached in m). */
uint32_t an_resolve(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
		    uint64_t a);

/* The same for an event at time ticks: where a library was unloaded and
 * another loaded at its address, the one mapped then (fmt_module.load). */
uint32_t an_resolve_at(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
		       uint64_t a, uint64_t ticks);
void an_addr_map_free(struct an_addr_map *m);

/* The interned functions of the inline chains at sampled addresses, one per process. */
struct an_inline_cache {
	uint32_t *at;   /* per fmt_process.lines entry: offset into pool, ~0u if not yet */
	uint32_t *pool; /* function indices, each chain outermost first */
	uint32_t npool, cappool;
};
void an_inline_cache_free(struct an_inline_cache *c);

/*
 * One sampled stack (pcs innermost first; callers are return addresses) as
 * functions, innermost first (doc/numbers.md, sampling): each address gives the
 * functions inlined there, innermost on top, then the function holding the
 * code.  Fills (*fns)[], grown as needed (capacity *cap), and if outer is
 * not NULL outer[i], the function holding pcs[i]; returns how many.
 */
size_t an_sample_frames(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
			struct an_inline_cache *c, const uint64_t *pcs, unsigned n, uint32_t *outer,
			uint32_t **fns, size_t *cap);

/* Per function or module sums over trees (in the trees' units). */
struct an_acc {
	int seen; /* some selected node of this function (module) */
	uint64_t calls;
	double v[AN_NVALUES], vmin[AN_NVALUES], vmax[AN_NVALUES]; /* vmin < 0: none */
	double callsum[AN_NVALUES]; /* the calls' values, each activation whole: an inclusive value
				     * counts a recursion's inner activations again, as the
				     * per-call minimum and maximum do; what no call holds
				     * (cct_uncounted) is left out */
};

/* n accumulators, empty (calloc'd, free() them). */
struct an_acc *an_acc_new(uint32_t n);

/*
 * Add a tree's selected nodes to per-function (fa) and per-module (ma)
 * sums; either may be NULL.  Exclusive values (EE, AE) are summed over all
 * nodes; inclusive ones (EI, AI) only over nodes with no ancestor of the
 * same function (module), so recursion counts once (cct_preorder).
 */
void an_fold_tree(const struct an_result *r, const struct cct *t, struct an_acc *fa, struct an_acc *ma);

/* Run the instrumentation analysis of d into r, of o->filter's selection. */
void an_instr_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r);
/* Run the sampling analysis of d into r (doc/numbers.md, sampling), of the
 * selection of o->filter (o may be NULL: the whole run). */
void an_sample_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r);

void an_result_free(struct an_result *r);

/*
 * One function's samples (stint annotate): per source line and per
 * address of its frames, inclusive (samples with it there, once each) and
 * exclusive (on top).  A frame of the function is the function holding a
 * sampled address, or a function inlined there; its line is the call site
 * of the next function inlined into it, or, innermost, the address's own
 * line.  Callers' return addresses count one byte back (their call).
 */
struct an_fn_count {
	const char *file;   /* lines: the source file (points into the fmt_data) */
	uint32_t line;
	uint64_t addr;      /* addresses: the offset in the module file */
	uint64_t incl, excl;
};

struct an_fn_samples {
	const char *module;          /* the module file holding it (its first frame's), NULL if none */
	const char *other;           /* another module with a function of that name, not counted
				      * (an_sample_function without a module), NULL if none */
	const char *other_file;      /* another source file defining a function of that name in
				      * the module (two static ones), not counted, NULL if none */
	const char *decl_file;       /* where it is declared ("" or NULL if not known) */
	uint32_t decl_line;
	uint64_t offset, size;       /* its code in the module file (an inlined one: size 1) */
	uint64_t total, incl, excl;  /* every sample; those with it on the stack; on top */
	struct an_fn_count *lines, *addrs; /* in the order first sampled */
	size_t nlines, naddrs;
};

/*
 * The names of d's functions (with symbols, or inlined at sampled code)
 * equal to want (exact) or containing it, as often as they occur, in *names
 * (malloc'd, pointing into d).  Returns how many.
 */
size_t an_sample_names(const struct fmt_data *d, const char *want, int exact, const char ***names);

/* The samples of the function named name (sampling data d) into *out. */
void an_sample_function(const struct fmt_data *d, const char *name, const char *module, const char *file,
			struct an_fn_samples *out);
/* Whether source path is the one want names: the path, a final part of it
 * ("src/a.c"), or its file name. */
int an_file_named(const char *path, const char *want);
/* The length of s's "FILE:" part, as gdb names one of two static functions
 * ("a.c:helper"): before a single colon, with a dot, no C++ "::", no
 * brackets; 0 if none. */
size_t an_file_prefix(const char *s);
void an_fn_samples_free(struct an_fn_samples *s);

/* Interning helpers shared by the analyses. */
uint32_t an_module_intern(struct an_result *r, const char *path);
/* fn's name as the views print it: "FILE:NAME" when another function of r
 * has its name and module (two static functions of one name in two
 * files; FILE the file's name, its path where the names are one too),
 * else the name; into buf, or the name itself. */
const char *an_func_label(const struct an_result *r, uint32_t fn, char *buf, size_t n);
uint32_t an_func_intern(struct an_result *r, const char *name, uint32_t module, const char *file,
			uint32_t line);

#endif
