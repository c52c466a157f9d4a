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
 * an_sample_function counts one function's samples per line and address
 * for `stint annotate`, with the same counters.
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
#include "../lib/util.h"

/* A string-keyed counter table for lines and addresses. */
struct key_tab {
	char **keys;
	uint32_t *mods;
	uint64_t *incl, *excl;
	uint32_t *last_sample; /* the sample that last counted it inclusively */
	uint32_t n, cap;
	struct util_index index; /* key -> entry */
};

static uint64_t tab_key(const void *t, uint32_t i)
{
	return util_hash_str(((const struct key_tab *)t)->keys[i], 0);
}

static uint32_t tab_get(struct key_tab *t, const char *key, uint32_t mod)
{
	util_index_reserve(&t->index, t->n, tab_key, t);
	uint32_t *s = util_index_probe(&t->index, util_hash_str(key, 0));
	for (; *s != UTIL_INDEX_EMPTY; s = util_index_next(&t->index, s))
		if (strcmp(t->keys[*s], key) == 0)
			return *s;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->keys = xrealloc(t->keys, t->cap * sizeof(*t->keys));
		t->mods = xrealloc(t->mods, t->cap * sizeof(*t->mods));
		t->incl = xrealloc(t->incl, t->cap * sizeof(*t->incl));
		t->excl = xrealloc(t->excl, t->cap * sizeof(*t->excl));
		t->last_sample = xrealloc(t->last_sample, t->cap * sizeof(*t->last_sample));
	}
	uint32_t i = t->n++;
	t->keys[i] = xstrdup(key);
	t->mods[i] = mod;
	t->incl[i] = t->excl[i] = 0;
	t->last_sample[i] = ~0u;
	*s = i;
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

