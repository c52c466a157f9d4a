/*
 * out_export.h - stint's data in the formats other tools read: folded
 * stacks (flamegraph.pl, inferno, speedscope), pprof's gzipped protobuf,
 * callgrind's text format (callgrind_annotate, KCachegrind) and Chrome's
 * trace-event JSON (Perfetto UI, chrome://tracing).
 *
 * The first three are aggregates and are written from a view (an_view.h),
 * so they show exactly what `stint report` and `stint tree` show for the
 * same filter.  The Chrome trace is a timeline: it is written from the raw
 * events (instrumentation) or samples (sampling) of the data file.
 */
#ifndef STINT_OUT_EXPORT_H
#define STINT_OUT_EXPORT_H

#include <stdio.h>
#include "../analysis/an_view.h"
#include "../format/format.h"

/*
 * The view's call paths with recursion folded, for the exports that write
 * whole paths (folded, pprof): a call to a function already on the path
 * continues at that earlier frame, so a path holds each function at most
 * once.  Direct recursion (f;f;f) becomes one frame, whose width is f's
 * inclusive value counted once (the recursion-once rule of doc/numbers.md); in indirect
 * recursion (a;b;a) the inner a's own time is drawn under the outer a.
 * The output then grows with the data, not with the square of the
 * recursion's depth.  x[node] holds the exclusive values (EE, AE) and calls
 * of the view's nodes folded into node; t's nodes carry fn and parent only.
 */
struct out_paths {
	struct cct t;
	double (*x)[3];
};
void out_fold_paths(const struct an_view *v, struct out_paths *fp);
void out_paths_release(struct out_paths *fp);

/*
 * Folded stacks: one line "outer;...;inner VALUE" per call path (recursion
 * folded, out_fold_paths) with a non-zero value.  value is AN_EE or AN_AE (instrumentation, integer
 * nanoseconds); sampling always writes exclusive samples.  Returns 0, -1 on
 * a write error.
 */
int out_folded(FILE *f, const struct an_view *v, int value);

/*
 * Callgrind format.  Instrumentation (from the view): one cost line per
 * function at its first line (its self cost; the events carry no line
 * table), one calls=/cost pair per call edge (the inclusive cost along the
 * edge).  Sampling (from the samples f keeps, rw = v->r writable): self
 * samples per source line, and per call site line the samples of each
 * call made there, so callgrind_annotate annotates the source per line.
 * Each function is written under one file only.  Recursive activations are
 * named "fn'2" as callgrind's --separate-recs does, so that the inclusive
 * cost of "fn" counts every interval (sample) once.  Returns 0, -1 on a
 * write error.
 */
int out_callgrind(FILE *f, const struct an_view *v, const struct fmt_data *d, struct an_result *rw,
		  const struct an_filter *flt);

/*
 * pprof: a gzipped perftools.profiles.Profile written to fd (which stays
 * open).  Instrumentation: the view, one sample per call path (recursion
 * folded, out_fold_paths), one location per function.  Sampling: the
 * samples that filter f keeps (as the view keeps them), one sample per
 * distinct stack, one location per sampled address with its source line
 * and inlined functions, one mapping per module of each process.  rw is
 * v->r, writable (sampled addresses are resolved through its caches).
 * Returns 0, -1 on error.
 */
int out_pprof(int fd, const struct an_view *v, const struct fmt_data *d, struct an_result *rw,
	      const struct an_filter *f);
/*
 * Whether the exports can write instrumentation's values per line: d's
 * events carry call sites (format version 2 on) and flt selects the whole
 * run (the lines are not filtered).
 */
int out_instr_has_lines(const struct fmt_data *d, const struct an_filter *flt);

/* 0 where stint was built without protobuf-c: out_pprof then fails with ENOTSUP. */
int out_pprof_available(void);

/* Options of the Chrome trace, and what it wrote. */
struct out_chrome_opts {
	const struct an_filter *filter; /* threads, and which calls to keep */
	uint64_t max_events;            /* slices/samples written at most; 0: all */
	int no_compensation;            /* instrumentation: times as recorded */
	uint64_t written, left_out;     /* set by out_chrome */
};

/*
 * Chrome trace-event JSON.  Instrumentation: one complete ("X") event per
 * call, in the order of entry (callers first), and per interval in which
 * the thread left the CPU ("off-CPU", inside the call current in it), on a
 * timeline whose intervals are compensated for the probe cost as in every
 * view (an_walk_events; each thread starts at its recorded start), unless
 * no_compensation.  Sampling: one instant event per sample whose "sf"
 * names its stack in "stackFrames".  Without max_events the whole run is
 * written as it is read (each thread replayed twice, out_export.c).  With
 * it, when there are more, the earliest are written (a time cut-off), a
 * global instant event plus
 * "otherData" say how many were left out, and o->left_out tells the
 * caller.  r is extended with any function it lacks.  Returns 0, -1 on a
 * write error.
 */
int out_chrome(FILE *f, const struct fmt_data *d, struct an_result *r, struct out_chrome_opts *o);

#endif
