/*
 * an_walk.h - walks of a data file's raw records for the views that need
 * more than the aggregated trees: the timeline exports (Chrome trace) and
 * the exports that carry addresses and source lines (pprof, callgrind).
 *
 * an_walk_events replays one thread's instrumentation events as calls and
 * intervals: the stack rules (enter, exit, longjmp, frames inherited
 * across fork, frames left open) and the probe-cost compensation, once for
 * every view (an_instr.c builds its trees through it), so every view shows
 * the same times.
 *
 * an_walk_samples hands each kept sample over with its stack expanded as
 * an_sample_frames does (inlined functions on the stack) and, per frame,
 * the address and source line it stands for.
 */
#ifndef STINT_AN_WALK_H
#define STINT_AN_WALK_H

#include <stddef.h>
#include <stdint.h>
#include "an_view.h"

enum an_walk_what {
	AN_WALK_INTERVAL, /* an interval [start, end] of the thread, os set if it left the CPU */
	AN_WALK_ENTER,    /* fn entered at start; depth is its index on the stack */
	AN_WALK_EXIT,     /* fn (entered at start, at depth) ends at end */
};

struct an_walk_ev {
	enum an_walk_what what;
	uint32_t fn, depth;  /* ENTER, EXIT */
	int os;              /* INTERVAL */
	int inherited;       /* ENTER: a frame inherited across fork, not a call */
	double start, end;   /* ns since the epoch of the thread clock; compensated */
	uint64_t fixed;      /* INTERVAL: its compensated length in fixed ticks
			      * (1/1024 tick, exact: an_instr's unit) */
	/* ENTER: the call's return address (0: not known, or inherited);
	 * INTERVAL: the same of the entry that ends it (0: it ends otherwise) */
	uint64_t site;
	uint64_t addr;       /* ENTER: the function's address */
	uint32_t proc;       /* the thread's process (fmt_data index) */
};

typedef void (*an_walk_event_fn)(void *ctx, const struct an_walk_ev *e);

/*
 * Replay thread ti of d (instrumentation) through cb: every record is one
 * INTERVAL (the time since the previous record, less the process's probe
 * cost unless no_compensation, never below zero), then the ENTER or EXIT(s)
 * it causes.  Times start at the thread's recorded start and advance by
 * the compensated lengths, so a call's duration is its compensated
 * Elapsed Inclusive.  Frames still open at the end close at the thread's
 * last timestamp.  m caches the process's address map (an_resolve_at).
 * Returns the thread's end time.
 */
double an_walk_events(const struct fmt_data *d, struct an_result *r, struct an_addr_map *m, uint32_t ti,
		      int no_compensation, an_walk_event_fn cb, void *ctx);

/* What an_walk_events_totals counts of one thread, in fixed ticks. */
struct an_walk_totals {
	uint64_t events, lost;         /* records read, events the runtime lost */
	uint64_t probe_events;         /* records of probes of instrumented functions */
	uint64_t lib_events;           /* records of library-call probes */
	uint64_t compensated;          /* probe cost subtracted */
	uint64_t overhead;             /* OVERHEAD intervals (removed whole) */
	uint64_t unsubtracted;         /* probe cost not subtracted (an_thread) */
	int damaged;                   /* events unreadable past some point */
};

/* an_walk_events, also counting into *tot (zeroed first). */
double an_walk_events_totals(const struct fmt_data *d, struct an_result *r, struct an_addr_map *m, uint32_t ti,
			     int no_compensation, an_walk_event_fn cb, void *ctx, struct an_walk_totals *tot);

/* One kept sample as an_walk_samples hands it over. */
struct an_walk_sample {
	uint32_t thread, proc;       /* fmt_data indices */
	double time;                 /* ns, the thread clock */
	const uint64_t *pcs;         /* the recorded stack, innermost first */
	unsigned npcs;
	/* the expanded stack, innermost first, system frames dropped under
	 * just-my-code: per frame its function, the index in pcs of the
	 * address it stands for, and its source line (file NULL if unknown) */
	size_t nframes;
	const uint32_t *fn, *pc_index;
	const char *const *file;
	const uint32_t *line;
};

typedef void (*an_walk_sample_fn)(void *ctx, const struct an_walk_sample *s);

/*
 * Every sample of the threads that f selects (pid, tid), whose expanded
 * stack has a frame passing the module and function parts of f (the
 * samples an_view_build keeps), through cb, thread by thread in time
 * order.  Under just-my-code, frames of system libraries are left out (so
 * the caller is the leaf, as the view folds them); a sample with no frame
 * left is skipped.  A frame's line: the leaf's sampled address, a caller's
 * return address less one (its call), each inlined function at the line
 * it was executing (the innermost at the address's line, the others at
 * the call site of the function inlined into them).
 */
void an_walk_samples(const struct fmt_data *d, struct an_result *r, const struct an_filter *f,
		     an_walk_sample_fn cb, void *ctx);

/*
 * How often each function is open on a walk's stack, by function index
 * (*on grows by doubling to hold fn): an exit naming a function that is not
 * open must not search a stack 200,000 frames deep.
 */
void an_open_count_add(uint32_t **on, uint32_t *cap, uint32_t fn);

/* Of a process's two function probes, the part of their cost (fixed ticks)
 * each of the entry's tail and the exit's head gives the interval from an
 * entry to its exit: half of fmt_process.cost_inner, or half the cost when
 * it is not known, never more than the cost. */
uint64_t an_call_half(const struct fmt_process *p);

#endif
