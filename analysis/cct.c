/*
 * cct.c - the calling-context tree and the interning of functions and
 * modules shared by both analyses.  Memory grows with the number of
 * distinct call paths and functions, never with the number of events.
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "analysis.h"
#include "../lib/util.h"

void cct_init(struct cct *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 1024;
	t->n = xcalloc(t->cap, sizeof(*t->n));
	t->len = 1; /* the root */
	t->n[0].parent = ~0u;
	t->n[0].fn = ~0u;
}

void cct_release(struct cct *t)
{
	free(t->n);
	free(t->unc);
	util_index_free(&t->index);
	memset(t, 0, sizeof(*t));
}

static uint64_t cct_key(uint32_t parent, uint32_t fn)
{
	return util_hash64(((uint64_t)parent << 32) | fn);
}

static uint64_t cct_node_key(const void *t, uint32_t i)
{
	const struct cct_node *n = &((const struct cct *)t)->n[i];
	return cct_key(n->parent, n->fn);
}

uint32_t cct_child(struct cct *t, uint32_t parent, uint32_t fn)
{
	util_index_reserve(&t->index, t->len, cct_node_key, t);
	uint32_t *s = util_index_probe(&t->index, cct_key(parent, fn));
	for (; *s != UTIL_INDEX_EMPTY; s = util_index_next(&t->index, s))
		if (t->n[*s].parent == parent && t->n[*s].fn == fn)
			return *s;
	if (t->len == t->cap) {
		t->cap *= 2;
		t->n = xrealloc(t->n, t->cap * sizeof(*t->n));
	}
	uint32_t i = t->len++;
	struct cct_node *n = &t->n[i];
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	for (int k = 0; k < AN_NVALUES; k++)
		n->vmin[k] = -1; /* no call yet */
	n->next = t->n[parent].child;
	t->n[parent].child = i;
	*s = i;
	return i;
}

void cct_add_uncounted(struct cct *t, uint32_t node, const double *v)
{
	for (uint32_t i = 0; i < t->nunc; i++)
		if (t->unc[i].node == node) {
			for (int k = 0; k < AN_NVALUES; k++)
				t->unc[i].v[k] += v[k];
			return;
		}
	if (t->nunc == t->uncap) {
		t->uncap = t->uncap ? 2 * t->uncap : 16;
		t->unc = xrealloc(t->unc, t->uncap * sizeof(*t->unc));
	}
	struct cct_uncounted *u = &t->unc[t->nunc++];
	u->node = node;
	memcpy(u->v, v, sizeof(u->v));
}

static uint64_t mod_key(const void *r, uint32_t i)
{
	return util_hash_str(((const struct an_result *)r)->mods[i].path, 0);
}

/* A module's file name: what follows the path's last slash. */
uint32_t an_module_intern(struct an_result *r, const char *path)
{
	if (!path || !*path)
		path = "[unknown]";
	util_index_reserve(&r->mod_index, r->nmods, mod_key, r);
	uint32_t *s = util_index_probe(&r->mod_index, util_hash_str(path, 0));
	for (; *s != UTIL_INDEX_EMPTY; s = util_index_next(&r->mod_index, s))
		if (strcmp(r->mods[*s].path, path) == 0)
			return *s;
	if (r->nmods == r->capmods) {
		r->capmods = r->capmods ? r->capmods * 2 : 16;
		r->mods = xrealloc(r->mods, r->capmods * sizeof(*r->mods));
	}
	struct an_module *m = &r->mods[r->nmods];
	m->path = xstrdup(path);
	m->base = util_file_name(m->path);
	*s = r->nmods;
	return r->nmods++;
}

static uint64_t func_hash(const char *name, uint32_t module)
{
	return util_hash_str(name, module * 0x9E3779B97F4A7C15ull);
}

static uint64_t func_key(const void *r, uint32_t i)
{
	const struct an_func *f = &((const struct an_result *)r)->funcs[i];
	return func_hash(f->name, f->module);
}

