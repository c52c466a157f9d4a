/*
 * an_view.c - merged calling-context trees for the views (see an_view.h):
 * the call tree, callers/callees, just-my-code function tables and the
 * exports all read this one structure.  The filter itself is applied by
 * the analyses (the trees hold the selection only); here are its matching
 * helpers, which they share.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "an_view.h"
#include "../lib/util.h"

_Static_assert(offsetof(struct an_view, n) == offsetof(struct an_view, tree.n) &&
		       offsetof(struct an_view, len) == offsetof(struct an_view, tree.len) &&
		       offsetof(struct an_view, index) == offsetof(struct an_view, tree.index),
	       "an_view's node fields are its struct cct's");

static void view_init(struct an_view *v, const struct an_result *r)
{
	memset(v, 0, sizeof(*v));
	cct_init(&v->tree);
	v->r = r;
	v->sampling = r->sampling;
}

void an_view_release(struct an_view *v)
{
	cct_release(&v->tree);
	free(v->charged);
	memset(v, 0, sizeof(*v));
}

int an_is_system_module(const char *path)
{
	if (!path || !*path || path[0] == '[')
		return 1; /* [vdso], [kernel.kallsyms], [unknown] */
	/* a shared library (NAME.so, NAME.so.N): the programs installed there
	 * (gcc's cc1 and collect2 in /usr/lib/gcc, java in /usr/lib/jvm) are
	 * the code being run, and with their frames hidden their time had no
	 * frame to go to (82 % of a build's Application time was lost) */
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *so = strstr(base, ".so");
	if (!so || (so[3] && so[3] != '.'))
		return 0;
	static const char *const prefixes[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
					       "/usr/libexec/"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int name_match(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0 || strstr(name, pattern) != NULL;
}

/* "FILE:PATTERN", as the table labels one of two static functions of one
 * name ("b/util.c:foo"): the function's file and name. */
static int file_name_match(const char *pattern, const struct an_func *fn)
{
	char file[4096];
	size_t len = an_file_prefix(pattern);
	if (!len || len >= sizeof(file) || !fn->file)
		return 0;
	memcpy(file, pattern, len);
	file[len] = 0;
	return an_file_named(fn->file, file) && name_match(pattern + len + 1, fn->name);
}

int an_filter_match(const struct an_result *r, const struct an_filter *f, uint32_t fn)
{
	if (fn >= r->nfuncs)
		return 0;
	/* (a module by its file name, or by its path: as a report names two
	 * programs of one file name, op and v2/op) */
	const struct an_module *m = &r->mods[r->funcs[fn].module];
	if (f->module && !name_match(f->module, m->base) && !name_match(f->module, m->path))
		return 0;
	if (f->function && !name_match(f->function, r->funcs[fn].name) && !file_name_match(f->function, &r->funcs[fn]))
		return 0;
	return 1;
}

int an_filter_active(const struct an_filter *f)
{
	return f && (f->pid || f->tid || f->module || f->function);
}

int an_filter_thread(const struct fmt_data *d, const struct an_filter *f, uint32_t ti)
{
	const struct fmt_thread *th = &d->threads[ti];
	if (!f)
		return 1;
	if (f->pid && (th->proc >= d->nprocs || d->procs[th->proc].pid != f->pid))
		return 0;
	return !f->tid || th->tid == f->tid;
}

int an_filter_match_cached(const struct an_result *r, const struct an_filter *f, struct an_match_cache *c,
			   uint32_t fn)
{
	if (fn >= c->cap) {
		uint32_t cap = c->cap ? c->cap : 256;
		while (cap <= fn)
			cap *= 2;
		uint8_t *k = xrealloc(c->k, cap);
		memset(k + c->cap, 0, cap - c->cap);
		c->k = k;
		c->cap = cap;
	}
	if (!c->k[fn]) {
		if (r->intern_lock) /* another thread may be moving r->funcs */
			pthread_mutex_lock(r->intern_lock);
		c->k[fn] = an_filter_match(r, f, fn) ? 2 : 1;
		if (r->intern_lock)
			pthread_mutex_unlock(r->intern_lock);
	}
	return c->k[fn] == 2;
}

void an_match_cache_free(struct an_match_cache *c)
{
	free(c->k);
	memset(c, 0, sizeof(*c));
}

/* Add one thread's tree to the view: its selected nodes only. */
static void add_thread(struct an_view *v, const struct an_result *r, const struct cct *t,
		       const struct an_filter *f, double scale)
{
	uint32_t *map = xmalloc((t->len + 1) * sizeof(*map));
	uint32_t *stack = xmalloc((t->len + 1) * sizeof(*stack));
	map[0] = 0;
	uint32_t sp = 0;
	for (uint32_t c = t->n[0].child; c; c = t->n[c].next)
		stack[sp++] = c;
	while (sp) {
		uint32_t i = stack[--sp];
		const struct cct_node *n = &t->n[i];
		if (!n->selected)
			continue; /* nor is any node below it */
		uint32_t into = map[n->parent];
		int fold = f->just_my_code && an_is_system_module(r->mods[r->funcs[n->fn].module].path);
		if (fold) {
			/* a system frame: its own time goes to the calling user frame */
			map[i] = into;
			v->n[into].v[AN_EE] += n->v[AN_EE] * scale;
			v->n[into].v[AN_AE] += n->v[AN_AE] * scale;
			if (into >= v->ncharged) {
				uint32_t cap = v->ncharged ? v->ncharged : 1024;
				while (cap <= into)
					cap *= 2;
				v->charged = xrealloc(v->charged, cap * sizeof(*v->charged));
				memset(v->charged + v->ncharged, 0, (cap - v->ncharged) * sizeof(*v->charged));
				v->ncharged = cap;
			}
			v->charged[into][0] += n->v[AN_EE] * scale;
			v->charged[into][1] += n->v[AN_AE] * scale;
		} else {
			uint32_t vn = cct_child(&v->tree, into, n->fn);
			map[i] = vn;
			struct cct_node *w = &v->n[vn];
			w->selected = 1;
			w->calls += n->calls;
			for (int k = 0; k < AN_NVALUES; k++) {
				w->v[k] += n->v[k] * scale;
				if (n->calls && n->vmin[k] >= 0) {
					double mn = n->vmin[k] * scale, mx = n->vmax[k] * scale;
					if (w->vmin[k] < 0 || mn < w->vmin[k])
						w->vmin[k] = mn;
					if (mx > w->vmax[k])
						w->vmax[k] = mx;
				}
			}
		}
		for (uint32_t c = n->child; c; c = t->n[c].next)
			stack[sp++] = c;
	}
	/* activations that are no call go where their node went; a folded
	 * system frame's own time went to its caller (v->charged), its
	 * inclusive nowhere */
	for (uint32_t j = 0; j < t->nunc; j++) {
		const struct cct_uncounted *u = &t->unc[j];
		const struct cct_node *n = &t->n[u->node];
		if (!n->selected)
			continue;
		double x[AN_NVALUES];
		for (int k = 0; k < AN_NVALUES; k++)
			x[k] = u->v[k] * scale;
		if (f->just_my_code && an_is_system_module(r->mods[r->funcs[n->fn].module].path))
			continue; /* its own time went to its caller as charged, which no call holds */
		cct_add_uncounted(&v->tree, map[u->node], x);
	}
	free(map);
	free(stack);
}

void an_view_build(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f,
		  struct an_view *v)
{
	(void)d;
	view_init(v, r);
	double scale = r->sampling ? 1.0 : r->fixed_to_ns;
	for (uint32_t i = 0; i < r->nthreads; i++) {
		const struct an_thread *at = &r->threads[i];
		if (!at->selected)
			continue;
		add_thread(v, r, &at->tree, f, scale);
		/* the selection's totals: the trees hold nothing else */
		v->total[AN_EI] += (double)at->total_e * scale;
		v->total[AN_EE] += (double)at->total_e * scale;
		if (!r->sampling) {
			v->total[AN_AI] += (double)at->total_a * scale;
			v->total[AN_AE] += (double)at->total_a * scale;
		}
	}
}

/* ------------------------------------------------------------------------
 * Folding the view into tables
 * --------------------------------------------------------------------- */

static void acc_rows(const struct an_view *v, int by_module, struct an_row **rows, uint32_t *n)
{
	uint32_t nkeys = by_module ? v->r->nmods : v->r->nfuncs;
	struct an_acc *acc = an_acc_new(nkeys);
	an_fold_tree(v->r, &v->tree, by_module ? NULL : acc, by_module ? acc : NULL);
	/* the hidden frames' time is in no call of the frame charged with it:
	 * out of the per-call average, as it is out of the minimum and maximum
	 * (the average exceeded the maximum) */
	for (uint32_t i = 1; i < v->len && i < v->ncharged; i++) {
		uint32_t fn = v->n[i].fn;
		if (fn >= v->r->nfuncs)
			continue;
		uint32_t key = by_module ? v->r->funcs[fn].module : fn;
		acc[key].callsum[AN_EE] -= v->charged[i][0];
		acc[key].callsum[AN_AE] -= v->charged[i][1];
	}
	*rows = xcalloc(nkeys + 1, sizeof(**rows));
	*n = 0;
	for (uint32_t i = 0; i < nkeys; i++) {
		if (!acc[i].seen)
			continue;
		struct an_row *row = &(*rows)[(*n)++];
		row->calls = acc[i].calls;
		for (int k = 0; k < AN_NVALUES; k++) {
			row->v[k] = acc[i].v[k];
			row->vmin[k] = acc[i].vmin[k] < 0 ? 0 : acc[i].vmin[k];
			row->vmax[k] = acc[i].vmax[k];
			row->callsum[k] = acc[i].callsum[k];
		}
		if (by_module) {
			row->name = row->module = v->r->mods[i].base;
		} else {
			row->name = v->r->funcs[i].name;
			row->module = v->r->mods[v->r->funcs[i].module].base;
			row->func = i;
			row->file = v->r->funcs[i].file;
		}
	}
	free(acc);
}

void an_view_functions(const struct an_view *v, struct an_row **rows, uint32_t *n)
{
	acc_rows(v, 0, rows, n);
}

void an_view_modules(const struct an_view *v, struct an_row **rows, uint32_t *n)
{
	acc_rows(v, 1, rows, n);
}

/* ------------------------------------------------------------------------
 * Callers and callees
 * --------------------------------------------------------------------- */

uint32_t an_view_preorder(const struct an_view *v, uint32_t **order, uint32_t **same)
{
	return cct_preorder(&v->tree, v->r, 0, order, same);
}

uint32_t *an_view_outermost(const struct an_view *v)
{
	uint32_t *order, *same, *outer;
	cct_preorder_outer(&v->tree, v->r, 0, &order, &same, &outer);
	free(order);
	free(same);
	return outer;
}

/* The row of key (a function, ~0u for the root), found through slot[]
 * (one entry per function, and the last for the root): a function of a
 * hostile file may have a hundred thousand callers. */
static struct an_row *row_for(struct an_row **rows, uint32_t *n, uint32_t *cap, uint32_t *slot, uint32_t key,
			      const struct an_view *v)
{
	uint32_t si = key == ~0u ? v->r->nfuncs : key;
	if (slot[si] != ~0u)
		return &(*rows)[slot[si]];
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*rows = xrealloc(*rows, *cap * sizeof(**rows));
	}
	slot[si] = *n;
	struct an_row *r = &(*rows)[(*n)++];
	memset(r, 0, sizeof(*r));
	r->func = key;
	if (key == ~0u) {
		r->name = "[root]";
		r->module = "";
	} else {
		r->name = v->r->funcs[key].name;
		r->module = v->r->mods[v->r->funcs[key].module].base;
	}
	return r;
}

