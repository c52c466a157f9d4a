/*
 * an_instr.c - the instrumentation analysis of doc/numbers.md (instrumentation).
 *
 * One pass over each thread's events, an_walk_events (an_walk.h: the stack
 * rules and the probe-cost compensation, shared with the exports), whose
 * calls and intervals build the thread's tree.  Every record closes an interval:
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
#define _GNU_SOURCE /* qsort_r */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "an_walk.h"
#include "an_walk_loop.h"
#include "../lib/util.h"

struct frame {
	uint32_t node;
	int counted; /* entered in this thread (not inherited across fork) */
	int match;   /* the function matches the filter's function/module part */
	int inside;  /* a matching function is on the stack, this one included */
	uint64_t e0, a0;       /* thread totals (of selected intervals) at entry */
	uint64_t n0;           /* selected intervals before entry */
	uint64_t self_e, self_a;
};

/* One thread's walk (an_walk_events) into its tree. */
struct instr_walk {
	struct an_result *r;
	const struct an_filter *flt;
	struct an_match_cache *mc;
	struct an_thread *at;
	struct frame *st;      /* by the walk's depth */
	uint32_t cap;
	int by_fn;             /* intervals must have a matching function on their stack */
	int all;               /* every interval of the thread is selected */
	uint64_t nmatch;       /* matching functions on the stack */
	uint64_t e, a, n_sel;  /* totals of the selected intervals, their number */
};

/* Close f at the selected totals so far. */
static void close_frame(struct instr_walk *w, const struct frame *f)
{
	struct cct_node *n = &w->at->tree.n[f->node];
	if (!w->all && !f->inside && w->n_sel == f->n0)
		return; /* no selected interval in this activation */
	n->selected = 1;
	if (f->counted)
		n->calls++;
	uint64_t v[AN_NVALUES] = {w->e - f->e0, f->self_e, w->a - f->a0, f->self_a};
	double x[AN_NVALUES];
	for (int k = 0; k < AN_NVALUES; k++) {
		x[k] = (double)v[k];
		n->v[k] += x[k];
		if (f->counted) {
			if (n->vmin[k] < 0 || x[k] < n->vmin[k])
				n->vmin[k] = x[k];
			if (x[k] > n->vmax[k])
				n->vmax[k] = x[k];
		}
	}
	if (!f->counted)
		cct_add_uncounted(&w->at->tree, f->node, x);
}

static inline __attribute__((always_inline)) void instr_event(void *ctx, const struct an_walk_ev *ev)
{
	struct instr_walk *w = ctx;
	struct an_thread *at = w->at;
	switch (ev->what) {
	case AN_WALK_INTERVAL: {
		uint64_t len = ev->fixed;
		at->whole_e += len;
		if (!ev->os)
			at->whole_a += len;
		if (!w->all && !(at->selected && w->nmatch))
			break;
		w->n_sel++; /* a selected interval */
		w->e += len;
		if (!ev->os)
			w->a += len;
		if (ev->depth) {
			w->st[ev->depth - 1].self_e += len;
			if (!ev->os)
				w->st[ev->depth - 1].self_a += len;
		}
		break;
	}
	case AN_WALK_ENTER: {
		if (ev->depth == w->cap) {
			w->cap *= 2;
			w->st = xrealloc(w->st, w->cap * sizeof(*w->st));
		}
		uint32_t parent = ev->depth ? w->st[ev->depth - 1].node : 0;
		struct frame *f = &w->st[ev->depth];
		f->node = cct_child(&at->tree, parent, ev->fn);
		f->counted = !ev->inherited;
		f->match = w->by_fn && an_filter_match_cached(w->r, w->flt, w->mc, ev->fn);
		w->nmatch += (uint64_t)f->match;
		f->inside = at->selected && w->nmatch > 0;
		f->e0 = w->e;
		f->a0 = w->a;
		f->n0 = w->n_sel;
		f->self_e = f->self_a = 0;
		break;
	}
	case AN_WALK_EXIT:
		close_frame(w, &w->st[ev->depth]);
		w->nmatch -= (uint64_t)w->st[ev->depth].match;
		break;
	}
}

static void run_thread(struct an_result *r, const struct fmt_data *d, uint32_t ti,
		       struct an_addr_map *m, const struct an_opts *o, struct an_match_cache *mc)
{
	const struct fmt_thread *th = &d->threads[ti];
	struct an_thread *at = &r->threads[ti];
	at->proc = th->proc;
	at->index = ti;
	cct_init(&at->tree);
	/* the filter: whether the thread is selected, whether intervals must
	 * also have a matching function on their stack */
	const struct an_filter *flt = o->filter;
	at->selected = an_filter_thread(d, flt, ti);
	struct instr_walk w = {.r = r, .flt = flt, .mc = mc, .at = at, .cap = 256};
	w.by_fn = flt && (flt->function || flt->module);
	w.all = at->selected && !w.by_fn;
	w.st = xmalloc(w.cap * sizeof(*w.st));
	struct an_walk_totals tot;
	an_walk_loop(d, r, m, ti, o->no_compensation, instr_event, &w, &tot); /* instr_event inlined */
	an_select_ancestors(&at->tree);
	free(w.st);
	at->total_e = w.e;
	at->total_a = w.a;
	at->nsel = w.n_sel;
	at->events = tot.events;
	at->lost = tot.lost;
	at->damaged = tot.damaged;
	at->probe_events = tot.probe_events;
	at->lib_events = tot.lib_events;
	at->compensated = tot.compensated;
	at->overhead = tot.overhead;
	at->unsubtracted = tot.unsubtracted;
}