const char *an_func_label(const struct an_result *r, uint32_t fn, char *buf, size_t n)
{
	if (fn >= r->nfuncs)
		return "?";
	const struct an_func *f = &r->funcs[fn];
	if (!f->file || !*f->file || !r->fn_index.cap)
		return f->name;
	/* 0: alone, 1: another of its name (its file's name tells it), 2: its
	 * file's name too (a/util.c, b/util.c: the path) */
	int shared = 0;
	for (uint32_t *s = util_index_probe(&r->fn_index, func_hash(f->name, f->module));
	     *s != UTIL_INDEX_EMPTY && shared < 2; s = util_index_next(&r->fn_index, s)) {
		const struct an_func *o = &r->funcs[*s];
		if (*s != fn && o->module == f->module && strcmp(o->name, f->name) == 0)
			shared = strcmp(util_file_name(o->file), util_file_name(f->file)) == 0 ? 2 : 1;
	}
	if (!shared)
		return f->name;
	snprintf(buf, n, "%s:%s", shared == 2 ? f->file : util_file_name(f->file), f->name);
	return buf;
}

uint32_t an_func_intern(struct an_result *r, const char *name, uint32_t module, const char *file,
			uint32_t line)
{
	util_index_reserve(&r->fn_index, r->nfuncs, func_key, r);
	uint32_t *s = util_index_probe(&r->fn_index, func_hash(name, module));
	if (!file)
		file = "";
	/* (files recorded before stint tidied paths: "app/../include/v.h") */
	char tidy[4096];
	if ((strstr(file, "/.") || strstr(file, "//") || file[0] == '.') && strlen(file) < sizeof(tidy)) {
		strcpy(tidy, file);
		util_path_tidy(tidy);
		file = tidy;
	}
	for (; *s != UTIL_INDEX_EMPTY; s = util_index_next(&r->fn_index, s)) {
		struct an_func *f = &r->funcs[*s];
		if (f->module != module || strcmp(f->name, name) != 0)
			continue;
		/* two functions of one name in one module are two when both
		 * files are known and differ (static ones of two source files,
		 * perf's two rows); a place unknown (no DWARF there) joins the
		 * first known one; of one file the least line (an_instr_run's
		 * threads meet them in any order) */
		if (*file && *f->file && strcmp(file, f->file) != 0)
			continue;
		if ((*file && !*f->file) || (*file && line < f->line)) {
			free(f->file);
			f->file = xstrdup(file);
			f->line = line;
		}
		return *s;
	}
	if (r->nfuncs == r->capfuncs) {
		r->capfuncs = r->capfuncs ? r->capfuncs * 2 : 256;
		r->funcs = xrealloc(r->funcs, r->capfuncs * sizeof(*r->funcs));
	}
	struct an_func *f = &r->funcs[r->nfuncs];
	f->name = xstrdup(name);
	f->module = module;
	f->file = xstrdup(file);
	f->line = line;
	*s = r->nfuncs;
	return r->nfuncs++;
}

static int cmp_mod_path(const void *a, const void *b, void *ctx)
{
	const struct an_result *r = ctx;
	return strcmp(r->mods[*(const uint32_t *)a].path, r->mods[*(const uint32_t *)b].path);
}

struct func_order {
	const struct an_result *r;
	const uint32_t *mrank;
};

static int cmp_func(const void *a, const void *b, void *ctx)
{
	const struct func_order *o = ctx;
	const struct an_func *x = &o->r->funcs[*(const uint32_t *)a], *y = &o->r->funcs[*(const uint32_t *)b];
	if (o->mrank[x->module] != o->mrank[y->module])
		return o->mrank[x->module] < o->mrank[y->module] ? -1 : 1;
	return strcmp(x->name, y->name);
}

void an_canonical_order(struct an_result *r)
{
	uint32_t nm = r->nmods, nf = r->nfuncs;
	uint32_t *mo = xmalloc((nm + 1) * sizeof(*mo)), *mrank = xmalloc((nm + 1) * sizeof(*mrank));
	for (uint32_t i = 0; i < nm; i++)
		mo[i] = i;
	qsort_r(mo, nm, sizeof(*mo), cmp_mod_path, r);
	for (uint32_t k = 0; k < nm; k++)
		mrank[mo[k]] = k;
	uint32_t *fo = xmalloc((nf + 1) * sizeof(*fo)), *frank = xmalloc((nf + 1) * sizeof(*frank));
	for (uint32_t i = 0; i < nf; i++)
		fo[i] = i;
	struct func_order ord = {r, mrank};
	qsort_r(fo, nf, sizeof(*fo), cmp_func, &ord);
	for (uint32_t k = 0; k < nf; k++)
		frank[fo[k]] = k;
	struct an_module *mods = xmalloc((r->capmods + 1) * sizeof(*mods));
	for (uint32_t k = 0; k < nm; k++)
		mods[k] = r->mods[mo[k]];
	struct an_func *funcs = xmalloc((r->capfuncs + 1) * sizeof(*funcs));
	for (uint32_t k = 0; k < nf; k++) {
		funcs[k] = r->funcs[fo[k]];
		funcs[k].module = mrank[funcs[k].module];
	}
	free(r->mods);
	free(r->funcs);
	r->mods = mods;
	r->funcs = funcs;
	/* the indexes are made again at the next interning, the functions'
	 * now (an_func_label looks a name up in it) */
	util_index_free(&r->mod_index);
	util_index_free(&r->fn_index);
	util_index_reserve(&r->fn_index, r->nfuncs, func_key, r);
	for (uint32_t i = 0; i < r->nthreads; i++) {
		struct cct *t = &r->threads[i].tree;
		for (uint32_t j = 1; j < t->len; j++)
			if (t->n[j].fn < nf)
				t->n[j].fn = frank[t->n[j].fn];
		util_index_free(&t->index); /* keyed by the old numbers */
	}
	free(mo);
	free(mrank);
	free(fo);
	free(frank);
	an_module_labels(r);
}

