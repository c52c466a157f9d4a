/*
 * an_lines.c - instrumentation values per source line and per call-site
 * address (an_lines.h says how intervals are charged).
 *
 * One replay of each thread (an_walk_events).  Inclusive values count each
 * interval once per line however deep the line's calls nest: a line's open
 * calls are counted, and the thread's running Elapsed and Application
 * totals are noted when the count leaves zero and added when it returns to
 * zero (the rule functions follow, analysis.h).  An interval charged to a
 * line adds to its Inclusive values only while none of its calls is open
 * (it is inside one of them otherwise, and already counted).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_lines.h"
#include "an_walk.h"

/* A string-keyed table of accumulators: lines or addresses. */
struct ln_tab {
	struct an_line_row *rows;
	uint32_t *open;        /* open calls made there, in the thread walked */
	double *start_e, *start_a; /* the thread's totals when open left zero */
	uint32_t n, cap;
	char **keys;
	uint32_t *hash, hcap;
};

static uint64_t ln_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

static void *ln_grow(void *p, size_t n)
{
	return xrealloc(p, n); /* out of memory: one line, exit 2 */
}

static char *ln_own(struct an_lines *l, const char *s)
{
	if (l->nowned == l->capowned) {
		l->capowned = l->capowned ? l->capowned * 2 : 256;
		l->owned = ln_grow(l->owned, l->capowned * sizeof(*l->owned));
	}
	char *c = xstrdup(s);
	return l->owned[l->nowned++] = c;
}

/* The row of key, made (from proto, name = its display name) if missing. */
static uint32_t ln_get(struct ln_tab *t, struct an_lines *l, const char *key, const char *name,
		       const struct an_line_row *proto)
{
	if ((t->n + 1) * 2 > t->hcap) {
		uint32_t ncap = t->hcap ? t->hcap * 2 : 1024;
		uint32_t *nh = ln_grow(NULL, ncap * sizeof(*nh));
		memset(nh, 0xff, ncap * sizeof(*nh));
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t s = (uint32_t)ln_hash(t->keys[i]) & (ncap - 1);
			while (nh[s] != ~0u)
				s = (s + 1) & (ncap - 1);
			nh[s] = i;
		}
		free(t->hash);
		t->hash = nh;
		t->hcap = ncap;
	}
	uint32_t s = (uint32_t)ln_hash(key) & (t->hcap - 1);
	while (t->hash[s] != ~0u) {
		if (strcmp(t->keys[t->hash[s]], key) == 0)
			return t->hash[s];
		s = (s + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->rows = ln_grow(t->rows, t->cap * sizeof(*t->rows));
		t->open = ln_grow(t->open, t->cap * sizeof(*t->open));
		t->start_e = ln_grow(t->start_e, t->cap * sizeof(*t->start_e));
		t->start_a = ln_grow(t->start_a, t->cap * sizeof(*t->start_a));
		t->keys = ln_grow(t->keys, t->cap * sizeof(*t->keys));
	}
	uint32_t i = t->n++;
	t->rows[i] = *proto;
	t->rows[i].row.name = strcmp(name, key) == 0 ? ln_own(l, key) : ln_own(l, name);
	t->keys[i] = strcmp(name, key) == 0 ? (char *)t->rows[i].row.name : ln_own(l, key);
	t->open[i] = 0;
	t->start_e[i] = t->start_a[i] = 0;
	t->hash[s] = i;
	return i;
}

static void ln_tab_free(struct ln_tab *t)
{
	free(t->rows);
	free(t->open);
	free(t->start_e);
	free(t->start_a);
	free(t->keys);
	free(t->hash);
}

/* What a call site (or a function's entry) stands for, cached per (process, address). */
struct ln_site {
	uint64_t addr;
	uint32_t proc, fn; /* fn: the holder the rows were made for */
	uint32_t line, at; /* rows in the line and address tables, ~0u if none */
	int used;
};

/* One open frame of the replay. */
struct ln_frame {
	uint32_t fn;
	uint64_t addr;      /* the function's address */
	uint32_t line, at;  /* rows of the call that opened it (its caller's line), ~0u if none */
	uint32_t last_line, last_at; /* where its own code was last known to be */
	double ee, ae;      /* CALLERS: its exclusive values so far */
	double e0, a0;      /* CALLERS: the thread's totals at its entry */
	int matched;        /* passes the filter's function part */
	uint32_t base;      /* paths: the node its places hang under */
	uint32_t pushed;    /* paths: the caller's place this call holds open, ~0u if none */
	int again;          /* its function is open below it too */
	int callee;         /* CALLERS: an activation of fn with a caller line */
	int counted;        /* CALLERS: of them, the outermost open one */
	int inherited;      /* a frame inherited across fork (no call opened it) */
	uint32_t proc;
};