/* ------------------------------------------------------------------------
 * Rows
 * --------------------------------------------------------------------- */

static void acc_to_row(const struct an_result *r, const struct an_acc *a, struct an_row *row)
{
	row->calls = a->calls;
	for (int k = 0; k < AN_NVALUES; k++) {
		row->v[k] = (double)a->v[k] * r->fixed_to_ns;
		row->vmin[k] = a->calls && a->vmin[k] >= 0 ? a->vmin[k] * r->fixed_to_ns : 0;
		row->vmax[k] = a->vmax[k] * r->fixed_to_ns;
		row->callsum[k] = a->callsum[k] * r->fixed_to_ns;
	}
}

static void totals_row(const struct an_result *r, uint64_t e, uint64_t a, struct an_row *row)
{
	row->v[AN_EI] = row->v[AN_EE] = (double)e * r->fixed_to_ns;
	row->v[AN_AI] = row->v[AN_AE] = (double)a * r->fixed_to_ns;
}

/*
 * The threads' walks, several at once: each thread has its own tree, and a
 * worker its own caches (addresses, the filter's matches); only interning
 * is shared, under r->intern_lock.  Largest threads first, so that the
 * last to finish is a small one.
 */
struct instr_jobs {
	struct an_result *r;
	const struct fmt_data *d;
	const struct an_opts *o;
	uint32_t *order; /* thread indices, most events first */
	uint32_t next;   /* the next of order to take (atomic) */
};

static void *instr_worker(void *arg)
{
	struct instr_jobs *j = arg;
	struct an_addr_map *maps = xcalloc(j->d->nprocs ? j->d->nprocs : 1, sizeof(*maps));
	struct an_match_cache mc = {0};
	for (;;) {
		uint32_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->d->nthreads)
			break;
		uint32_t ti = j->order[k];
		run_thread(j->r, j->d, ti, &maps[j->d->threads[ti].proc], j->o, &mc);
	}
	an_match_cache_free(&mc);
	for (uint32_t i = 0; i < j->d->nprocs; i++)
		an_addr_map_free(&maps[i]);
	free(maps);
	return NULL;
}