static int cmp_mod_base(const void *a, const void *b, void *arg)
{
	const struct an_result *r = arg;
	return strcmp(r->mods[*(const uint32_t *)a].base, r->mods[*(const uint32_t *)b].base);
}

/*
 * Modules are shown by file name; two files of one name in a recording
 * (/usr/bin/git and /usr/lib/git-core/git, a library of two versions) are
 * shown by path, else two rows of one name could not be told apart.
 */
void an_module_labels(struct an_result *r)
{
	uint32_t nm = r->nmods;
	uint32_t *o = xmalloc((nm + 1) * sizeof(*o));
	for (uint32_t i = 0; i < nm; i++) {
		r->mods[i].base = util_file_name(r->mods[i].path);
		o[i] = i;
	}
	qsort_r(o, nm, sizeof(*o), cmp_mod_base, r);
	for (uint32_t k = 0; k + 1 < nm; k++) {
		uint32_t e = k + 1;
		while (e < nm && strcmp(r->mods[o[k]].base, r->mods[o[e]].base) == 0)
			e++;
		if (e > k + 1) {
			for (uint32_t j = k; j < e; j++)
				r->mods[o[j]].base = r->mods[o[j]].path;
			k = e - 1;
		}
	}
	free(o);
}

void an_result_free(struct an_result *r)
{
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		free(r->funcs[i].name);
		free(r->funcs[i].file);
	}
	free(r->funcs);
	for (uint32_t i = 0; i < r->nmods; i++)
		free(r->mods[i].path);
	free(r->mods);
	for (uint32_t i = 0; i < r->nthreads; i++)
		cct_release(&r->threads[i].tree);
	free(r->threads);
	free(r->functions);
	free(r->modules);
	free(r->thread_rows);
	free(r->processes);
	util_index_free(&r->fn_index);
	util_index_free(&r->mod_index);
	free(r->lines);
	free(r->addresses);
	for (uint32_t i = 0; i < r->nowned; i++)
		free(r->owned[i]);
	free(r->owned);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------------
 * Addresses to functions
 * --------------------------------------------------------------------- */

static uint32_t addr_map_get(struct an_addr_map *m, uint64_t a)
{
	if (!m->cap)
		return ~0u;
	uint32_t s = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
	while (m->keys[s]) {
		if (m->keys[s] == a)
			return m->vals[s];
		s = (s + 1) & (m->cap - 1);
	}
	return ~0u;
}