struct ln_walk {
	const struct fmt_data *d;
	struct an_result *r;
	const struct an_lines_opts *o;
	struct an_lines *out;
	struct ln_tab lines, addrs;
	struct ln_site *cache;
	uint32_t ncache, capcache;
	struct ln_frame *st;
	uint32_t depth, capst;
	uint32_t nmatch;    /* open frames passing the filter */
	uint32_t fn_open;   /* CALLERS: open activations of fn */
	int by_fn;          /* the filter has a function or module part */
	uint32_t *fn_on, fn_oncap; /* open frames per function */
	struct an_match_cache mc;
	double tot_e, tot_a; /* the thread's selected intervals so far */
	/* paths: places interned by (function, row); per place how often it is
	 * open on the current path and at which node */
	uint32_t *place_hash, place_hcap, capplaces, cappv;
	uint32_t *place_open, *place_node;
};

static const struct fmt_module *ln_module_of(const struct fmt_process *p, uint64_t a)
{
	for (uint32_t i = 0; i < p->nmods; i++)
		if (a >= p->mods[i].start && a < p->mods[i].end)
			return &p->mods[i];
	return NULL;
}

static struct ln_site *ln_cache_slot(struct ln_walk *w, uint32_t proc, uint64_t a, uint32_t fn)
{
	uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)proc << 32) ^ fn;
	uint32_t s = (uint32_t)(h >> 20) & (w->capcache - 1);
	while (w->cache[s].used && !(w->cache[s].addr == a && w->cache[s].proc == proc && w->cache[s].fn == fn))
		s = (s + 1) & (w->capcache - 1);
	return &w->cache[s];
}

/*
 * The rows of a place in holder's code: a call site (a call's return
 * address: its line is that of site - 1), or with entry set the function's
 * own entry (its first line).
 */
