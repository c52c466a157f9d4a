/*
 * an_walk_loop.h - the replay of one thread's instrumentation records
 * behind an_walk_events (an_walk.h), as an always-inlined function: the
 * exports call it through an_walk_events with a callback, and the
 * instrumentation analysis (an_instr.c) expands it with its own callback
 * known, so that the three calls a record makes are inlined there (a
 * quarter of stint report's time was their calls and their events'
 * zeroing).  Included by an_walk.c and an_instr.c only.
 */
#ifndef STINT_AN_WALK_LOOP_H
#define STINT_AN_WALK_LOOP_H

#include <string.h>
#include <stdlib.h>

#include "an_walk.h"
#include "../format/fmt_event.h"
#include "../lib/util.h"

/*
 * Compensation.  A probe's cost falls partly before its clock read and
 * partly after it, so the interval between two probes holds the second
 * half of one and the first half of the other: half of each probe's cost
 * is subtracted from each interval it borders.  Probes of instrumented
 * functions and of library calls cost differently (the runtime calibrates
 * both); an interval next to a record that is no probe (thread start and
 * end, TICK) gets only its probe's half, and an OVERHEAD interval, the
 * profiler's own time, is removed whole.
 */
enum ev_kind { EV_NONE, EV_FUNC, EV_LIB };

/* By function index: 0 unknown, else EV_FUNC or EV_LIB. */
struct lib_kinds {
	uint8_t *k;
	uint32_t cap;
};

static inline unsigned fn_kind(struct lib_kinds *lk, const struct fmt_process *p, uint32_t fn, uint64_t addr)
{
	if (fn >= lk->cap)
		UTIL_GROW_ZEROED(lk->k, lk->cap, fn);
	if (!lk->k[fn])
		lk->k[fn] = fmt_is_lib_fn(p, addr) ? EV_LIB : EV_FUNC;
	return lk->k[fn];
}

/*
 * Each probe's cost, in fixed ticks, split at its clock read: the part
 * before it (head) falls in the interval the event ends, the part after
 * (tail) in the next one.  By kind, and for a function's probes by entry
 * (0) or exit (1): the runtime measured the interval of an empty call,
 * an entry's tail plus an exit's head (fmt_process.cost_inner); an entry's
 * head and an exit's tail are the rest of the pair's cost.  So an interval
 * from an entry to its exit loses cost_inner, one from an exit to the next
 * entry 2 x cost - cost_inner, the others one cost (entry to entry, exit
 * to exit), and every probe still loses exactly its cost.
 */
struct comp_split {
	uint64_t head[2][3], tail[2][3];
};


static inline void comp_costs(const struct fmt_process *p, int no_compensation, struct comp_split *s)
{
	memset(s, 0, sizeof(*s));
	if (no_compensation)
		return;
	/* (even, so that the halves add up exactly) */
	uint64_t fn = p->cost & ~1ull, lib = (p->lib_cost ? p->lib_cost : p->cost) & ~1ull;
	uint64_t in = an_call_half(p);
	for (int dir = 0; dir < 2; dir++) {
		s->head[dir][EV_LIB] = s->tail[dir][EV_LIB] = lib / 2;
		s->head[dir][EV_FUNC] = dir ? in : fn - in;
		s->tail[dir][EV_FUNC] = dir ? fn - in : in;
	}
}

static inline uint64_t comp_sub(uint64_t tail_prev, uint64_t head_cur, uint64_t len, int overhead, int no_compensation,
			 uint64_t *unsub)
{
	if (overhead) {
		/* removed whole, the previous probe's second part with it */
		*unsub += tail_prev;
		return no_compensation ? 0 : len;
	}
	uint64_t want = tail_prev + head_cur;
	uint64_t sub = len < want ? len : want;
	*unsub += want - sub;
	return sub;
}


struct walk_frame {
	uint32_t fn;
	unsigned kind; /* EV_FUNC or EV_LIB: the cost of its probes */
	double start;
};


/* The EXIT of frame f, at index depth, at time now. */
static inline __attribute__((always_inline)) void walk_exit(an_walk_event_fn cb, void *ctx,
							    const struct walk_frame *f, uint32_t depth,
							    uint32_t proc, double now)
{
	struct an_walk_ev e;
	memset(&e, 0, sizeof(e));
	e.what = AN_WALK_EXIT;
	e.fn = f->fn;
	e.depth = depth;
	e.proc = proc;
	e.start = f->start;
	e.end = now;
	cb(ctx, &e);
}

