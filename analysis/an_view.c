/*
 * an_view.c - merged calling-context trees for the views (see an_view.h):
 * the call tree, callers/callees, just-my-code function tables and the
 * exports all read this one structure.  The filter itself is applied by
 * the analyses (the trees hold the selection only); here are its matching
 * helpers, which they share.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "an_view.h"

static uint64_t view_hash(uint32_t parent, uint32_t fn)
{
	uint64_t x = ((uint64_t)parent << 32) | fn;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void view_init(struct an_view *v, const struct an_result *r)
{
	memset(v, 0, sizeof(*v));
	v->r = r;
	v->sampling = r->sampling;
	v->cap = 1024;
	v->n = calloc(v->cap, sizeof(*v->n));
	v->hcap = 2048;
	v->hash = malloc(v->hcap * sizeof(*v->hash));
	if (!v->n || !v->hash)
		abort();
	memset(v->hash, 0xff, v->hcap * sizeof(*v->hash));
	v->len = 1;
	v->n[0].fn = ~0u;
	v->n[0].parent = ~0u;
}

void an_view_release(struct an_view *v)
{
	free(v->n);
	free(v->hash);
	memset(v, 0, sizeof(*v));
}

static void view_rehash(struct an_view *v)
{
	free(v->hash);
	v->hcap *= 2;
	v->hash = malloc(v->hcap * sizeof(*v->hash));
	if (!v->hash)
		abort();
	memset(v->hash, 0xff, v->hcap * sizeof(*v->hash));
	for (uint32_t i = 1; i < v->len; i++) {
		uint32_t s = (uint32_t)view_hash(v->n[i].parent, v->n[i].fn) & (v->hcap - 1);
		while (v->hash[s] != ~0u)
			s = (s + 1) & (v->hcap - 1);
		v->hash[s] = i;
	}
}

static uint32_t view_child(struct an_view *v, uint32_t parent, uint32_t fn)
{
	uint32_t s = (uint32_t)view_hash(parent, fn) & (v->hcap - 1);
	for (;;) {
		uint32_t i = v->hash[s];
		if (i == ~0u)
			break;
		if (v->n[i].parent == parent && v->n[i].fn == fn)
			return i;
		s = (s + 1) & (v->hcap - 1);
	}
	if (v->len == v->cap) {
		v->cap *= 2;
		v->n = realloc(v->n, v->cap * sizeof(*v->n));
		if (!v->n)
			abort();
	}
	uint32_t i = v->len++;
	struct view_node *n = &v->n[i];
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	for (int k = 0; k < AN_NVALUES; k++)
		n->vmin[k] = -1; /* unset */
	n->next = v->n[parent].child;
	v->n[parent].child = i;
	v->hash[s] = i;
	if (v->len * 2 > v->hcap)
		view_rehash(v);
	return i;
}