static struct ln_site *ln_place(struct ln_walk *w, uint32_t proc, uint64_t a, uint32_t holder, int entry)
{
	if ((w->ncache + 1) * 2 > w->capcache) {
		struct ln_site *old = w->cache;
		uint32_t oldcap = w->capcache;
		w->capcache = oldcap ? oldcap * 2 : 1024;
		w->cache = xcalloc(w->capcache, sizeof(*w->cache));
		for (uint32_t i = 0; i < oldcap; i++)
			if (old[i].used)
				*ln_cache_slot(w, old[i].proc, old[i].addr, old[i].fn) = old[i];
		free(old);
	}
	uint32_t key_fn = w->o->mode == AN_LINES_ALL ? ~0u : holder; /* EVENTS: per function, too */
	struct ln_site *c = ln_cache_slot(w, proc, a, key_fn);
	if (c->used)
		return c;
	w->ncache++;
	c->used = 1;
	c->addr = a;
	c->proc = proc;
	c->fn = key_fn;
	c->line = c->at = ~0u;
	const struct fmt_process *p = &w->d->procs[proc];
	const struct an_result *r = w->r;
	const struct an_func *hf = holder < r->nfuncs ? &r->funcs[holder] : NULL;
	const char *file = NULL;
	uint32_t line = 0;
	if (entry) {
		if (hf && hf->file && hf->file[0] && hf->line) {
			file = hf->file;
			line = hf->line;
		}
	} else {
		const struct fmt_line *l = fmt_line_at(p, a - 1);
		if (l && l->file && l->file[0]) {
			file = l->file;
			line = l->line;
			/* inlined code: in a function's own view, the line of
			 * the holder that the inlined call stands on */
			if (w->o->mode != AN_LINES_ALL && l->ninl && l->inl[0].call_file && l->inl[0].call_file[0]) {
				file = l->inl[0].call_file;
				line = l->inl[0].call_line;
			}
		}
		/* a call site outside the holder's code is no line of it: an
		 * instrumented function inlined into its caller passes its
		 * caller's return address (GCC's and clang's
		 * -finstrument-functions alike), a line of the caller's caller,
		 * which annotate and callers --by line showed as the holder's */
		const struct fmt_symbol *at = fmt_symbol_at(p, a - 1);
		if (file && w->o->mode != AN_LINES_ALL && hf && at && strcmp(at->name, hf->name) != 0) {
			int inlined_there = 0;
			for (uint32_t k = 0; l && k < l->ninl && !inlined_there; k++)
				inlined_there = l->inl[k].name && strcmp(l->inl[k].name, hf->name) == 0;
			if (!inlined_there) {
				file = "(an inlined function's call: line unknown)";
				line = 0;
			}
		}
	}
	const struct fmt_module *m = ln_module_of(p, a);
	struct an_line_row proto;
	memset(&proto, 0, sizeof(proto));
	proto.fn = holder;
	proto.proc = proc;
	proto.row.module = hf && hf->module < r->nmods ? r->mods[hf->module].base : "";
	proto.row.func = holder;
	char key[4300], name[4200];
	if (file) {
		if (line)
			snprintf(name, sizeof(name), "%s:%u", file, line);
		else
			snprintf(name, sizeof(name), "%s", file);
		if (key_fn != ~0u)
			snprintf(key, sizeof(key), "%u\x1f%s", key_fn, name);
		else
			snprintf(key, sizeof(key), "%s", name);
		proto.line = line;
		c->line = ln_get(&w->lines, w->out, key, name, &proto);
		struct an_line_row *row = &w->lines.rows[c->line];
		if (!row->file) {
			char *fc = ln_own(w->out, line ? file : ""); /* (no file for a line unknown) */
			row = &w->lines.rows[c->line];
			row->file = fc;
			row->line = line;
		}
	}
	proto.line = 0;
	proto.addr = a;
	proto.offset = m ? a - m->start + m->offset : a;
	const struct fmt_symbol *s = fmt_symbol_at(p, entry ? a : a - 1);
	const char *fname = s ? s->name : hf ? hf->name : "?";
	if (s)
		snprintf(name, sizeof(name), "0x%llx %s+0x%llx", (unsigned long long)proto.offset, fname,
			 (unsigned long long)(a - s->addr));
	else
		snprintf(name, sizeof(name), "0x%llx %s", (unsigned long long)proto.offset, fname);
	if (key_fn != ~0u)
		snprintf(key, sizeof(key), "%u\x1f%u\x1f%s", key_fn, proc, name);
	else
		snprintf(key, sizeof(key), "%u\x1f%s", proc, name);
	c->at = ln_get(&w->addrs, w->out, key, name, &proto);
	return c;
}

/* Whether rows of holder's code are kept in this mode. */
static int ln_keeps(const struct ln_walk *w, uint32_t holder)
{
	return w->o->mode == AN_LINES_ALL || w->o->mode == AN_LINES_PER_FUNCTION || w->o->mode == AN_LINES_EVENTS ||
	       (w->o->mode == AN_LINES_OF_FUNCTION && holder == w->o->fn);
}

static void ln_open(struct ln_tab *t, uint32_t i, const struct ln_walk *w)
{
	if (i == ~0u)
		return;
	if (t->open[i]++ == 0) {
		t->start_e[i] = w->tot_e;
		t->start_a[i] = w->tot_a;
	}
}

static void ln_close(struct ln_tab *t, uint32_t i, const struct ln_walk *w)
{
	if (i == ~0u || !t->open[i])
		return;
	if (--t->open[i] == 0) {
		t->rows[i].row.v[AN_EI] += w->tot_e - t->start_e[i];
		t->rows[i].row.v[AN_AI] += w->tot_a - t->start_a[i];
	}
}

/* An interval of len ns (os: it had an OS event) of the top frame's own code, charged at c. */
static void ln_charge(struct ln_tab *t, uint32_t i, double len, int os)
{
	if (i == ~0u)
		return;
	struct an_row *row = &t->rows[i].row;
	row->v[AN_EE] += len;
	if (!os)
		row->v[AN_AE] += len;
	if (!t->open[i]) { /* else inside one of its calls: counted there */
		row->v[AN_EI] += len;
		if (!os)
			row->v[AN_AI] += len;
	}
}

/* The file, line and address of rows line and at, into an event. */
static void ln_place_of(const struct ln_walk *w, uint32_t line, uint32_t at, struct an_line_ev *le)
{
	if (line != ~0u) {
		le->file = w->lines.rows[line].file;
		le->line = w->lines.rows[line].line;
	}
	if (at != ~0u)
		le->addr = w->addrs.rows[at].addr;
}