static void addr_map_put(struct an_addr_map *m, uint64_t a, uint32_t v)
{
	if ((m->len + 1) * 2 > m->cap) {
		struct an_addr_map n = {0};
		n.cap = m->cap ? m->cap * 2 : 256;
		n.keys = xcalloc(n.cap, sizeof(*n.keys));
		n.vals = xcalloc(n.cap, sizeof(*n.vals));
		for (uint32_t i = 0; i < m->cap; i++)
			if (m->keys[i])
				addr_map_put(&n, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		n.timed_known = m->timed_known;
		n.timed = m->timed;
		*m = n;
	}
	uint32_t s = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
	while (m->keys[s] && m->keys[s] != a)
		s = (s + 1) & (m->cap - 1);
	if (!m->keys[s])
		m->len++;
	m->keys[s] = a;
	m->vals[s] = v;
}

void an_addr_map_free(struct an_addr_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static uint32_t intern_at_locked(struct an_result *r, const struct fmt_process *p, const struct fmt_symbol *s,
				 const struct fmt_module *mm, uint64_t a);

/* Intern the function that symbol s (or, unnamed, module mm) gives a. */
static uint32_t intern_at(struct an_result *r, const struct fmt_process *p, const struct fmt_symbol *s,
			  const struct fmt_module *mm, uint64_t a)
{
	if (!r->intern_lock)
		return intern_at_locked(r, p, s, mm, a);
	pthread_mutex_lock(r->intern_lock);
	uint32_t f = intern_at_locked(r, p, s, mm, a);
	pthread_mutex_unlock(r->intern_lock);
	return f;
}

static uint32_t intern_at_locked(struct an_result *r, const struct fmt_process *p, const struct fmt_symbol *s,
				 const struct fmt_module *mm, uint64_t a)
{
	if (s && s->name[0]) {
		const char *mod = s->module < p->nmods ? p->mods[s->module].path : NULL;
		return an_func_intern(r, s->name, an_module_intern(r, mod), s->file, s->line);
	}
	char name[64];
	if (mm)
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)(a - mm->start + mm->offset));
	else
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)a);
	return an_func_intern(r, name, an_module_intern(r, mm ? mm->path : NULL), "", 0);
}

uint32_t an_resolve(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
		    uint64_t a)
{
	uint32_t f = addr_map_get(m, a);
	if (f != ~0u)
		return f;
	const struct fmt_symbol *s = fmt_symbol_at(p, a);
	if (!s && a > 0) /* a return address just past a call at a function's end */
		s = fmt_symbol_at(p, a - 1);
	int mi = fmt_module_at(p, a);
	f = intern_at(r, p, s, mi >= 0 ? &p->mods[mi] : NULL, a);
	addr_map_put(m, a, f);
	return f;
}

#define AN_AMBIGUOUS (~0u - 1) /* cached: several modules held a over time */

uint32_t an_resolve_at(struct an_result *r, const struct fmt_process *p, struct an_addr_map *m,
		       uint64_t a, uint64_t ticks)
{
	uint32_t f = addr_map_get(m, a);
	if (f != ~0u && f != AN_AMBIGUOUS)
		return f;
	if (f == ~0u) {
		if (!m->timed_known) {
			m->timed = (uint8_t)fmt_has_module_times(p);
			m->timed_known = 1;
		}
		int covering = 0;
		for (uint32_t i = 0; m->timed && i < p->nmods; i++)
			covering += a >= p->mods[i].start && a < p->mods[i].end;
		if (covering <= 1)
			return an_resolve(r, p, m, a);
		addr_map_put(m, a, AN_AMBIGUOUS);
	}
	/* the module mapped at the event's time decides; cached per module
	 * (user-space addresses leave the top bits free for its index) */
	int mi = fmt_module_at_time(p, a, ticks);
	uint64_t key = a | (uint64_t)(mi + 1) << 48;
	f = addr_map_get(m, key);
	if (f != ~0u)
		return f;
	const struct fmt_symbol *s = fmt_symbol_at_time(p, a, ticks);
	if (!s && a > 0)
		s = fmt_symbol_at_time(p, a - 1, ticks);
	f = intern_at(r, p, s, mi >= 0 ? &p->mods[mi] : NULL, a);
	addr_map_put(m, key, f);
	return f;
}

/* ------------------------------------------------------------------------
 * Folding trees into functions and modules
 * --------------------------------------------------------------------- */

void an_select_ancestors(struct cct *t)
{
	/* nodes are created after their parents: one backward pass */
	for (uint32_t i = t->len; i-- > 1;)
		if (t->n[i].selected)
			t->n[t->n[i].parent].selected = 1;
	if (t->len)
		t->n[0].selected = 1;
}

uint32_t cct_preorder(const struct cct *t, const struct an_result *r, int by_module, uint32_t **order,
		      uint32_t **same)
{
	return cct_preorder_outer(t, r, by_module, order, same, NULL);
}

