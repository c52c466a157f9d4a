/*
 * an_sample.c - the sampling analysis of doc/numbers.md (sampling).
 *
 * Every kept sample is one call stack.  Its innermost function gets an
 * exclusive sample; each distinct function on it an inclusive one.  Stacks
 * are added to a calling-context tree per thread (inclusive count on every
 * node of the path, exclusive on the last), and functions and modules are
 * folded from the trees as for instrumentation: inclusive counts only over
 * nodes without an ancestor of the same function, so recursion counts once.
 * Source lines and instruction addresses are counted directly per sample,
 * each distinct one once.
 *
 * An address in inlined code stands for its inline chain (recorded in the
 * data file with its source line): the stack is expanded, per address, to
 * the function holding the code, then each function inlined there,
 * innermost on top, and each inlined call site's line counts inclusively.
 *
 * A filter selects samples (analysis.h): those of the threads it names
 * and, for a function or module pattern, those with a matching function
 * on the expanded stack.  Only selected samples are counted, in every
 * table (functions, modules, threads, processes, lines, addresses).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "../format/fmt_sample.h"

/* A string-keyed counter table for lines and addresses. */
struct key_tab {
	char **keys;
	uint32_t *mods;
	uint64_t *incl, *excl;
	uint32_t *last_sample; /* the sample that last counted it inclusively */
	uint32_t n, cap;
	uint32_t *hash, hcap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static uint32_t tab_get(struct key_tab *t, const char *key, uint32_t mod)
{
	if ((t->n + 1) * 2 > t->hcap) {
		uint32_t ncap = t->hcap ? t->hcap * 2 : 1024;
		uint32_t *nh = malloc(ncap * sizeof(*nh));
		if (!nh)
			abort();
		memset(nh, 0xff, ncap * sizeof(*nh));
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t s = (uint32_t)hash_str(t->keys[i]) & (ncap - 1);
			while (nh[s] != ~0u)
				s = (s + 1) & (ncap - 1);
			nh[s] = i;
		}
		free(t->hash);
		t->hash = nh;
		t->hcap = ncap;
	}
	uint32_t s = (uint32_t)hash_str(key) & (t->hcap - 1);
	while (t->hash[s] != ~0u) {
		if (strcmp(t->keys[t->hash[s]], key) == 0)
			return t->hash[s];
		s = (s + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->keys = realloc(t->keys, t->cap * sizeof(*t->keys));
		t->mods = realloc(t->mods, t->cap * sizeof(*t->mods));
		t->incl = realloc(t->incl, t->cap * sizeof(*t->incl));
		t->excl = realloc(t->excl, t->cap * sizeof(*t->excl));
		t->last_sample = realloc(t->last_sample, t->cap * sizeof(*t->last_sample));
		if (!t->keys || !t->mods || !t->incl || !t->excl || !t->last_sample)
			abort();
	}
	uint32_t i = t->n++;
	t->keys[i] = strdup(key);
	t->mods[i] = mod;
	t->incl[i] = t->excl[i] = 0;
	t->last_sample[i] = ~0u;
	t->hash[s] = i;
	return i;
}

static void tab_count(struct key_tab *t, uint32_t i, uint32_t sample, int leaf)
{
	if (leaf)
		t->excl[i]++;
	if (t->last_sample[i] != sample) {
		t->last_sample[i] = sample;
		t->incl[i]++;
	}
}

/* Move the table into rows owned by r; the keys become r's strings. */
static void tab_rows(struct an_result *r, struct key_tab *t, struct an_row **rows, uint32_t *n)
{
	*rows = calloc(t->n + 1, sizeof(**rows));
	r->owned = realloc(r->owned, (r->nowned + t->n + 1) * sizeof(*r->owned));
	if (!*rows || !r->owned)
		abort();
	for (uint32_t i = 0; i < t->n; i++) {
		struct an_row *row = &(*rows)[i];
		row->name = t->keys[i];
		row->module = t->mods[i] < r->nmods ? r->mods[t->mods[i]].base : "";
		row->v[AN_EI] = (double)t->incl[i];
		row->v[AN_EE] = (double)t->excl[i];
		r->owned[r->nowned++] = t->keys[i];
	}
	*n = t->n;
	free(t->keys);
	free(t->mods);
	free(t->incl);
	free(t->excl);
	free(t->last_sample);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

static const uint32_t *inline_fns(struct an_result *r, const struct fmt_process *p, struct an_inline_cache *c,
				  const struct fmt_line *l, uint32_t module)
{
	uint32_t li = (uint32_t)(l - p->lines);
	if (!c->at) {
		c->at = malloc((p->nlines + 1) * sizeof(*c->at));
		if (!c->at)
			abort();
		memset(c->at, 0xff, (p->nlines + 1) * sizeof(*c->at));
	}
	if (c->at[li] == ~0u) {
		if (c->npool + l->ninl > c->cappool) {
			c->cappool = (c->npool + l->ninl) * 2 + 64;
			c->pool = realloc(c->pool, c->cappool * sizeof(*c->pool));
			if (!c->pool)
				abort();
		}
		c->at[li] = c->npool;
		for (uint32_t k = 0; k < l->ninl; k++)
			c->pool[c->npool++] = an_func_intern(r, l->inl[k].name, module, l->inl[k].file, l->inl[k].line);
	}
	return c->pool + c->at[li];
}

void an_inline_cache_free(struct an_inline_cache *c)
{
	free(c->at);
	free(c->pool);
	memset(c, 0, sizeof(*c));
}

size_t an_sample_frames(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
			struct an_inline_cache *c, const uint64_t *pcs, unsigned n, uint32_t *outer,
			uint32_t **fns, size_t *cap)
{
	size_t ne = 0;
	for (unsigned i = 0; i < n; i++) {
		/* a caller's return address may be past its function's end: the
		 * call instruction, one byte back, is inside it */
		uint64_t a = i ? pcs[i] - 1 : pcs[i];
		uint32_t fn = an_resolve(r, p, m, a);
		if (outer)
			outer[i] = fn;
		const struct fmt_line *l = fmt_line_at(p, a);
		size_t need = ne + 1 + (l ? l->ninl : 0);
		if (need > *cap) {
			*cap = need * 2 + 64;
			*fns = realloc(*fns, *cap * sizeof(**fns));
			if (!*fns)
				abort();
		}
		if (l && l->ninl) {
			const uint32_t *chain = inline_fns(r, p, c, l, r->funcs[fn].module);
			for (uint32_t k = l->ninl; k-- > 0;)
				(*fns)[ne++] = chain[k];
		}
		(*fns)[ne++] = fn;
	}
	return ne;
}

static const struct fmt_module *module_of(const struct fmt_process *p, uint64_t a)
{
	for (uint32_t i = 0; i < p->nmods; i++)
		if (a >= p->mods[i].start && a < p->mods[i].end)
			return &p->mods[i];
	return NULL;
}

/*
 * The line and address rows one sampled address counts for, made once per
 * address of a process (as the leaf and as a caller: a caller's line is
 * one byte back), so that a sample costs no string formatting.
 */
struct frame_keys {
	uint64_t pc;     /* the sampled address */
	uint8_t leaf;    /* as the leaf (exact) or as a caller (one byte back) */
	uint8_t used;    /* 0: an empty slot (any pc, 0 included, may be sampled) */
	uint32_t line;   /* lines row of its own line, ~0u if none */
	uint32_t addr;   /* addresses row */
	uint32_t calls, ncalls; /* lines rows of the inlined call sites: pool[calls..] */
};

struct key_cache {
	struct frame_keys *slot;
	uint32_t len, cap;
	uint32_t *pool;
	uint32_t npool, cappool;
};

static void key_cache_free(struct key_cache *c)
{
	free(c->slot);
	free(c->pool);
	memset(c, 0, sizeof(*c));
}

static struct frame_keys *key_slot(struct key_cache *c, uint64_t pc, uint8_t leaf)
{
	uint32_t s = (uint32_t)(((pc ^ leaf) * 0x9E3779B97F4A7C15ull) >> 32) & (c->cap - 1);
	while (c->slot[s].used && (c->slot[s].pc != pc || c->slot[s].leaf != leaf))
		s = (s + 1) & (c->cap - 1);
	return &c->slot[s];
}

static const struct frame_keys *frame_keys(struct key_cache *c, struct an_result *r, const struct fmt_process *p,
					   struct key_tab *lines, struct key_tab *addrs, uint64_t pc, int leaf,
					   uint32_t fn)
{
	uint8_t lf = leaf ? 1 : 0;
	if (c->cap) {
		struct frame_keys *f = key_slot(c, pc, lf);
		if (f->used)
			return f;
	}
	if ((c->len + 1) * 2 > c->cap) {
		struct key_cache n = *c;
		n.cap = c->cap ? c->cap * 2 : 1024;
		n.slot = calloc(n.cap, sizeof(*n.slot));
		if (!n.slot)
			abort();
		for (uint32_t i = 0; i < c->cap; i++)
			if (c->slot[i].used)
				*key_slot(&n, c->slot[i].pc, c->slot[i].leaf) = c->slot[i];
		free(c->slot);
		*c = n;
	}
	struct frame_keys *f = key_slot(c, pc, lf);
	c->len++;
	f->pc = pc;
	f->leaf = lf;
	f->used = 1;
	f->line = ~0u;
	char k[4200];
	uint64_t a = leaf ? pc : pc - 1;
	const struct fmt_module *m = module_of(p, pc);
	uint32_t mod = an_module_intern(r, m ? m->path : NULL);
	const struct fmt_line *l = fmt_line_at(p, a);
	uint32_t calls[64], ncalls = 0;
	if (l) {
		snprintf(k, sizeof(k), "%s:%u", l->file, l->line);
		f->line = tab_get(lines, k, mod);
		for (uint32_t i = 0; i < l->ninl && ncalls < 64; i++)
			if (l->inl[i].call_line) {
				snprintf(k, sizeof(k), "%s:%u", l->inl[i].call_file, l->inl[i].call_line);
				calls[ncalls++] = tab_get(lines, k, mod);
			}
	}
	if (c->npool + ncalls > c->cappool) {
		c->cappool = (c->npool + ncalls) * 2 + 64;
		c->pool = realloc(c->pool, c->cappool * sizeof(*c->pool));
		if (!c->pool)
			abort();
	}
	f->calls = c->npool;
	f->ncalls = ncalls;
	if (ncalls)
		memcpy(c->pool + c->npool, calls, ncalls * sizeof(*calls));
	c->npool += ncalls;
	const char *fname = r->funcs[fn].name;
	const struct fmt_symbol *s = fmt_symbol_at(p, a);
	uint64_t off = m ? pc - m->start + m->offset : pc;
	if (s)
		snprintf(k, sizeof(k), "0x%llx %s+0x%llx", (unsigned long long)off, fname,
			 (unsigned long long)(pc - s->addr));
	else
		snprintf(k, sizeof(k), "0x%llx %s", (unsigned long long)off, fname);
	f->addr = tab_get(addrs, k, mod);
	return f;
}

/* Whether the expanded stack fns[0..n) has a function matching f. */
static int stack_matches(const struct an_result *r, const struct an_filter *f, struct an_match_cache *mc,
			 const uint32_t *fns, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (an_filter_match_cached(r, f, mc, fns[i]))
			return 1;
	return 0;
}

int an_sample_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r)
{
	memset(r, 0, sizeof(*r));
	const struct an_filter *flt = o ? o->filter : NULL;
	int by_fn = flt && (flt->function || flt->module);
	struct an_match_cache mc = {0};
	r->filtered = an_filter_active(flt);
	r->sampling = 1;
	r->fixed_to_ns = 1;
	r->nthreads = d->nthreads;
	r->threads = calloc(d->nthreads + 1, sizeof(*r->threads));
	struct an_addr_map *maps = calloc(d->nprocs + 1, sizeof(*maps));
	struct an_inline_cache *inl = calloc(d->nprocs + 1, sizeof(*inl));
	struct key_cache *kc = calloc(d->nprocs + 1, sizeof(*kc));
	if (!r->threads || !maps || !inl || !kc)
		return -1;
	struct key_tab lines = {0}, addrs = {0};
	uint64_t *pcs = malloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	uint32_t *outer = malloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*outer));
	size_t fcap = 2 * FMT_SAMPLE_MAX_FRAMES;
	uint32_t *fns = malloc(fcap * sizeof(*fns)); /* the expanded stack, innermost first */
	if (!pcs || !outer || !fns)
		return -1;
	uint32_t sample_id = 0;
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		const struct fmt_thread *th = &d->threads[ti];
		const struct fmt_process *p = &d->procs[th->proc];
		struct an_thread *at = &r->threads[ti];
		at->proc = th->proc;
		at->index = ti;
		at->selected = an_filter_thread(d, flt, ti);
		cct_init(&at->tree);
		const uint8_t *q = th->ev, *end = q ? q + th->ev_len : q;
		uint64_t dt;
		unsigned n;
		int cut, rc;
		while ((rc = fmt_get_sample(&q, end, &dt, pcs, &n, &cut)) > 0) {
			if (!n)
				continue;
			at->events++;
			r->cut_stacks += (uint64_t)cut;
			if (!at->selected)
				continue;
			/* each address: the inline chain there, then the function holding the code */
			size_t ne = an_sample_frames(r, p, &maps[th->proc], &inl[th->proc], pcs, n, outer, &fns, &fcap);
			if (by_fn && !stack_matches(r, flt, &mc, fns, ne))
				continue; /* not in the selection */
			at->nsel++;
			uint32_t node = 0;
			for (size_t i = ne; i-- > 0;) {
				node = cct_child(&at->tree, node, fns[i]);
				at->tree.n[node].v[AN_EI]++;
				at->tree.n[node].selected = 1;
			}
			at->tree.n[node].v[AN_EE]++;
			/* lines and addresses: the leaf exactly, callers one byte back;
			 * inlined call sites' lines inclusively */
			for (unsigned i = 0; i < n; i++) {
				const struct frame_keys *fk =
					frame_keys(&kc[th->proc], r, p, &lines, &addrs, pcs[i], i == 0, outer[i]);
				if (fk->line != ~0u)
					tab_count(&lines, fk->line, sample_id, i == 0);
				for (uint32_t k = 0; k < fk->ncalls; k++)
					tab_count(&lines, kc[th->proc].pool[fk->calls + k], sample_id, 0);
				tab_count(&addrs, fk->addr, sample_id, i == 0);
			}
			sample_id++;
		}
		if (rc < 0)
			at->damaged = 1;
		at->tree.n[0].selected = 1;
		at->total_e = at->nsel;
		at->whole_e = at->events;
		r->samples += at->events;
		if (at->damaged)
			r->damaged_threads++;
	}
	free(pcs);
	free(outer);
	free(fns);
	for (uint32_t i = 0; i < d->nprocs; i++) {
		an_addr_map_free(&maps[i]);
		an_inline_cache_free(&inl[i]);
		key_cache_free(&kc[i]);
	}
	free(kc);
	free(maps);
	free(inl);
	an_match_cache_free(&mc);

	struct an_acc *fa = calloc(r->nfuncs + 1, sizeof(*fa));
	struct an_acc *ma = calloc(r->nmods + 1, sizeof(*ma));
	uint32_t *fn_on = calloc(r->nfuncs + 1, sizeof(*fn_on));
	uint32_t *mod_on = calloc(r->nmods + 1, sizeof(*mod_on));
	r->functions = calloc(r->nfuncs + 1, sizeof(*r->functions));
	r->modules = calloc(r->nmods + 1, sizeof(*r->modules));
	r->thread_rows = calloc(r->nthreads + 1, sizeof(*r->thread_rows));
	r->processes = calloc(d->nprocs + 1, sizeof(*r->processes));
	if (!fa || !ma || !fn_on || !mod_on || !r->functions || !r->modules || !r->thread_rows ||
	    !r->processes)
		return -1;
	for (uint32_t i = 0; i < r->nthreads; i++)
		an_fold_tree(r, &r->threads[i].tree, fa, ma, fn_on, mod_on);
	/* under a filter, only what the selection holds has a row */
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		if (r->filtered && !fa[i].seen)
			continue;
		struct an_row *row = &r->functions[r->nfunctions++];
		row->v[AN_EI] = (double)fa[i].v[AN_EI];
		row->v[AN_EE] = (double)fa[i].v[AN_EE];
		row->name = r->funcs[i].name;
		row->module = r->mods[r->funcs[i].module].base;
		row->func = i;
	}
	for (uint32_t i = 0; i < r->nmods; i++) {
		if (r->filtered && !ma[i].seen)
			continue;
		struct an_row *row = &r->modules[r->nmodules++];
		row->v[AN_EI] = (double)ma[i].v[AN_EI];
		row->v[AN_EE] = (double)ma[i].v[AN_EE];
		row->name = row->module = r->mods[i].base;
	}
	uint64_t nsel = 0;
	uint8_t *pshow = calloc(d->nprocs + 1, 1);
	if (!pshow)
		return -1;
	for (uint32_t i = 0; i < r->nthreads; i++) {
		const struct fmt_thread *th = &d->threads[i];
		nsel += r->threads[i].nsel;
		if (r->filtered && !r->threads[i].nsel)
			continue;
		pshow[th->proc] = 1;
		struct an_row *row = &r->thread_rows[r->nthread_rows++];
		row->v[AN_EI] = row->v[AN_EE] = (double)r->threads[i].nsel;
		row->tid = th->tid;
		row->pid = d->procs[th->proc].pid;
		row->name = row->extra = th->name;
		row->module = "";
	}
	for (uint32_t pi = 0; pi < d->nprocs; pi++) {
		if (r->filtered && !pshow[pi])
			continue;
		struct an_row *row = &r->processes[r->nprocesses++];
		for (uint32_t i = 0; i < r->nthreads; i++)
			if (d->threads[i].proc == pi)
				row->v[AN_EI] += (double)r->threads[i].nsel;
		row->v[AN_EE] = row->v[AN_EI];
		row->pid = d->procs[pi].pid;
		row->name = row->extra = d->procs[pi].command;
		row->module = "";
	}
	free(pshow);
	r->session.v[AN_EI] = r->session.v[AN_EE] = (double)nsel;
	r->whole[AN_EI] = r->whole[AN_EE] = (double)r->samples;
	r->session.name = "session";
	r->session.module = "";
	tab_rows(r, &lines, &r->lines, &r->nlines);
	tab_rows(r, &addrs, &r->addresses, &r->naddresses);
	free(fa);
	free(ma);
	free(fn_on);
	free(mod_on);
	return 0;
}
