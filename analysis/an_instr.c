/*
 * an_instr.c - the instrumentation analysis of doc/numbers.md (instrumentation).
 *
 * One pass over each thread's events.  Every record closes an interval:
 * its length (less the probe cost, never below zero) is added to the
 * thread's elapsed total, and to its application total unless the record
 * says the thread left the CPU.  The current (innermost) frame gets the
 * interval as exclusive time.  A frame remembers the thread totals when it
 * was entered; when it closes, the difference is its inclusive time, added
 * to its CCT node.
 *
 * Per function, inclusive values count an interval once however often the
 * function is on the stack: they are summed over the CCT nodes of the
 * function that have no ancestor of the same function (the outermost
 * activations), which contain every interval of the inner ones.  Modules
 * are treated the same way with "no ancestor in the same module".
 *
 * A filter selects intervals (analysis.h): those of the threads it names
 * and, for a function or module pattern, those with a matching function on
 * their stack.  Only selected intervals are added, to the thread totals
 * and to frames, so every value is the selection's; an activation counts
 * as a call when it holds a selected interval or runs inside a match.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "../format/fmt_event.h"

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
enum ev_kind { EV_NONE = AN_EV_NONE, EV_FUNC = AN_EV_FUNC, EV_LIB = AN_EV_LIB };
#define lib_kinds an_lib_kinds

static int is_lib_addr(const struct fmt_process *p, uint64_t a)
{
	uint32_t lo = 0, hi = p->nlib_fns;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->lib_fns[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nlib_fns && p->lib_fns[lo] == a;
}

unsigned an_fn_kind(struct an_lib_kinds *lk, const struct fmt_process *p, uint32_t fn, uint64_t addr)
{
	if (fn >= lk->cap) {
		uint32_t cap = lk->cap ? lk->cap : 256;
		while (cap <= fn)
			cap *= 2;
		lk->k = realloc(lk->k, cap);
		if (!lk->k)
			abort();
		memset(lk->k + lk->cap, 0, cap - lk->cap);
		lk->cap = cap;
	}
	if (!lk->k[fn])
		lk->k[fn] = is_lib_addr(p, addr) ? EV_LIB : EV_FUNC;
	return lk->k[fn];
}

void an_comp_costs(const struct fmt_process *p, int no_compensation, uint64_t costs[3])
{
	/* (even, so that the halves add up exactly) */
	costs[AN_EV_NONE] = 0;
	costs[AN_EV_FUNC] = no_compensation ? 0 : p->cost & ~1ull;
	costs[AN_EV_LIB] = no_compensation ? 0 : (p->lib_cost ? p->lib_cost : p->cost) & ~1ull;
}

uint64_t an_comp_sub(const uint64_t costs[3], unsigned prev, unsigned cur, uint64_t len, int overhead,
		     int no_compensation, uint64_t *unsub)
{
	if (overhead) {
		/* removed whole, the previous probe's second half with it */
		*unsub += costs[prev] / 2;
		return no_compensation ? 0 : len;
	}
	uint64_t want = costs[prev] / 2 + costs[cur] / 2;
	uint64_t sub = len < want ? len : want;
	*unsub += want - sub;
	return sub;
}

struct frame {
	uint32_t node;
	uint32_t fn;
	unsigned kind; /* enum ev_kind of its entry and exit */
	int counted; /* entered in this thread (not inherited across fork) */
	int match;   /* the function matches the filter's function/module part */
	int inside;  /* a matching function is on the stack, this one included */
	uint64_t e0, a0;       /* thread totals (of selected intervals) at entry */
	uint64_t n0;           /* selected intervals before entry */
	uint64_t self_e, self_a;
};

/* Close f at selected totals e, a after n selected intervals; all: every
 * interval of the thread is selected. */
static void close_frame(struct cct *t, const struct frame *f, uint64_t e, uint64_t a, uint64_t n_sel, int all)
{
	struct cct_node *n = &t->n[f->node];
	if (!all && !f->inside && n_sel == f->n0)
		return; /* no selected interval in this activation */
	n->selected = 1;
	if (f->counted)
		n->calls++;
	uint64_t v[AN_NVALUES] = {e - f->e0, f->self_e, a - f->a0, f->self_a};
	for (int k = 0; k < AN_NVALUES; k++) {
		n->v[k] += v[k];
		if (f->counted) {
			if (v[k] < n->vmin[k])
				n->vmin[k] = v[k];
			if (v[k] > n->vmax[k])
				n->vmax[k] = v[k];
		}
	}
}