static uint32_t ln_place_id(struct ln_walk *w, uint32_t fn, uint32_t row)
{
	struct an_lines *l = w->out;
	if ((l->nplaces + 1) * 2 > w->place_hcap) {
		uint32_t ncap = w->place_hcap ? w->place_hcap * 2 : 1024;
		free(w->place_hash);
		w->place_hash = ln_grow(NULL, ncap * sizeof(*w->place_hash));
		memset(w->place_hash, 0xff, ncap * sizeof(*w->place_hash));
		w->place_hcap = ncap;
		for (uint32_t i = 0; i < l->nplaces; i++) {
			uint32_t s = (uint32_t)(((uint64_t)l->place_fn[i] << 32 | l->place_row[i]) * 0x9E3779B97F4A7C15ull >> 32) &
				     (ncap - 1);
			while (w->place_hash[s] != ~0u)
				s = (s + 1) & (ncap - 1);
			w->place_hash[s] = i;
		}
	}
	uint32_t s = (uint32_t)(((uint64_t)fn << 32 | row) * 0x9E3779B97F4A7C15ull >> 32) & (w->place_hcap - 1);
	while (w->place_hash[s] != ~0u) {
		uint32_t i = w->place_hash[s];
		if (l->place_fn[i] == fn && l->place_row[i] == row)
			return i;
		s = (s + 1) & (w->place_hcap - 1);
	}
	if (l->nplaces == w->capplaces) {
		w->capplaces = w->capplaces ? w->capplaces * 2 : 256;
		l->place_fn = ln_grow(l->place_fn, w->capplaces * sizeof(*l->place_fn));
		l->place_row = ln_grow(l->place_row, w->capplaces * sizeof(*l->place_row));
		w->place_open = ln_grow(w->place_open, w->capplaces * sizeof(*w->place_open));
		w->place_node = ln_grow(w->place_node, w->capplaces * sizeof(*w->place_node));
	}
	uint32_t i = l->nplaces++;
	l->place_fn[i] = fn;
	l->place_row[i] = row;
	w->place_open[i] = 0;
	w->place_node[i] = 0;
	w->place_hash[s] = i;
	return i;
}

/* The node of place pl under base: where pl is open on the path already, that node. */
static uint32_t ln_path_node(struct ln_walk *w, uint32_t base, uint32_t pl)
{
	struct an_lines *l = w->out;
	if (w->place_open[pl])
		return w->place_node[pl];
	uint32_t n = cct_child(&l->paths, base, pl);
	if (l->paths.len > w->cappv) {
		uint32_t old = w->cappv;
		w->cappv = l->paths.cap > l->paths.len ? l->paths.cap : l->paths.len * 2;
		l->pv = ln_grow(l->pv, w->cappv * sizeof(*l->pv));
		memset(l->pv + old, 0, (w->cappv - old) * sizeof(*l->pv));
	}
	return n;
}