static int cmp_thread_size(const void *a, const void *b, void *ctx)
{
	const struct fmt_data *d = ctx;
	uint64_t x = d->threads[*(const uint32_t *)a].ev_len;
	uint64_t y = d->threads[*(const uint32_t *)b].ev_len;
	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* How many threads walk at once: STINT_JOBS, else for a recording of more
 * than 16 MiB of events the CPUs (at most 16; below that one walk is quick,
 * and each worker costs a stack and an allocation arena), never more than
 * there are threads to walk. */
#define INSTR_PARALLEL_BYTES (16u << 20)

static unsigned instr_workers(const struct fmt_data *d)
{
	const char *env = getenv("STINT_JOBS");
	long n;
	if (env && *env) {
		n = strtol(env, NULL, 10);
	} else {
		uint64_t bytes = 0;
		for (uint32_t i = 0; i < d->nthreads; i++)
			bytes += d->threads[i].ev_len;
		n = bytes < INSTR_PARALLEL_BYTES ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
		if (n > 16)
			n = 16;
	}
	if (n < 1)
		n = 1;
	if ((uint64_t)n > d->nthreads)
		n = d->nthreads ? (long)d->nthreads : 1;
	return (unsigned)n;
}

static void run_threads(struct an_result *r, const struct fmt_data *d, const struct an_opts *o)
{
	struct instr_jobs j = {.r = r, .d = d, .o = o};
	j.order = xmalloc((d->nthreads + 1) * sizeof(*j.order));
	for (uint32_t i = 0; i < d->nthreads; i++)
		j.order[i] = i;
	unsigned n = instr_workers(d);
	if (n > 1)
		qsort_r(j.order, d->nthreads, sizeof(*j.order), cmp_thread_size, (void *)d);
	pthread_t *tids = xcalloc(n, sizeof(*tids));
	unsigned started = 0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	if (n > 1) {
		r->intern_lock = &lock;
		for (unsigned k = 1; k < n; k++) /* this thread is the first worker */
			if (pthread_create(&tids[started], NULL, instr_worker, &j) == 0)
				started++;
	}
	instr_worker(&j);
	for (unsigned k = 0; k < started; k++)
		pthread_join(tids[k], NULL);
	r->intern_lock = NULL;
	pthread_mutex_destroy(&lock);
	free(tids);
	free(j.order);
	an_canonical_order(r);
}

void an_instr_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r)
{
	memset(r, 0, sizeof(*r));
	r->fixed_to_ns = d->ns_per_tick / 1024.0;
	r->nthreads = d->nthreads;
	r->threads = xcalloc(d->nthreads ? d->nthreads : 1, sizeof(*r->threads));
	uint64_t comp = 0, cost_sum = 0, lib_cost_sum = 0, inner_sum = 0, overhead = 0, unsub = 0;
	r->filtered = an_filter_active(o->filter);
	run_threads(r, d, o);
	for (uint32_t i = 0; i < d->nthreads; i++) {
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
	r->whole[AN_EE] = r->whole[AN_EI];
	r->whole[AN_AE] = r->whole[AN_AI];
	uint64_t cmin = UINT64_MAX, cmax = 0; /* the cost's measurements (1: the start-up's) */
	uint32_t samples = 0, measured = 0;
	for (uint32_t i = 0; i < d->nprocs; i++) {
		const struct fmt_process *p = &d->procs[i];
		uint64_t cost = p->cost & ~1ull; /* as the walk uses them */
		cost_sum += cost;
		r->patched_cost_procs += p->cost_patched != 0;
		inner_sum += 2 * an_call_half(p);
		lib_cost_sum += (p->lib_cost ? p->lib_cost : p->cost) & ~1ull;
		samples += p->cost_samples ? p->cost_samples : 1;
		measured += p->cost_samples != 0;
		uint64_t lo = p->cost_samples ? p->cost_min : cost, hi = p->cost_samples ? p->cost_max : cost;
		cmin = lo < cmin ? lo : cmin;
		cmax = hi > cmax ? hi : cmax;
	}
	r->compensated_ns = (double)comp * r->fixed_to_ns;
	r->overhead_ns = (double)overhead * r->fixed_to_ns;
	r->unsubtracted_ns = (double)unsub * r->fixed_to_ns;
	r->cost_ns = d->nprocs && !o->no_compensation ? (double)cost_sum / d->nprocs * r->fixed_to_ns : 0;
	r->lib_cost_ns = d->nprocs && !o->no_compensation ? (double)lib_cost_sum / d->nprocs * r->fixed_to_ns : 0;
	/* each process's events cost its own: the cost said is their mean
	 * weighted by events, so that events x cost is what was subtracted (the
	 * plain mean over processes, with a fork, was 4 % off it) */
	double wcost = 0, wlib = 0;
	uint64_t pev = 0, lev = 0;
	for (uint32_t i = 0; i < d->nthreads; i++) {
		if (d->threads[i].proc >= d->nprocs)
			continue;
		const struct fmt_process *p = &d->procs[d->threads[i].proc];
		wcost += (double)(p->cost & ~1ull) * (double)r->threads[i].probe_events;
		wlib += (double)((p->lib_cost ? p->lib_cost : p->cost) & ~1ull) * (double)r->threads[i].lib_events;
		pev += r->threads[i].probe_events;
		lev += r->threads[i].lib_events;
	}
	if (pev && !o->no_compensation)
		r->cost_ns = wcost / (double)pev * r->fixed_to_ns;
	if (lev && !o->no_compensation)
		r->lib_cost_ns = wlib / (double)lev * r->fixed_to_ns;
	r->call_cost_ns = d->nprocs && !o->no_compensation ? (double)inner_sum / d->nprocs * r->fixed_to_ns : 0;
	r->cost_samples = o->no_compensation || !d->nprocs ? 0 : measured ? samples : 1;
	r->cost_min_ns = r->cost_samples ? (double)cmin * r->fixed_to_ns : 0;
	r->cost_max_ns = r->cost_samples ? (double)cmax * r->fixed_to_ns : 0;

	struct an_acc *fa = an_acc_new(r->nfuncs), *ma = an_acc_new(r->nmods);
	for (uint32_t i = 0; i < r->nthreads; i++)
		an_fold_tree(r, &r->threads[i].tree, fa, ma);

	r->functions = xcalloc(r->nfuncs + 1, sizeof(*r->functions));
	r->modules = xcalloc(r->nmods + 1, sizeof(*r->modules));
	r->thread_rows = xcalloc(r->nthreads + 1, sizeof(*r->thread_rows));
	r->processes = xcalloc(d->nprocs + 1, sizeof(*r->processes));
	/* under a filter, only what the selection holds has a row */
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		if (r->filtered && !fa[i].seen)
			continue;
		struct an_row *row = &r->functions[r->nfunctions++];
		acc_to_row(r, &fa[i], row);
		row->name = r->funcs[i].name;
		row->module = r->mods[r->funcs[i].module].base;
		row->func = i;
		row->file = r->funcs[i].file;
	}
	for (uint32_t i = 0; i < r->nmods; i++) {
		if (r->filtered && !ma[i].seen)
			continue;
		struct an_row *row = &r->modules[r->nmodules++];
		acc_to_row(r, &ma[i], row);
		row->name = row->module = r->mods[i].base;
	}
	uint64_t *pe = xcalloc(d->nprocs + 1, sizeof(*pe)), *pa = xcalloc(d->nprocs + 1, sizeof(*pa));
	uint64_t se = 0, sa = 0;
	uint8_t *pshow = xcalloc(d->nprocs + 1, 1);
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
}