static void run_thread(struct an_result *r, const struct fmt_data *d, uint32_t ti,
		       struct an_addr_map *m, const struct an_opts *o, struct lib_kinds *lk,
		       struct an_match_cache *mc)
{
	const struct fmt_thread *th = &d->threads[ti];
	const struct fmt_process *p = &d->procs[th->proc];
	struct an_thread *at = &r->threads[ti];
	at->proc = th->proc;
	at->index = ti;
	cct_init(&at->tree);
	struct cct *t = &at->tree;
	/* (even, so that the halves add up exactly) */
	uint64_t costs[3];
	an_comp_costs(p, o->no_compensation, costs);
	unsigned prev = EV_NONE;
	uint64_t unsub = 0, overhead = 0;
	uint32_t cap = 256, depth = 0;
	struct frame *st = malloc(cap * sizeof(*st));
	/* how often each function is open: an exit naming a function that is
	 * not open must not search the whole stack (200,000 frames) */
	uint32_t oncap = 1024, *on = calloc(oncap, sizeof(*on));
	if (!st || !on)
		abort();
	uint64_t e = 0, a = 0, comp = 0;
	/* the filter: whether the thread is selected, whether intervals must
	 * also have a matching function on their stack (nmatch of them) */
	const struct an_filter *flt = o->filter;
	at->selected = an_filter_thread(d, flt, ti);
	int by_fn = flt && (flt->function || flt->module);
	int all = at->selected && !by_fn;
	uint64_t nmatch = 0, n_sel = 0;
	struct fmt_decoder dec;
	struct fmt_rec rec;
	fmt_thread_decoder(th, &dec);
	int rc;
	uint64_t ticks = th->start; /* the event's time: names it where modules changed */
	while ((rc = fmt_decode(&dec, &rec)) > 0) {
		at->events++;
		ticks += rec.delta;
		uint64_t len = rec.delta << 10;
		uint32_t fn = ~0u;
		unsigned cur = EV_NONE;
		if (rec.kind == FMT_K_ENTER || rec.kind == FMT_K_ENTER_NEW ||
		    (rec.kind == FMT_K_EXT && rec.ext == FMT_X_EXIT_FN)) {
			fn = an_resolve_at(r, p, m, rec.addr, ticks);
			cur = an_fn_kind(lk, p, fn, rec.addr);
		} else if (rec.kind == FMT_K_EXIT) {
			cur = depth ? st[depth - 1].kind : EV_FUNC;
		}
		int is_overhead = rec.kind == FMT_K_EXT && rec.ext == FMT_X_OVERHEAD;
		if (is_overhead)
			overhead += len;
		uint64_t sub = an_comp_sub(costs, prev, cur, len, is_overhead, o->no_compensation, &unsub);
		if (cur == EV_LIB)
			at->lib_events++;
		else if (cur == EV_FUNC)
			at->probe_events++;
		prev = cur;
		len -= sub;
		comp += sub;
		at->whole_e += len;
		if (!rec.os)
			at->whole_a += len;
		if (all || (at->selected && nmatch)) { /* a selected interval */
			n_sel++;
			e += len;
			if (!rec.os)
				a += len;
			if (depth) {
				st[depth - 1].self_e += len;
				if (!rec.os)
					st[depth - 1].self_a += len;
			}
		}
		switch (rec.kind) {
		case FMT_K_ENTER:
		case FMT_K_ENTER_NEW:
		push: {
			if (fn == ~0u)
				fn = an_resolve_at(r, p, m, rec.addr, ticks);
			if (depth == cap) {
				cap *= 2;
				st = realloc(st, cap * sizeof(*st));
				if (!st)
					abort();
			}
			an_open_count_add(&on, &oncap, fn);
			uint32_t parent = depth ? st[depth - 1].node : 0;
			struct frame *f = &st[depth++];
			f->node = cct_child(t, parent, fn);
			f->fn = fn;
			f->kind = an_fn_kind(lk, p, fn, rec.addr);
			f->counted = rec.kind != FMT_K_EXT;
			f->match = by_fn && an_filter_match_cached(r, flt, mc, fn);
			nmatch += (uint64_t)f->match;
			f->inside = at->selected && nmatch > 0;
			f->e0 = e;
			f->a0 = a;
			f->n0 = n_sel;
			f->self_e = f->self_a = 0;
			break;
		}
		case FMT_K_EXIT:
			if (depth) {
				close_frame(t, &st[--depth], e, a, n_sel, all);
				on[st[depth].fn]--;
				nmatch -= (uint64_t)st[depth].match;
			}
			break;
		case FMT_K_EXT:
			if (rec.ext == FMT_X_INHERIT)
				goto push;
			if (rec.ext == FMT_X_LOST)
				at->lost += rec.count;
			if (rec.ext == FMT_X_EXIT_FN) {
				uint32_t i = fn < oncap && on[fn] ? depth : 0;
				while (i > 0 && st[i - 1].fn != fn)
					i--;
				if (i > 0) /* close the frames skipped by longjmp, then fn's */
					while (depth >= i) {
						close_frame(t, &st[--depth], e, a, n_sel, all);
						on[st[depth].fn]--;
						nmatch -= (uint64_t)st[depth].match;
					}
			}
			break;
		}
	}
	unsub += costs[prev] / 2; /* the last probe's second half has no interval */
	if (rc < 0 || (th->flags & FMT_THR_DAMAGED))
		at->damaged = 1;
	while (depth) /* frames left open close at the thread's last timestamp */
		close_frame(t, &st[--depth], e, a, n_sel, all);
	an_select_ancestors(t);
	free(st);
	free(on);
	at->total_e = e;
	at->total_a = a;
	at->nsel = n_sel;
	at->compensated = comp;
	at->overhead = overhead;
	at->unsubtracted = o->no_compensation ? 0 : unsub;
}