uint32_t cct_preorder_outer(const struct cct *t, const struct an_result *r, int by_module, uint32_t **order,
			    uint32_t **same, uint32_t **outermost)
{
	/* one walk with an explicit stack and how often each key is on the
	 * current path: asking each node's ancestors instead would take depth
	 * x nodes steps, and a recursion 200,000 deep has that many of both */
	uint32_t nkeys = by_module ? r->nmods : r->nfuncs;
	uint32_t *ord = xmalloc((t->len + 1) * sizeof(*ord));
	uint32_t *sm = xcalloc(t->len + 1, sizeof(*sm));
	uint32_t *st = xmalloc((t->len + 1) * sizeof(*st));
	uint32_t *kid = xmalloc((t->len + 1) * sizeof(*kid));
	uint32_t *onpath = xcalloc(nkeys + 1, sizeof(*onpath));
	/* the outermost node of each key on the path (valid while onpath > 0) */
	uint32_t *first = outermost ? xmalloc((nkeys + 1) * sizeof(*first)) : NULL;
	uint32_t *outer = outermost ? xmalloc((t->len + 1) * sizeof(*outer)) : NULL;
	uint32_t n = 0, sp = 0;
	st[sp] = 0;
	kid[sp++] = t->n[0].child;
	while (sp) {
		uint32_t c = kid[sp - 1];
		if (!c) {
			uint32_t done = st[--sp];
			uint32_t fn = t->n[done].fn;
			if (done && fn < r->nfuncs)
				onpath[by_module ? r->funcs[fn].module : fn]--;
			continue;
		}
		kid[sp - 1] = t->n[c].next;
		uint32_t fn = t->n[c].fn;
		if (fn < r->nfuncs) {
			uint32_t key = by_module ? r->funcs[fn].module : fn;
			sm[c] = onpath[key]++;
			if (first) {
				if (!sm[c])
					first[key] = c;
				outer[c] = first[key];
			}
		} else if (outer) {
			outer[c] = c;
		}
		ord[n++] = c;
		st[sp] = c;
		kid[sp++] = t->n[c].child;
	}
	free(st);
	free(kid);
	free(onpath);
	free(first);
	*order = ord;
	*same = sm;
	if (outermost) {
		outer[0] = 0;
		*outermost = outer;
	}
	return n;
}

struct an_acc *an_acc_new(uint32_t n)
{
	struct an_acc *acc = xcalloc(n + 1, sizeof(*acc));
	for (uint32_t i = 0; i <= n; i++)
		for (int k = 0; k < AN_NVALUES; k++)
			acc[i].vmin[k] = -1;
	return acc;
}

/* The selected nodes of t into acc, by function or module: an unselected
 * node has no selected one below it. */
static void fold_by(const struct an_result *r, const struct cct *t, int by_module, struct an_acc *acc)
{
	uint32_t *order, *same;
	uint32_t len = cct_preorder(t, r, by_module, &order, &same);
	for (uint32_t j = 0; j < len; j++) {
		const struct cct_node *n = &t->n[order[j]];
		if (!n->selected || n->fn >= r->nfuncs)
			continue;
		struct an_acc *a = &acc[by_module ? r->funcs[n->fn].module : n->fn];
		a->seen = 1;
		a->calls += n->calls;
		for (int k = 0; k < AN_NVALUES; k++)
			a->callsum[k] += n->v[k];
		a->v[AN_EE] += n->v[AN_EE];
		a->v[AN_AE] += n->v[AN_AE];
		if (!same[order[j]]) {
			a->v[AN_EI] += n->v[AN_EI];
			a->v[AN_AI] += n->v[AN_AI];
		}
		for (int k = 0; k < AN_NVALUES; k++) {
			if (n->vmin[k] >= 0 && (a->vmin[k] < 0 || n->vmin[k] < a->vmin[k]))
				a->vmin[k] = n->vmin[k];
			if (n->vmax[k] > a->vmax[k])
				a->vmax[k] = n->vmax[k];
		}
	}
	/* the activations that are no call: out of the calls' values */
	for (uint32_t j = 0; j < t->nunc; j++) {
		const struct cct_uncounted *u = &t->unc[j];
		const struct cct_node *n = &t->n[u->node];
		if (!n->selected || n->fn >= r->nfuncs)
			continue;
		struct an_acc *a = &acc[by_module ? r->funcs[n->fn].module : n->fn];
		for (int k = 0; k < AN_NVALUES; k++)
			a->callsum[k] -= u->v[k];
	}
	free(order);
	free(same);
}

void an_fold_tree(const struct an_result *r, const struct cct *t, struct an_acc *fa, struct an_acc *ma)
{
	if (fa)
		fold_by(r, t, 0, fa);
	if (ma)
		fold_by(r, t, 1, ma);
}