static inline __attribute__((always_inline)) double an_walk_loop(const struct fmt_data *d, struct an_result *r,
								  struct an_addr_map *m, uint32_t ti,
								  int no_compensation, an_walk_event_fn cb,
								  void *ctx, struct an_walk_totals *tot)
{
	memset(tot, 0, sizeof(*tot));
	const struct fmt_thread *th = &d->threads[ti];
	const struct fmt_process *p = &d->procs[th->proc];
	struct comp_split costs; /* fixed ticks (1/1024) per probe, by kind */
	uint64_t unsub = 0;
	comp_costs(p, no_compensation, &costs);
	struct lib_kinds lk = {NULL, 0};
	unsigned prev = EV_NONE, prev_exit = 0;
	double fixed_ns = d->ns_per_tick / 1024.0;
	uint32_t cap = 256, depth = 0;
	struct walk_frame *st = xmalloc(cap * sizeof(*st));
	/* how often each function is open: an exit naming a function that is
	 * not open must not search the whole stack */
	uint32_t oncap = 1024, *on = xcalloc(oncap, sizeof(*on));
	uint64_t ticks = th->start, fixed = 0; /* raw time (names modules), compensated time */
	double t0 = (double)th->start * d->ns_per_tick, now = t0;
	struct an_walk_ev e;
	struct fmt_decoder dec;
	struct fmt_rec rec;
	fmt_thread_decoder(th, &dec);
	int rc;
	while ((rc = fmt_decode(&dec, &rec)) > 0) {
		/* in registers: tests of the two fields together were compiled
		 * into one 8-byte load of what the decoder stored as two 4-byte
		 * values, which store forwarding cannot serve (a stall a record) */
		const unsigned kind = rec.kind, ext = rec.ext;
		tot->events++;
		ticks += rec.delta;
		uint64_t len = rec.delta << 10;
		uint32_t rfn = ~0u;
		unsigned cur = EV_NONE;
		if (kind == FMT_K_ENTER || kind == FMT_K_ENTER_NEW ||
		    (kind == FMT_K_EXT && ext == FMT_X_EXIT_FN)) {
			rfn = an_resolve_at(r, p, m, rec.addr, ticks);
			cur = fn_kind(&lk, p, rfn, rec.addr);
		} else if (kind == FMT_K_EXIT) {
			cur = depth ? st[depth - 1].kind : EV_FUNC;
		}
		int overhead = kind == FMT_K_EXT && ext == FMT_X_OVERHEAD;
		unsigned cur_exit = kind == FMT_K_EXIT || (kind == FMT_K_EXT && ext == FMT_X_EXIT_FN);
		uint64_t sub = comp_sub(costs.tail[prev_exit][prev], costs.head[cur_exit][cur], len, overhead,
					no_compensation, &unsub);
		tot->compensated += sub;
		tot->overhead += overhead ? len : 0;
		tot->lib_events += cur == EV_LIB;
		tot->probe_events += cur == EV_FUNC;
		if (kind == FMT_K_EXT && ext == FMT_X_LOST)
			tot->lost += rec.count;
		fixed += len - sub;
		prev = cur;
		prev_exit = cur_exit;
		memset(&e, 0, sizeof(e));
		e.what = AN_WALK_INTERVAL;
		e.fixed = len - sub;
		e.start = now;
		now = t0 + (double)fixed * fixed_ns;
		e.end = now;
		e.os = rec.os;
		e.depth = depth;
		e.proc = th->proc;
		if (kind == FMT_K_ENTER || kind == FMT_K_ENTER_NEW)
			e.site = rec.site;
		cb(ctx, &e);
		int push = kind == FMT_K_ENTER || kind == FMT_K_ENTER_NEW ||
			   (kind == FMT_K_EXT && ext == FMT_X_INHERIT);
		uint32_t close_to = depth; /* frames at or above this index close */
		if (push) {
			/* entries were resolved above; an inherited frame is not */
			uint32_t fn = rfn != ~0u ? rfn : an_resolve_at(r, p, m, rec.addr, ticks);
			if (depth == cap) {
				cap *= 2;
				st = xrealloc(st, cap * sizeof(*st));
			}
			an_open_count_add(&on, &oncap, fn);
			st[depth].fn = fn;
			st[depth].kind = fn_kind(&lk, p, fn, rec.addr);
			st[depth].start = now;
			memset(&e, 0, sizeof(e));
			e.what = AN_WALK_ENTER;
			e.fn = fn;
			e.depth = depth++;
			e.inherited = kind == FMT_K_EXT;
			e.site = rec.site;
			e.addr = rec.addr;
			e.proc = th->proc;
			e.start = e.end = now;
			cb(ctx, &e);
			close_to = depth;
		} else if (kind == FMT_K_EXIT && depth) {
			close_to = depth - 1;
		} else if (kind == FMT_K_EXT && ext == FMT_X_EXIT_FN) {
			uint32_t fn = rfn;
			uint32_t i = fn < oncap && on[fn] ? depth : 0;
			while (i > 0 && st[i - 1].fn != fn)
				i--;
			if (i > 0) /* longjmp: the skipped frames end here too */
				close_to = i - 1;
		}
		while (depth > close_to) {
			depth--;
			on[st[depth].fn]--;
			walk_exit(cb, ctx, &st[depth], depth, th->proc, now);
		}
	}
	while (depth) { /* frames left open close at the thread's last timestamp */
		depth--;
		walk_exit(cb, ctx, &st[depth], depth, th->proc, now);
	}
	unsub += costs.tail[prev_exit][prev]; /* the last probe's second part has no interval */
	tot->unsubtracted = no_compensation ? 0 : unsub;
	tot->damaged = rc < 0 || (th->flags & FMT_THR_DAMAGED);
	free(st);
	free(on);
	free(lk.k);
	return now;
}

#endif
