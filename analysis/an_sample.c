/*
 * an_sample.c - the sampling analysis of SPEC.md section 2.
 *
 * Every kept sample is one call stack.  Its innermost function gets an
 * exclusive sample; each distinct function on it an inclusive one.  Stacks
 * are added to a calling-context tree per thread (inclusive count on every
 * node of the path, exclusive on the last), and functions and modules are
 * folded from the trees as for instrumentation: inclusive counts only over
 * nodes without an ancestor of the same function, so recursion counts once.
 * Source lines and instruction addresses are counted directly per sample,
 * each distinct one once.
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

static const struct fmt_module *module_of(const struct fmt_process *p, uint64_t a)
{
	for (uint32_t i = 0; i < p->nmods; i++)
		if (a >= p->mods[i].start && a < p->mods[i].end)
			return &p->mods[i];
	return NULL;
}

int an_sample_run(const struct fmt_data *d, struct an_result *r)
{
	memset(r, 0, sizeof(*r));
	r->sampling = 1;
	r->fixed_to_ns = 1;
	r->nthreads = d->nthreads;
	r->threads = calloc(d->nthreads + 1, sizeof(*r->threads));
	struct an_addr_map *maps = calloc(d->nprocs + 1, sizeof(*maps));
	if (!r->threads || !maps)
		return -1;
	struct key_tab lines = {0}, addrs = {0};
	uint64_t *pcs = malloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	uint32_t *fns = malloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*fns));
	if (!pcs || !fns)
		return -1;
	uint32_t sample_id = 0;
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		const struct fmt_thread *th = &d->threads[ti];
		const struct fmt_process *p = &d->procs[th->proc];
		struct an_thread *at = &r->threads[ti];
		at->proc = th->proc;
		at->index = ti;
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
			uint32_t node = 0;
			for (unsigned i = n; i-- > 0;) {
				fns[i] = an_resolve(r, p, &maps[th->proc], pcs[i]);
				node = cct_child(&at->tree, node, fns[i]);
				at->tree.n[node].v[AN_EI]++;
			}
			at->tree.n[node].v[AN_EE]++;
			/* lines and addresses: the leaf exactly, callers one byte back */
			for (unsigned i = 0; i < n; i++) {
				char key[4200];
				const struct fmt_module *m = module_of(p, pcs[i]);
				uint32_t mod = an_module_intern(r, m ? m->path : NULL);
				const struct fmt_line *l = fmt_line_at(p, i ? pcs[i] - 1 : pcs[i]);
				if (l) {
					snprintf(key, sizeof(key), "%s:%u", l->file, l->line);
					tab_count(&lines, tab_get(&lines, key, mod), sample_id, i == 0);
				}
				const char *fname = r->funcs[fns[i]].name;
				const struct fmt_symbol *s = fmt_symbol_at(p, i ? pcs[i] - 1 : pcs[i]);
				if (s)
					snprintf(key, sizeof(key), "0x%llx %s+0x%llx",
						 (unsigned long long)(m ? pcs[i] - m->start + m->offset : pcs[i]),
						 fname, (unsigned long long)(pcs[i] - s->addr));
				else
					snprintf(key, sizeof(key), "0x%llx %s",
						 (unsigned long long)(m ? pcs[i] - m->start + m->offset : pcs[i]),
						 fname);
				tab_count(&addrs, tab_get(&addrs, key, mod), sample_id, i == 0);
			}
			sample_id++;
		}
		if (rc < 0)
			at->damaged = 1;
		at->total_e = at->events;
		r->samples += at->events;
		r->damaged_threads += at->damaged;
	}
	free(pcs);
	free(fns);
	for (uint32_t i = 0; i < d->nprocs; i++)
		an_addr_map_free(&maps[i]);
	free(maps);

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
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		struct an_row *row = &r->functions[r->nfunctions++];
		row->v[AN_EI] = (double)fa[i].v[AN_EI];
		row->v[AN_EE] = (double)fa[i].v[AN_EE];
		row->name = r->funcs[i].name;
		row->module = r->mods[r->funcs[i].module].base;
		row->func = i;
	}
	for (uint32_t i = 0; i < r->nmods; i++) {
		struct an_row *row = &r->modules[r->nmodules++];
		row->v[AN_EI] = (double)ma[i].v[AN_EI];
		row->v[AN_EE] = (double)ma[i].v[AN_EE];
		row->name = row->module = r->mods[i].base;
	}
	for (uint32_t i = 0; i < r->nthreads; i++) {
		const struct fmt_thread *th = &d->threads[i];
		struct an_row *row = &r->thread_rows[r->nthread_rows++];
		row->v[AN_EI] = row->v[AN_EE] = (double)r->threads[i].events;
		row->tid = th->tid;
		row->pid = d->procs[th->proc].pid;
		row->name = row->extra = th->name;
		row->module = "";
	}
	for (uint32_t pi = 0; pi < d->nprocs; pi++) {
		struct an_row *row = &r->processes[r->nprocesses++];
		for (uint32_t i = 0; i < r->nthreads; i++)
			if (d->threads[i].proc == pi)
				row->v[AN_EI] += (double)r->threads[i].events;
		row->v[AN_EE] = row->v[AN_EI];
		row->pid = d->procs[pi].pid;
		row->name = row->extra = d->procs[pi].command;
		row->module = "";
	}
	r->session.v[AN_EI] = r->session.v[AN_EE] = (double)r->samples;
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