/* Free t's arrays (not the key strings: whoever took them frees them). */
static void tab_release(struct key_tab *t)
{
	free(t->keys);
	free(t->mods);
	free(t->incl);
	free(t->excl);
	free(t->last_sample);
	util_index_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* Move the table into rows owned by r; the keys become r's strings. */
static void tab_rows(struct an_result *r, struct key_tab *t, struct an_row **rows, uint32_t *n)
{
	*rows = xcalloc(t->n + 1, sizeof(**rows));
	r->owned = xrealloc(r->owned, (r->nowned + t->n + 1) * sizeof(*r->owned));
	for (uint32_t i = 0; i < t->n; i++) {
		struct an_row *row = &(*rows)[i];
		row->name = t->keys[i];
		row->module = t->mods[i] < r->nmods ? r->mods[t->mods[i]].base : "";
		row->v[AN_EI] = (double)t->incl[i];
		row->v[AN_EE] = (double)t->excl[i];
		r->owned[r->nowned++] = t->keys[i];
	}
	*n = t->n;
	tab_release(t);
}

static const uint32_t *inline_fns(struct an_result *r, const struct fmt_process *p, struct an_inline_cache *c,
				  const struct fmt_line *l, uint32_t module)
{
	uint32_t li = (uint32_t)(l - p->lines);
	if (!c->at) {
		c->at = xmalloc((p->nlines + 1) * sizeof(*c->at));
		memset(c->at, 0xff, (p->nlines + 1) * sizeof(*c->at));
	}
	if (c->at[li] == ~0u) {
		if (c->npool + l->ninl > c->cappool) {
			c->cappool = (c->npool + l->ninl) * 2 + 64;
			c->pool = xrealloc(c->pool, c->cappool * sizeof(*c->pool));
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
		uint64_t a = fmt_caller_pc(pcs[i], i == 0);
		uint32_t fn = an_resolve(r, p, m, a);
		if (outer)
			outer[i] = fn;
		const struct fmt_line *l = fmt_line_at(p, a);
		size_t need = ne + 1 + (l ? l->ninl : 0);
		if (need > *cap) {
			*cap = need * 2 + 64;
			*fns = xrealloc(*fns, *cap * sizeof(**fns));
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
		n.slot = xcalloc(n.cap, sizeof(*n.slot));
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
	uint64_t a = fmt_caller_pc(pc, leaf);
	int mi = fmt_module_at(p, pc);
	const struct fmt_module *m = mi >= 0 ? &p->mods[mi] : NULL;
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
		c->pool = xrealloc(c->pool, c->cappool * sizeof(*c->pool));
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

void an_sample_run(const struct fmt_data *d, const struct an_opts *o, struct an_result *r)
{
	memset(r, 0, sizeof(*r));
	const struct an_filter *flt = o ? o->filter : NULL;
	int by_fn = flt && (flt->function || flt->module);
	struct an_match_cache mc = {0};
	r->filtered = an_filter_active(flt);
	r->sampling = 1;
	r->fixed_to_ns = 1;
	r->nthreads = d->nthreads;
	r->threads = xcalloc(d->nthreads + 1, sizeof(*r->threads));
	struct an_addr_map *maps = xcalloc(d->nprocs + 1, sizeof(*maps));
	struct an_inline_cache *inl = xcalloc(d->nprocs + 1, sizeof(*inl));
	struct key_cache *kc = xcalloc(d->nprocs + 1, sizeof(*kc));
	struct key_tab lines = {0}, addrs = {0};
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	uint32_t *outer = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*outer));
	size_t fcap = 2 * FMT_SAMPLE_MAX_FRAMES;
	uint32_t *fns = xmalloc(fcap * sizeof(*fns)); /* the expanded stack, innermost first */
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

	struct an_acc *fa = an_acc_new(r->nfuncs), *ma = an_acc_new(r->nmods);
	r->functions = xcalloc(r->nfuncs + 1, sizeof(*r->functions));
	an_module_labels(r);
	r->modules = xcalloc(r->nmods + 1, sizeof(*r->modules));
	r->thread_rows = xcalloc(r->nthreads + 1, sizeof(*r->thread_rows));
	r->processes = xcalloc(d->nprocs + 1, sizeof(*r->processes));
	for (uint32_t i = 0; i < r->nthreads; i++)
		an_fold_tree(r, &r->threads[i].tree, fa, ma);
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
		row->file = r->funcs[i].file;
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
	uint8_t *pshow = xcalloc(d->nprocs + 1, 1);
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
}

/* ------------------------------------------------------------------------
 * One function's samples per line and address (stint annotate)
 * --------------------------------------------------------------------- */

size_t an_sample_names(const struct fmt_data *d, const char *want, int exact, const char ***names)
{
	size_t n = 0;
	*names = NULL;
	for (uint32_t p = 0; p < d->nprocs; p++) {
		const struct fmt_process *pr = &d->procs[p];
		for (uint32_t s = 0, l = 0, k = 0; s < pr->nsyms || l < pr->nlines;) {
			const char *nm;
			if (s < pr->nsyms) {
				nm = pr->syms[s++].name;
			} else if (k < pr->lines[l].ninl) {
				nm = pr->lines[l].inl[k++].name;
			} else {
				l++, k = 0;
				continue;
			}
			if (exact ? strcmp(nm, want) == 0 : strstr(nm, want) != NULL) {
				UTIL_GROW1(*names, n);
				(*names)[n++] = nm;
			}
		}
	}
	return n;
}

/* The module of p holding a (the last listed, where several do), or NULL. */
static const struct fmt_module *fn_module_holding(const struct fmt_process *p, uint64_t a)
{
	const struct fmt_module *m = NULL;
	for (uint32_t mi = 0; mi < p->nmods; mi++)
		if (a >= p->mods[mi].start && a < p->mods[mi].end)
			m = &p->mods[mi];
	return m;
}

/* What an_sample_function counts into, by key ("file:line", "offset"). */
struct fn_counts {
	struct key_tab lines, addrs;
	struct an_fn_count *line_at, *addr_at; /* per entry of lines (addrs) */
};

/* Count frame (a, its inline frame k) of a sample: its line and address. */
static void fn_count_frame(struct fn_counts *c, const struct fmt_process *p, const struct fmt_line *l, int k,
			   uint64_t a, uint32_t sample, int top)
{
	const char *lf = NULL;
	uint32_t ll = 0;
	uint32_t ninl = l ? l->ninl : 0;
	if (k + 1 < (int)ninl) {
		lf = l->inl[k + 1].call_file;
		ll = l->inl[k + 1].call_line;
	} else if (l) {
		lf = l->file;
		ll = l->line;
	}
	if (lf && ll) {
		char *key = xasprintf("%s:%u", lf, ll);
		uint32_t before = c->lines.n, i = tab_get(&c->lines, key, 0);
		free(key);
		if (c->lines.n != before) {
			UTIL_GROW1(c->line_at, i);
			c->line_at[i] = (struct an_fn_count){.file = lf, .line = ll};
		}
		tab_count(&c->lines, i, sample, top);
	}
	const struct fmt_module *m = fn_module_holding(p, a);
	uint64_t off = m ? a - m->start + m->offset : a;
	char key[32];
	snprintf(key, sizeof(key), "%llx", (unsigned long long)off);
	uint32_t before = c->addrs.n, i = tab_get(&c->addrs, key, 0);
	if (c->addrs.n != before) {
		UTIL_GROW1(c->addr_at, i);
		c->addr_at[i] = (struct an_fn_count){.addr = off};
	}
	tab_count(&c->addrs, i, sample, top);
}

/* The counts of t into rows at[] (of *n), freeing t. */
static void fn_count_rows(struct key_tab *t, struct an_fn_count *at, struct an_fn_count **rows, size_t *n)
{
	for (uint32_t i = 0; i < t->n; i++) {
		at[i].incl = t->incl[i];
		at[i].excl = t->excl[i];
		free(t->keys[i]);
	}
	*rows = at;
	*n = t->n;
	tab_release(t);
}

/* Where the function's code is: the first frame of it found. */
static void fn_place(struct an_fn_samples *out, const struct fmt_process *p, const struct fmt_symbol *s,
		     const struct fmt_line *l, int k, uint64_t a)
{
	const struct fmt_module *m = fn_module_holding(p, a);
	if (out->module || !m)
		return;
	out->module = m->path;
	out->decl_file = k < 0 ? s->file : l->inl[k].file;
	out->decl_line = k < 0 ? s->line : l->inl[k].line;
	out->offset = (k < 0 ? s->addr : a) - m->start + m->offset;
	out->size = k < 0 ? s->size : 1;
}

/* Whether module file path is the one named want (its base name, or the path). */
static int module_named(const char *path, const char *want)
{
	return strcmp(util_file_name(path), want) == 0 || strcmp(path, want) == 0;
}

int an_file_named(const char *path, const char *want)
{
	size_t pl = strlen(path), wl = strlen(want);
	if (!wl || wl > pl || strcmp(path + pl - wl, want) != 0)
		return 0;
	return wl == pl || path[pl - wl - 1] == '/' || want[0] == '/';
}

size_t an_file_prefix(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : 0;
	/* (a file's name may have spaces, "main prog.c:leaf"; a C++ name's
	 * brackets before a colon are not a file's) */
	if (!len || !colon[1] || colon[1] == ':' || strcspn(s, "([<") < len || !memchr(s, '.', len))
		return 0;
	return len;
}

void an_sample_function(const struct fmt_data *d, const char *name, const char *module, const char *file,
			struct an_fn_samples *out)
{
	memset(out, 0, sizeof(*out));
	struct fn_counts c = {0};
	uint32_t sample = 0;
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	for (uint32_t t = 0; t < d->nthreads; t++) {
		const struct fmt_thread *th = &d->threads[t];
		const struct fmt_process *p = &d->procs[th->proc];
		const uint8_t *q = th->ev, *end = th->ev + th->ev_len;
		uint64_t dt;
		unsigned n;
		int cut;
		while (fmt_get_sample(&q, end, &dt, pcs, &n, &cut) > 0) {
			sample++;
			out->total++;
			int counted = 0;
			for (unsigned i = 0; i < n; i++) {
				uint64_t a = fmt_caller_pc(pcs[i], i == 0);
				const struct fmt_symbol *s = fmt_symbol_at(p, a);
				const struct fmt_line *l = fmt_line_at(p, a);
				uint32_t ninl = l ? l->ninl : 0;
				/* the frames at a, outermost first: the function holding
				 * the code (k = -1), then each one inlined there */
				for (int k = -1; k < (int)ninl; k++) {
					const char *nm = k < 0 ? (s ? s->name : NULL) : l->inl[k].name;
					if (!nm || strcmp(nm, name) != 0)
						continue;
					/* one module's function of that name: the one asked
					 * for, else the first found (others said in out->other) */
					const struct fmt_module *m = fn_module_holding(p, a);
					if (module && (!m || !module_named(m->path, module)))
						continue;
					if (m && out->module && strcmp(m->path, out->module) != 0) {
						/* (two files of the name asked: op and v2/op) */
						if (!out->other)
							out->other = m->path;
						continue;
					}
					/* one source file's: "FILE:NAME", else the first
					 * found (two static functions of one name) */
					const char *src = k < 0 ? s->file : l->inl[k].file;
					if (file && src && *src && !an_file_named(src, file))
						continue;
					if (src && *src && out->decl_file && *out->decl_file &&
					    strcmp(src, out->decl_file) != 0) {
						if (!out->other_file)
							out->other_file = src;
						continue;
					}
					int top = i == 0 && k == (int)ninl - 1;
					fn_place(out, p, s, l, k, a);
					out->incl += !counted;
					out->excl += (uint64_t)top;
					counted = 1;
					fn_count_frame(&c, p, l, k, a, sample, top);
				}
			}
		}
	}
	free(pcs);
	fn_count_rows(&c.lines, c.line_at, &out->lines, &out->nlines);
	fn_count_rows(&c.addrs, c.addr_at, &out->addrs, &out->naddrs);
}

void an_fn_samples_free(struct an_fn_samples *s)
{
	free(s->lines);
	free(s->addrs);
	memset(s, 0, sizeof(*s));
}