static void ln_event(void *ctx, const struct an_walk_ev *e)
{
	struct ln_walk *w = ctx;
	const struct an_lines_opts *o = w->o;
	if (e->what == AN_WALK_INTERVAL) {
		double len = e->end - e->start;
		if (w->by_fn && !w->nmatch)
			return; /* not selected */
		if (len < 0)
			len = 0;
		struct ln_frame *top = w->depth ? &w->st[w->depth - 1] : NULL;
		if (top && o->mode == AN_LINES_CALLERS) {
			top->ee += len;
			if (!e->os)
				top->ae += len;
		} else if (top && ln_keeps(w, top->fn)) {
			uint32_t line = top->last_line, at = top->last_at;
			if (e->site) { /* it ends with a call made here */
				struct ln_site *c = ln_place(w, e->proc, e->site, top->fn, 0);
				line = c->line;
				at = c->at;
			}
			if (o->mode == AN_LINES_EVENTS) {
				struct an_line_ev le = {.fn = top->fn, .fn_again = top->again, .proc = e->proc,
							.e = len, .a = e->os ? 0 : len};
				ln_place_of(w, line, at, &le);
				o->cb(o->ctx, &le);
			} else {
				ln_charge(&w->lines, line, len, e->os);
				ln_charge(&w->addrs, at, len, e->os);
				if (o->paths && len > 0) {
					uint32_t n = ln_path_node(w, top->base, ln_place_id(w, top->fn, line));
					w->out->pv[n][0] += len;
					if (!e->os)
						w->out->pv[n][1] += len;
				}
			}
		}
		w->tot_e += len;
		if (!e->os)
			w->tot_a += len;
		return;
	}
	if (e->what == AN_WALK_ENTER) {
		if (w->depth == w->capst) {
			w->capst = w->capst ? w->capst * 2 : 256;
			w->st = ln_grow(w->st, w->capst * sizeof(*w->st));
		}
		struct ln_frame *parent = w->depth ? &w->st[w->depth - 1] : NULL;
		struct ln_frame *f = &w->st[w->depth++];
		memset(f, 0, sizeof(*f));
		f->fn = e->fn;
		f->addr = e->addr;
		f->inherited = e->inherited;
		f->proc = e->proc;
		f->line = f->at = ~0u;
		f->matched = w->by_fn && an_filter_match_cached(w->r, o->filter, &w->mc, e->fn);
		f->again = e->fn < w->fn_oncap && w->fn_on[e->fn] > 0;
		an_open_count_add(&w->fn_on, &w->fn_oncap, e->fn);
		f->e0 = w->tot_e;
		f->a0 = w->tot_a;
		if (f->matched)
			w->nmatch++;
		/* its own code, until it calls something: its entry */
		f->last_line = f->last_at = ~0u;
		if (ln_keeps(w, e->fn) && o->mode != AN_LINES_CALLERS && e->addr) {
			struct ln_site *c = ln_place(w, e->proc, e->addr, e->fn, 1);
			f->last_line = c->line;
			f->last_at = c->at;
		}
		w->out->entries += !e->inherited;
		f->pushed = ~0u;
		if (o->paths) {
			/* under the caller's place: the call's line (or, without
			 * one, where the caller was last known to be) */
			f->base = 0;
			if (parent) {
				uint32_t row = parent->last_line;
				if (e->site && ln_keeps(w, parent->fn))
					row = ln_place(w, e->proc, e->site, parent->fn, 0)->line;
				uint32_t pl = ln_place_id(w, parent->fn, row);
				f->base = ln_path_node(w, parent->base, pl);
				if (!w->place_open[pl]++)
					w->place_node[pl] = f->base;
				f->pushed = pl;
			}
			uint32_t n = ln_path_node(w, f->base, ln_place_id(w, f->fn, f->last_line));
			w->out->pv[n][2] += !e->inherited;
		}
		if (e->inherited || !e->site || !parent)
			return;
		if (o->mode == AN_LINES_CALLERS) {
			if (e->fn != o->fn)
				return;
			struct ln_site *c = ln_place(w, e->proc, e->site, parent->fn, 0);
			f->line = c->line;
			f->at = c->at;
			f->e0 = w->tot_e;
			f->a0 = w->tot_a;
			f->callee = 1;
			f->counted = w->fn_open++ == 0;
			return;
		}
		if (!ln_keeps(w, parent->fn))
			return;
		if (w->by_fn && !w->nmatch)
			return; /* the call is not in the selection */
		struct ln_site *c = ln_place(w, e->proc, e->site, parent->fn, 0);
		w->out->sites += c->line != ~0u;
		f->line = c->line;
		f->at = c->at;
		parent->last_line = c->line;
		parent->last_at = c->at;
		if (c->line != ~0u)
			w->lines.rows[c->line].row.calls++;
		w->addrs.rows[c->at].row.calls++;
		ln_open(&w->lines, f->line, w);
		ln_open(&w->addrs, f->at, w);
		return;
	}
	/* AN_WALK_EXIT: the innermost frame closes */
	if (!w->depth)
		return;
	struct ln_frame *f = &w->st[--w->depth];
	if (f->fn < w->fn_oncap && w->fn_on[f->fn])
		w->fn_on[f->fn]--;
	if (f->pushed != ~0u && w->place_open[f->pushed])
		w->place_open[f->pushed]--;
	/* (an inherited frame: its time in this process is its caller's too) */
	if (o->mode == AN_LINES_EVENTS && w->depth && (f->at != ~0u || f->inherited)) {
		const struct ln_frame *parent = &w->st[w->depth - 1];
		struct an_line_ev le = {.call = 1, .fn = parent->fn, .callee = f->fn, .fn_again = parent->again,
					.callee_again = f->again, .proc = f->proc, .inherited = f->inherited,
					.e = w->tot_e - f->e0, .a = w->tot_a - f->a0};
		ln_place_of(w, f->line, f->at, &le);
		o->cb(o->ctx, &le);
	}
	if (o->mode == AN_LINES_CALLERS) {
		if (f->callee) {
			w->fn_open--;
			for (int k = 0; k < 2; k++) {
				uint32_t i = k ? f->at : f->line;
				if (i == ~0u)
					continue;
				struct an_row *row = &(k ? &w->addrs : &w->lines)->rows[i].row;
				row->calls++;
				row->v[AN_EE] += f->ee;
				row->v[AN_AE] += f->ae;
				if (f->counted) { /* recursion once */
					row->v[AN_EI] += w->tot_e - f->e0;
					row->v[AN_AI] += w->tot_a - f->a0;
				}
			}
		}
	} else {
		ln_close(&w->lines, f->line, w);
		ln_close(&w->addrs, f->at, w);
	}
	if (f->matched)
		w->nmatch--;
}