int an_is_system_module(const char *path)
{
	if (!path || !*path || path[0] == '[')
		return 1; /* [vdso], [kernel.kallsyms], [unknown] */
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

int an_filter_match(const struct an_result *r, const struct an_filter *f, uint32_t fn)
{
	if (fn >= r->nfuncs)
		return 0;
	if (f->module && !name_match(f->module, r->mods[r->funcs[fn].module].base))
		return 0;
	if (f->function && !name_match(f->function, r->funcs[fn].name))
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
		uint8_t *k = realloc(c->k, cap);
		if (!k)
			abort();
		memset(k + c->cap, 0, cap - c->cap);
		c->k = k;
		c->cap = cap;
	}
	if (!c->k[fn])
		c->k[fn] = an_filter_match(r, f, fn) ? 2 : 1;
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
	uint32_t *map = malloc((t->len + 1) * sizeof(*map));
	uint32_t *stack = malloc((t->len + 1) * sizeof(*stack));
	if (!map || !stack)
		abort();
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
			v->n[into].v[AN_EE] += (double)n->v[AN_EE] * scale;
			v->n[into].v[AN_AE] += (double)n->v[AN_AE] * scale;
		} else {
			uint32_t vn = view_child(v, into, n->fn);
			map[i] = vn;
			struct view_node *w = &v->n[vn];
			w->calls += n->calls;
			for (int k = 0; k < AN_NVALUES; k++) {
				w->v[k] += (double)n->v[k] * scale;
				if (n->calls && n->vmin[k] != UINT64_MAX) {
					double mn = (double)n->vmin[k] * scale, mx = (double)n->vmax[k] * scale;
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
	free(map);
	free(stack);
}

int an_view_build(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f,
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
	return 0;
}

/* ------------------------------------------------------------------------
 * Folding the view into tables
 * --------------------------------------------------------------------- */

struct fold_acc {
	uint64_t calls;
	double v[AN_NVALUES], vmin[AN_NVALUES], vmax[AN_NVALUES];
	int seen;
};

/*
 * Depth-first walk with how often each key (function or module) is on the
 * current path: exclusive values are summed over all nodes, inclusive ones
 * over the outermost node of each key only.
 */
static void fold(const struct an_view *v, int by_module, struct fold_acc *acc, uint32_t nkeys)
{
	uint32_t *on = calloc(nkeys + 1, sizeof(*on));
	uint32_t *stack = malloc((v->len + 1) * sizeof(*stack));
	uint8_t *leaving = calloc(v->len + 1, 1);
	if (!on || !stack || !leaving)
		abort();
	uint32_t sp = 0;
	for (uint32_t c = v->n[0].child; c; c = v->n[c].next)
		stack[sp++] = c;
	while (sp) {
		uint32_t i = stack[sp - 1];
		const struct view_node *n = &v->n[i];
		uint32_t key = by_module ? v->r->funcs[n->fn].module : n->fn;
		if (leaving[i]) {
			sp--;
			on[key]--;
			continue;
		}
		leaving[i] = 1;
		struct fold_acc *a = &acc[key];
		a->seen = 1;
		a->calls += n->calls;
		a->v[AN_EE] += n->v[AN_EE];
		a->v[AN_AE] += n->v[AN_AE];
		if (!on[key]) {
			a->v[AN_EI] += n->v[AN_EI];
			a->v[AN_AI] += n->v[AN_AI];
		}
		for (int k = 0; k < AN_NVALUES; k++) {
			if (n->vmin[k] >= 0 && (a->vmin[k] < 0 || n->vmin[k] < a->vmin[k]))
				a->vmin[k] = n->vmin[k];
			if (n->vmax[k] > a->vmax[k])
				a->vmax[k] = n->vmax[k];
		}
		on[key]++;
		for (uint32_t c = n->child; c; c = v->n[c].next)
			stack[sp++] = c;
	}
	free(on);
	free(stack);
	free(leaving);
}

static void acc_rows(const struct an_view *v, int by_module, struct an_row **rows, uint32_t *n)
{
	uint32_t nkeys = by_module ? v->r->nmods : v->r->nfuncs;
	struct fold_acc *acc = calloc(nkeys + 1, sizeof(*acc));
	if (!acc)
		abort();
	for (uint32_t i = 0; i < nkeys; i++)
		for (int k = 0; k < AN_NVALUES; k++)
			acc[i].vmin[k] = -1;
	fold(v, by_module, acc, nkeys);
	*rows = calloc(nkeys + 1, sizeof(**rows));
	if (!*rows)
		abort();
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
		}
		if (by_module) {
			row->name = row->module = v->r->mods[i].base;
		} else {
			row->name = v->r->funcs[i].name;
			row->module = v->r->mods[v->r->funcs[i].module].base;
			row->func = i;
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

/*
 * Depth-first order of v's nodes (the root excluded) with, per node, how
 * many ancestors share its function (recursion).  One walk with an explicit
 * stack and how often each function is on the current path: asking each
 * node's ancestors instead would take depth x nodes steps, and a recursion
 * 200,000 deep has that many of both.
 */
uint32_t an_view_preorder(const struct an_view *v, uint32_t **order, uint32_t **same)
{
	uint32_t *ord = malloc((v->len + 1) * sizeof(*ord));
	uint32_t *sm = calloc(v->len + 1, sizeof(*sm));
	uint32_t *st = malloc((v->len + 1) * sizeof(*st));
	uint32_t *kid = malloc((v->len + 1) * sizeof(*kid));
	uint32_t *onpath = calloc(v->r->nfuncs + 1, sizeof(*onpath));
	if (!ord || !sm || !st || !kid || !onpath)
		abort();
	uint32_t n = 0, sp = 0;
	st[sp] = 0;
	kid[sp++] = v->n[0].child;
	while (sp) {
		uint32_t c = kid[sp - 1];
		if (!c) {
			uint32_t done = st[--sp];
			if (done && v->n[done].fn < v->r->nfuncs)
				onpath[v->n[done].fn]--;
			continue;
		}
		kid[sp - 1] = v->n[c].next;
		uint32_t fn = v->n[c].fn;
		if (fn < v->r->nfuncs)
			sm[c] = onpath[fn]++;
		ord[n++] = c;
		st[sp] = c;
		kid[sp++] = v->n[c].child;
	}
	free(st);
	free(kid);
	free(onpath);
	*order = ord;
	*same = sm;
	return n;
}

/* Per node: how many ancestors share its function (0: not recursive there). */
static uint32_t *same_above(const struct an_view *v)
{
	uint32_t *order, *same;
	an_view_preorder(v, &order, &same);
	free(order);
	return same;
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
		*rows = realloc(*rows, *cap * sizeof(**rows));
		if (!*rows)
			abort();
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
	uint32_t *slot = malloc((v->r->nfuncs + 1) * sizeof(*slot));
	if (!slot)
		abort();
	memset(slot, 0xff, (v->r->nfuncs + 1) * sizeof(*slot));
	return slot;
}

static void add_values(struct an_row *r, const struct view_node *n, int inclusive_too)
{
	r->calls += n->calls;
	r->v[AN_EE] += n->v[AN_EE];
	r->v[AN_AE] += n->v[AN_AE];
	if (inclusive_too) {
		r->v[AN_EI] += n->v[AN_EI];
		r->v[AN_AI] += n->v[AN_AI];
	}
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
	uint32_t *same = same_above(v);
	for (uint32_t i = 1; i < v->len; i++) {
		if (v->n[i].fn != fn)
			continue;
		int outer = !same[i];
		uint32_t p = v->n[i].parent;
		uint32_t key = p == 0 ? ~0u : v->n[p].fn;
		add_values(row_for(rows, n, &cap, slot, key, v), &v->n[i], outer);
		add_values(self, &v->n[i], outer);
	}
	free(same);
	free(slot);
}

void an_view_callees(const struct an_view *v, uint32_t fn, struct an_row **rows, uint32_t *n)
{
	uint32_t cap = 0;
	*rows = NULL;
	*n = 0;
	uint32_t *slot = row_slots(v);
	uint32_t *same = same_above(v);
	for (uint32_t i = 1; i < v->len; i++) {
		if (v->n[i].fn != fn)
			continue;
		for (uint32_t c = v->n[i].child; c; c = v->n[c].next) {
			uint32_t cf = v->n[c].fn;
			int outer = !same[c] && cf != fn;
			add_values(row_for(rows, n, &cap, slot, cf, v), &v->n[c], outer);
		}
	}
	free(same);
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