/* ------------------------------------------------------------------------
 * Rows
 * --------------------------------------------------------------------- */

static void acc_to_row(const struct an_result *r, const struct an_acc *a, struct an_row *row)
{
	row->calls = a->calls;
	for (int k = 0; k < AN_NVALUES; k++) {
		row->v[k] = (double)a->v[k] * r->fixed_to_ns;
		row->vmin[k] = a->calls && a->vmin[k] != UINT64_MAX ? (double)a->vmin[k] * r->fixed_to_ns : 0;
		row->vmax[k] = (double)a->vmax[k] * r->fixed_to_ns;
	}
}

static void totals_row(const struct an_result *r, uint64_t e, uint64_t a, struct an_row *row)
{
	row->v[AN_EI] = row->v[AN_EE] = (double)e * r->fixed_to_ns;
	row->v[AN_AI] = row->v[AN_AE] = (double)a * r->fixed_to_ns;
}

int an_instr_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r)
{
	memset(r, 0, sizeof(*r));
	r->fixed_to_ns = d->ns_per_tick / 1024.0;
	r->nthreads = d->nthreads;
	r->threads = calloc(d->nthreads ? d->nthreads : 1, sizeof(*r->threads));
	struct an_addr_map *maps = calloc(d->nprocs ? d->nprocs : 1, sizeof(*maps));
	if (!r->threads || !maps)
		return -1;
	uint64_t comp = 0, cost_sum = 0, lib_cost_sum = 0, overhead = 0, unsub = 0;
	struct lib_kinds lk = {NULL, 0};
	struct an_match_cache mc = {0};
	r->filtered = an_filter_active(o->filter);
	for (uint32_t i = 0; i < d->nthreads; i++) {
		run_thread(r, d, i, &maps[d->threads[i].proc], o, &lk, &mc);
		r->whole[AN_EI] += (double)r->threads[i].whole_e * r->fixed_to_ns;
		r->whole[AN_AI] += (double)r->threads[i].whole_a * r->fixed_to_ns;
		comp += r->threads[i].compensated;
		overhead += r->threads[i].overhead;
		unsub += r->threads[i].unsubtracted;
		r->probe_events += r->threads[i].probe_events;
		r->lib_events += r->threads[i].lib_events;
		r->events += r->threads[i].events;
		r->lost += r->threads[i].lost;
		if (r->threads[i].damaged)
			r->damaged_threads++;
	}
	free(lk.k);
	an_match_cache_free(&mc);
	r->whole[AN_EE] = r->whole[AN_EI];
	r->whole[AN_AE] = r->whole[AN_AI];
	for (uint32_t i = 0; i < d->nprocs; i++) {
		cost_sum += d->procs[i].cost & ~1ull; /* as run_thread() uses them */
		lib_cost_sum += (d->procs[i].lib_cost ? d->procs[i].lib_cost : d->procs[i].cost) & ~1ull;
		an_addr_map_free(&maps[i]);
	}
	free(maps);
	r->compensated_ns = (double)comp * r->fixed_to_ns;
	r->overhead_ns = (double)overhead * r->fixed_to_ns;
	r->unsubtracted_ns = (double)unsub * r->fixed_to_ns;
	r->cost_ns = d->nprocs && !o->no_compensation ? (double)cost_sum / d->nprocs * r->fixed_to_ns : 0;
	r->lib_cost_ns = d->nprocs && !o->no_compensation ? (double)lib_cost_sum / d->nprocs * r->fixed_to_ns : 0;

	struct an_acc *fa = calloc(r->nfuncs + 1, sizeof(*fa));
	struct an_acc *ma = calloc(r->nmods + 1, sizeof(*ma));
	uint32_t *fn_on = calloc(r->nfuncs + 1, sizeof(*fn_on));
	uint32_t *mod_on = calloc(r->nmods + 1, sizeof(*mod_on));
	if (!fa || !ma || !fn_on || !mod_on)
		return -1;
	for (uint32_t i = 0; i < r->nfuncs; i++)
		for (int k = 0; k < AN_NVALUES; k++)
			fa[i].vmin[k] = UINT64_MAX;
	for (uint32_t i = 0; i < r->nthreads; i++)
		an_fold_tree(r, &r->threads[i].tree, fa, ma, fn_on, mod_on);

	r->functions = calloc(r->nfuncs + 1, sizeof(*r->functions));
	r->modules = calloc(r->nmods + 1, sizeof(*r->modules));
	r->thread_rows = calloc(r->nthreads + 1, sizeof(*r->thread_rows));
	r->processes = calloc(d->nprocs + 1, sizeof(*r->processes));
	if (!r->functions || !r->modules || !r->thread_rows || !r->processes)
		return -1;
	/* under a filter, only what the selection holds has a row */
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		if (r->filtered && !fa[i].seen)
			continue;
		struct an_row *row = &r->functions[r->nfunctions++];
		acc_to_row(r, &fa[i], row);
		row->name = r->funcs[i].name;
		row->module = r->mods[r->funcs[i].module].base;
		row->func = i;
	}
	for (uint32_t i = 0; i < r->nmods; i++) {
		if (r->filtered && !ma[i].seen)
			continue;
		struct an_row *row = &r->modules[r->nmodules++];
		acc_to_row(r, &ma[i], row);
		row->name = row->module = r->mods[i].base;
	}
	uint64_t *pe = calloc(d->nprocs + 1, sizeof(*pe)), *pa = calloc(d->nprocs + 1, sizeof(*pa));
	if (!pe || !pa)
		return -1;
	uint64_t se = 0, sa = 0;
	uint8_t *pshow = calloc(d->nprocs + 1, 1);
	if (!pshow)
		return -1;
	for (uint32_t i = 0; i < r->nthreads; i++) {
		const struct an_thread *at = &r->threads[i];
		const struct fmt_thread *th = &d->threads[i];
		if (r->filtered && !(at->selected && at->nsel))
			continue;
		pshow[th->proc] = 1;
		struct an_row *row = &r->thread_rows[r->nthread_rows++];
		totals_row(r, at->total_e, at->total_a, row);
		row->tid = th->tid;
		row->pid = d->procs[th->proc].pid;
		row->name = row->extra = th->name;
		row->module = "";
		pe[th->proc] += at->total_e;
		pa[th->proc] += at->total_a;
		se += at->total_e;
		sa += at->total_a;
	}
	for (uint32_t i = 0; i < d->nprocs; i++) {
		if (r->filtered && !pshow[i])
			continue;
		struct an_row *row = &r->processes[r->nprocesses++];
		totals_row(r, pe[i], pa[i], row);
		row->pid = d->procs[i].pid;
		row->name = row->extra = d->procs[i].command;
		row->module = "";
	}
	totals_row(r, se, sa, &r->session);
	r->session.name = "session";
	r->session.module = "";
	free(pe);
	free(pa);
	free(pshow);
	free(fa);
	free(ma);
	free(fn_on);
	free(mod_on);
	return 0;
}
