/*
 * an_walk.c - replays of raw events and samples for the exports that need
 * a timeline, addresses or source lines, and for the instrumentation
 * analysis itself (an_walk.h).  The stack expansion is that of
 * an_sample_frames.
 */
#include <string.h>
#include <stdlib.h>

#include "an_walk.h"
#include "an_walk_loop.h"
#include "../format/fmt_event.h"
#include "../format/fmt_sample.h"
#include "../lib/util.h"

/* (an_walk.h) */
uint64_t an_call_half(const struct fmt_process *p)
{
	uint64_t fn = p->cost & ~1ull, in = p->cost_inner ? p->cost_inner / 2 : fn / 2;
	return in < fn ? in : fn;
}

/* (an_walk.h) */
void an_open_count_add(uint32_t **on, uint32_t *cap, uint32_t fn)
{
	if (fn >= *cap)
		*on = util_grow_zeroed(*on, cap, fn, sizeof(**on));
	(*on)[fn]++;
}

double an_walk_events(const struct fmt_data *d, struct an_result *r, struct an_addr_map *m, uint32_t ti,
		      int no_compensation, an_walk_event_fn cb, void *ctx)
{
	struct an_walk_totals tot;
	return an_walk_events_totals(d, r, m, ti, no_compensation, cb, ctx, &tot);
}

double an_walk_events_totals(const struct fmt_data *d, struct an_result *r, struct an_addr_map *m, uint32_t ti,
			     int no_compensation, an_walk_event_fn cb, void *ctx, struct an_walk_totals *tot)
{
	return an_walk_loop(d, r, m, ti, no_compensation, cb, ctx, tot);
}

/* The line and file of each frame of one address's expansion (an_sample_frames' order). */
static size_t frame_lines(const struct fmt_process *p, const struct an_result *r, uint64_t a, uint32_t holder,
			  const char **file, uint32_t *line)
{
	const struct fmt_line *l = fmt_line_at(p, a);
	if (!l) {
		/* no line recorded (no debug information): the function's own */
		file[0] = holder < r->nfuncs && r->funcs[holder].file[0] ? r->funcs[holder].file : NULL;
		line[0] = file[0] ? r->funcs[holder].line : 0;
		return 1;
	}
	/* innermost first: the innermost inlined function runs the address's
	 * line; each outer one (and last the holder) is at the call site of
	 * the function inlined into it */
	size_t n = 0;
	const char *f = l->file;
	uint32_t ln = l->line;
	for (uint32_t k = l->ninl; k-- > 0;) {
		file[n] = f;
		line[n++] = ln;
		f = l->inl[k].call_file;
		ln = l->inl[k].call_line;
	}
	file[n] = f && *f ? f : NULL;
	line[n++] = ln;
	return n;
}

void an_walk_samples(const struct fmt_data *d, struct an_result *r, const struct an_filter *f,
		     an_walk_sample_fn cb, void *ctx)
{
	int filtering = f && (f->module || f->function);
	struct an_addr_map *maps = xcalloc(d->nprocs + 1, sizeof(*maps));
	struct an_inline_cache *inl = xcalloc(d->nprocs + 1, sizeof(*inl));
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	uint32_t *outer = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*outer));
	size_t fcap = 2 * FMT_SAMPLE_MAX_FRAMES, kcap = fcap;
	uint32_t *all = xmalloc(fcap * sizeof(*all));
	uint32_t *fns = xmalloc(kcap * sizeof(*fns)), *pci = xmalloc(kcap * sizeof(*pci));
	uint32_t *lines = xmalloc(kcap * sizeof(*lines));
	const char **files = xmalloc(kcap * sizeof(*files));
	/* per address: at most its inline chain and the holder */
	size_t lcap = 1024;
	const char **lf = xmalloc(lcap * sizeof(*lf));
	uint32_t *ll = xmalloc(lcap * sizeof(*ll));
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		const struct fmt_thread *th = &d->threads[ti];
		const struct fmt_process *p = &d->procs[th->proc];
		if (f && f->pid && p->pid != f->pid)
			continue;
		if (f && f->tid && th->tid != f->tid)
			continue;
		double now = (double)th->start * d->ns_per_tick;
		const uint8_t *q = th->ev, *end = q ? q + th->ev_len : q;
		uint64_t dt;
		unsigned n;
		int cut;
		while (fmt_get_sample(&q, end, &dt, pcs, &n, &cut) > 0) {
			now += (double)dt;
			if (!n)
				continue;
			size_t ne = an_sample_frames(r, p, &maps[th->proc], &inl[th->proc], pcs, n, outer, &all, &fcap);
			if (ne > kcap) {
				kcap = fcap;
				fns = xrealloc(fns, kcap * sizeof(*fns));
				pci = xrealloc(pci, kcap * sizeof(*pci));
				lines = xrealloc(lines, kcap * sizeof(*lines));
				files = xrealloc(files, kcap * sizeof(*files));
			}
			size_t kept = 0, at = 0;
			int match = !filtering;
			for (unsigned i = 0; i < n && at < ne; i++) {
				uint64_t a = fmt_caller_pc(pcs[i], i == 0);
				const struct fmt_line *l = fmt_line_at(p, a);
				size_t want = 1 + (l ? l->ninl : 0);
				if (want > lcap) {
					lcap = want * 2;
					lf = xrealloc(lf, lcap * sizeof(*lf));
					ll = xrealloc(ll, lcap * sizeof(*ll));
				}
				size_t nl = frame_lines(p, r, a, outer[i], lf, ll);
				uint32_t holder = outer[i];
				const struct an_module *m =
					holder < r->nfuncs && r->funcs[holder].module < r->nmods
						? &r->mods[r->funcs[holder].module] : NULL;
				int system = f && f->just_my_code && an_is_system_module(m ? m->path : NULL);
				for (size_t k = 0; k < nl && at < ne; k++, at++) {
					if (system)
						continue;
					if (filtering && !match && an_filter_match(r, f, all[at]))
						match = 1;
					fns[kept] = all[at];
					pci[kept] = i;
					files[kept] = lf[k];
					lines[kept++] = ll[k];
				}
			}
			if (!kept || !match)
				continue;
			struct an_walk_sample s = {.thread = ti, .proc = th->proc, .time = now, .pcs = pcs, .npcs = n,
						   .nframes = kept, .fn = fns, .pc_index = pci, .file = files,
						   .line = lines};
			cb(ctx, &s);
		}
	}
	for (uint32_t i = 0; i < d->nprocs; i++) {
		an_addr_map_free(&maps[i]);
		an_inline_cache_free(&inl[i]);
	}
	free(maps);
	free(inl);
	free(pcs);
	free(outer);
	free(all);
	free(fns);
	free(pci);
	free(lines);
	free(files);
	free(lf);
	free(ll);
}