int an_lines_run(const struct fmt_data *d, struct an_result *r, const struct an_lines_opts *o,
		 struct an_lines *out)
{
	memset(out, 0, sizeof(*out));
	struct ln_walk w;
	memset(&w, 0, sizeof(w));
	w.d = d;
	w.r = r;
	w.o = o;
	w.out = out;
	w.by_fn = o->filter && (o->filter->function || o->filter->module);
	w.fn_oncap = 1024; /* an_open_count_add grows it by doubling */
	w.fn_on = calloc(w.fn_oncap, sizeof(*w.fn_on));
	if (!w.fn_on)
		return -1;
	struct an_addr_map *maps = calloc(d->nprocs + 1, sizeof(*maps));
	if (!maps)
		return -1;
	if (o->paths) {
		cct_init(&out->paths);
		w.cappv = out->paths.cap;
		out->pv = xcalloc(w.cappv, sizeof(*out->pv));
	}
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		if (o->filter && !an_filter_thread(d, o->filter, ti))
			continue;
		w.depth = w.nmatch = w.fn_open = 0;
		w.tot_e = w.tot_a = 0;
		an_walk_events(d, r, &maps[d->threads[ti].proc], ti, o->no_compensation, ln_event, &w);
		/* an_walk_events closed every frame: the open counts are zero again */
	}
	for (uint32_t i = 0; i < d->nprocs; i++)
		an_addr_map_free(&maps[i]);
	free(maps);
	out->lines = w.lines.rows;
	out->nlines = w.lines.n;
	out->addrs = w.addrs.rows;
	out->naddrs = w.addrs.n;
	w.lines.rows = w.addrs.rows = NULL;
	/* the keys that are not the rows' names stay in out->owned */
	ln_tab_free(&w.lines);
	ln_tab_free(&w.addrs);
	free(w.cache);
	free(w.st);
	free(w.fn_on);
	free(w.place_hash);
	free(w.place_open);
	free(w.place_node);
	an_match_cache_free(&w.mc);
	return 0;
}

int an_line_row_empty(const struct an_line_row *x)
{
	for (int k = 0; k < AN_NVALUES; k++)
		if (x->row.v[k] != 0)
			return 0;
	return x->row.calls == 0;
}

void an_lines_free(struct an_lines *l)
{
	if (l->pv)
		cct_release(&l->paths);
	free(l->pv);
	free(l->place_fn);
	free(l->place_row);
	free(l->lines);
	free(l->addrs);
	for (uint32_t i = 0; i < l->nowned; i++)
		free(l->owned[i]);
	free(l->owned);
	memset(l, 0, sizeof(*l));
}

void an_lines_to_result(const struct an_lines *l, struct an_result *r)
{
	free(r->lines);
	free(r->addresses);
	r->lines = xcalloc(l->nlines + 1, sizeof(*r->lines));
	r->addresses = xcalloc(l->naddrs + 1, sizeof(*r->addresses));
	/* a function entry that nothing was charged to (the function made a
	 * call before returning) is no row */
	r->nlines = r->naddresses = 0;
	for (uint32_t i = 0; i < l->nlines; i++)
		if (!an_line_row_empty(&l->lines[i]))
			r->lines[r->nlines++] = l->lines[i].row;
	for (uint32_t i = 0; i < l->naddrs; i++)
		if (!an_line_row_empty(&l->addrs[i]))
			r->addresses[r->naddresses++] = l->addrs[i].row;
}