static uint32_t *row_slots(const struct an_view *v)
{
	uint32_t *slot = xmalloc((v->r->nfuncs + 1) * sizeof(*slot));
	memset(slot, 0xff, (v->r->nfuncs + 1) * sizeof(*slot));
	return slot;
}

static void add_inclusive(struct an_row *r, const struct cct_node *n)
{
	r->v[AN_EI] += n->v[AN_EI];
	r->v[AN_AI] += n->v[AN_AI];
}

static void add_exclusive(struct an_row *r, const struct cct_node *n)
{
	r->v[AN_EE] += n->v[AN_EE];
	r->v[AN_AE] += n->v[AN_AE];
}

void an_view_callers(const struct an_view *v, uint32_t fn, struct an_row **rows, uint32_t *n,
		     struct an_row *self)
{
	uint32_t cap = 0;
	*rows = NULL;
	*n = 0;
	memset(self, 0, sizeof(*self));
	self->func = fn;
	self->name = v->r->funcs[fn].name;
	self->module = v->r->mods[v->r->funcs[fn].module].base;
	uint32_t *slot = row_slots(v);
	uint32_t *outer = an_view_outermost(v);
	for (uint32_t i = 1; i < v->len; i++) {
		if (v->n[i].fn != fn)
			continue;
		/* the calls under the caller that made them; the time of a
		 * recursive call under the caller of the outermost one, whose
		 * inclusive time holds it (its exclusive time under its own
		 * caller row gave that row exclusive time and no inclusive) */
		uint32_t p = v->n[i].parent, op = v->n[outer[i]].parent;
		row_for(rows, n, &cap, slot, p == 0 ? ~0u : v->n[p].fn, v)->calls += v->n[i].calls;
		struct an_row *owner = row_for(rows, n, &cap, slot, op == 0 ? ~0u : v->n[op].fn, v);
		add_exclusive(owner, &v->n[i]);
		self->calls += v->n[i].calls;
		add_exclusive(self, &v->n[i]);
		if (outer[i] == i) {
			add_inclusive(owner, &v->n[i]);
			add_inclusive(self, &v->n[i]);
		}
	}
	free(outer);
	free(slot);
}

void an_view_callees(const struct an_view *v, uint32_t fn, struct an_row **rows, uint32_t *n)
{
	uint32_t cap = 0;
	*rows = NULL;
	*n = 0;
	uint32_t *slot = row_slots(v);
	uint32_t *outer = an_view_outermost(v);
	for (uint32_t i = 1; i < v->len; i++) {
		uint32_t cf = v->n[i].fn, o = outer[i];
		int called = v->n[v->n[i].parent].fn == fn && v->n[i].parent != 0;
		/* time as callers counts it: a recursive call's under the row of
		 * its outermost call, when fn made that one (an inner call fn did
		 * not make directly is counted there too: callers(f) puts it
		 * under fn, callees(fn) left it out) */
		int owned = cf != fn && o != 0 && v->n[o].parent != 0 && v->n[v->n[o].parent].fn == fn;
		if (!called && !owned)
			continue;
		struct an_row *row = row_for(rows, n, &cap, slot, cf, v);
		if (called)
			row->calls += v->n[i].calls;
		if (owned) {
			add_exclusive(row, &v->n[i]);
			if (o == i)
				add_inclusive(row, &v->n[i]);
		}
	}
	free(outer);
	free(slot);
}

uint32_t an_find_functions(const struct an_result *r, const char *pattern, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < r->nfuncs && n < max; i++)
		if (strcmp(r->funcs[i].name, pattern) == 0)
			out[n++] = i;
	if (n)
		return n;
	for (uint32_t i = 0; i < r->nfuncs && n < max; i++)
		if (name_match(pattern, r->funcs[i].name))
			out[n++] = i;
	return n;
}
