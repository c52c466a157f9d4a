/*
 * out_export.c - the text exports of `stint export`: folded stacks, the
 * callgrind format and Chrome's trace-event JSON (out_export.h).  pprof,
 * the binary one, is in out_pprof.c.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out_export.h"
#include "output.h"
#include "out_schema.h"
#include "../analysis/an_lines.h"
#include "../analysis/an_walk.h"
#include "../lib/util.h"

static const char *fn_name(const struct an_result *r, uint32_t fn)
{
	return fn < r->nfuncs ? r->funcs[fn].name : "[unknown]";
}

/* A function's name as the report prints it: "FILE:NAME" for one of two
 * static functions of one name in one module (an_func_label), so the
 * formats whose readers merge frames by name keep them apart. */
static const char *fn_label(const struct an_result *r, uint32_t fn, char *buf, size_t n)
{
	return fn < r->nfuncs ? an_func_label(r, fn, buf, n) : "[unknown]";
}

static const struct an_module *fn_module(const struct an_result *r, uint32_t fn)
{
	return fn < r->nfuncs && r->funcs[fn].module < r->nmods ? &r->mods[r->funcs[fn].module] : NULL;
}

/* ------------------------------------------------------------------------
 * Folded stacks
 * --------------------------------------------------------------------- */

/* A frame name as the folded format allows it: ';' separates frames. */
static void folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s, f);
}

void out_fold_paths(const struct an_view *v, struct out_paths *fp)
{
	memset(fp, 0, sizeof(*fp));
	cct_init(&fp->t);
	uint32_t *map = xmalloc((v->len + 1) * sizeof(*map));
	fp->x = xcalloc(v->len + 1, sizeof(*fp->x));
	map[0] = 0;
	for (uint32_t i = 1; i < v->len; i++) {
		/* a view's nodes come after their parents */
		uint32_t par = v->n[i].parent < i ? v->n[i].parent : 0;
		uint32_t fn = v->n[i].fn, at = map[par], a = at;
		while (a && fp->t.n[a].fn != fn) /* fn on the path already? */
			a = fp->t.n[a].parent;
		map[i] = a ? a : cct_child(&fp->t, at, fn);
		fp->x[map[i]][0] += v->n[i].v[AN_EE];
		fp->x[map[i]][1] += v->n[i].v[AN_AE];
		fp->x[map[i]][2] += (double)v->n[i].calls;
	}
	free(map);
}

void out_paths_release(struct out_paths *fp)
{
	cct_release(&fp->t);
	free(fp->x);
	memset(fp, 0, sizeof(*fp));
}

int out_folded(FILE *f, const struct an_view *v, int value)
{
	/* the application value where asked for and the method has it */
	int k = value == AN_AE && out_schema_has(out_schema_of(v->sampling), AN_AE) ? 1 : 0;
	struct out_paths fp;
	out_fold_paths(v, &fp);
	uint32_t *path = xmalloc((fp.t.len + 1) * sizeof(*path));
	uint32_t *todo = xmalloc((fp.t.len + 1) * sizeof(*todo));
	char buf[1024];
	/* the paths depth first, each node's children in the order they were
	 * met: a path's extensions follow it, so a viewer that draws the lines
	 * in file order (speedscope's time order) draws each frame once, not
	 * main once per thread and process that reached it */
	uint32_t ntodo = 0;
	for (uint32_t ch = fp.t.n[0].child; ch; ch = fp.t.n[ch].next) /* (newest first: popped last) */
		todo[ntodo++] = ch;
	while (ntodo) {
		uint32_t i = todo[--ntodo];
		for (uint32_t ch = fp.t.n[i].child; ch; ch = fp.t.n[ch].next)
			todo[ntodo++] = ch;
		double x = floor(fp.x[i][k] + 0.5);
		if (x < 1)
			continue;
		uint32_t depth = 0;
		for (uint32_t j = i; j && j != ~0u; j = fp.t.n[j].parent)
			path[depth++] = j;
		while (depth--) {
			folded_name(f, fn_label(v->r, fp.t.n[path[depth]].fn, buf, sizeof(buf)));
			fputc(depth ? ';' : ' ', f);
		}
		fprintf(f, "%.0f\n", x);
	}
	free(todo);
	free(path);
	out_paths_release(&fp);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * Callgrind
 * --------------------------------------------------------------------- */

/* A callgrind function: a stint function at recursion level 1 or 2+. */
static uint32_t cg_id(const struct an_view *v, uint32_t node, const uint32_t *same)
{
	return v->n[node].fn * 2 + (same[node] ? 1 : 0);
}

struct cg_edge {
	uint32_t from, to; /* cg ids */
	uint64_t calls;
	double cost[2];
};

static int cg_edge_cmp(const void *a, const void *b)
{
	const struct cg_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return 0;
}

/* Names are defined once ("(3) name") and referred to by number after. */
struct cg_names {
	uint8_t *fn_done, *fl_done, *ob_done;
	uint32_t *file_id; /* per function: its source file's number */
	uint32_t cur_ob, cur_fl; /* the ob= and fl= in force (+ 1; 0: none yet) */
};

static const char *cg_file(const struct an_result *r, uint32_t fn)
{
	return fn < r->nfuncs && r->funcs[fn].file && *r->funcs[fn].file ? r->funcs[fn].file : "???";
}

static int cg_file_cmp(const void *a, const void *b, void *r)
{
	return strcmp(cg_file(r, *(const uint32_t *)a), cg_file(r, *(const uint32_t *)b));
}

/* Number the distinct source files: functions sorted by file, equal runs share a number. */
static uint32_t *cg_number_files(const struct an_result *r)
{
	uint32_t *idx = xmalloc((r->nfuncs + 1) * sizeof(*idx));
	uint32_t *id = xmalloc((r->nfuncs + 1) * sizeof(*id));
	for (uint32_t i = 0; i < r->nfuncs; i++)
		idx[i] = i;
	qsort_r(idx, r->nfuncs, sizeof(*idx), cg_file_cmp, (void *)r);
	uint32_t next = 0;
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		if (i && strcmp(cg_file(r, idx[i]), cg_file(r, idx[i - 1])) != 0)
			next = i;
		id[idx[i]] = next; /* the first function of the run names the file */
	}
	free(idx);
	return id;
}

static void cg_ref(FILE *f, const char *key, uint8_t *done, uint32_t id, const char *name)
{
	if (done[id]) {
		fprintf(f, "%s=(%u)\n", key, id + 1);
		return;
	}
	done[id] = 1;
	fprintf(f, "%s=(%u) %s\n", key, id + 1, name);
}

static void cg_fn_ref(FILE *f, const struct an_view *v, struct cg_names *nm, const char *key,
		      uint32_t id)
{
	uint32_t fn = id / 2;
	if (nm->fn_done[id]) {
		fprintf(f, "%s=(%u)\n", key, id + 1);
		return;
	}
	nm->fn_done[id] = 1;
	fprintf(f, "%s=(%u) %s%s\n", key, id + 1, fn_name(v->r, fn), id & 1 ? "'2" : "");
}

/*
 * ob= and fl= of a callgrind function, or cob= and cfi= of a callee where
 * they differ from those in force, as valgrind writes them: a reader takes
 * a callee without cfi= to be in the current file, and callgrind_annotate
 * strips its working directory from fl= but not from cfi=, so a cfi= for
 * every call listed each function twice when run from a directory above
 * the sources.
 */
static void cg_place(FILE *f, const struct an_view *v, struct cg_names *nm, uint32_t id, int callee)
{
	uint32_t fn = id / 2;
	const struct an_module *m = fn_module(v->r, fn);
	uint32_t fl = fn < v->r->nfuncs ? nm->file_id[fn] : v->r->nfuncs;
	if (m && !(callee && nm->cur_ob == v->r->funcs[fn].module + 1))
		cg_ref(f, callee ? "cob" : "ob", nm->ob_done, v->r->funcs[fn].module, m->path);
	if (!(callee && nm->cur_fl == fl + 1))
		cg_ref(f, callee ? "cfi" : "fl", nm->fl_done, fl, cg_file(v->r, fn));
	if (!callee) {
		nm->cur_ob = m ? v->r->funcs[fn].module + 1 : 0;
		nm->cur_fl = fl + 1;
	}
}

static uint32_t cg_line(const struct an_view *v, uint32_t id)
{
	uint32_t fn = id / 2;
	return fn < v->r->nfuncs ? v->r->funcs[fn].line : 0;
}

/*
 * Sampling: costs per source line, from the samples themselves
 * (an_walk_samples).  A sample gives its leaf frame one self sample at the
 * leaf's line, and each caller frame one sample on the call to the frame
 * below it, at the line of its call (for an inlined function, the line
 * where the next one was inlined).  Recursion levels are split as in the
 * tree export: the first frame of a function in a sample is "fn", deeper
 * ones "fn'2", so that fn's inclusive cost counts each sample once.
 *
 * callgrind_annotate names a function by the file of its cost lines
 * ("file:fn"), so a function is written under one file only: its own, or
 * for one without (no debug information for its symbol) the file of its
 * first line seen.  A line in another file (code from a macro or header
 * that was not inlined as a function) is charged to the function's first
 * line, so no function appears twice under two names.
 */
struct cg_cost {
	uint32_t from, file, line, to; /* to: ~0u for the self cost */
	uint64_t n;
};

struct cg_samp {
	const struct an_result *r;
	struct cg_cost *c;
	uint32_t n, cap;
	struct util_index index; /* (from, line, to) -> cost */
	/* file names, interned (the file numbers of fl=/cfi=) */
	const char **files;
	uint32_t nfiles, capfiles;
	struct util_index file_index;
	uint32_t *fn_file;  /* per function: its file number, ~0u until known */
	uint32_t *stamp;    /* per function: the last sample it was seen in, + 1 */
	uint32_t nfn, sample;
	uint32_t *ids;      /* per frame of the current sample: its callgrind id */
	size_t capids;
	uint64_t total;
};

static uint64_t cg_file_key(const void *cs, uint32_t i)
{
	return util_hash_str(((const struct cg_samp *)cs)->files[i], 0);
}

static uint32_t cg_file_num(struct cg_samp *cs, const char *name)
{
	util_index_reserve(&cs->file_index, cs->nfiles, cg_file_key, cs);
	uint32_t *k = util_index_probe(&cs->file_index, util_hash_str(name, 0));
	for (; *k != UTIL_INDEX_EMPTY; k = util_index_next(&cs->file_index, k))
		if (strcmp(cs->files[*k], name) == 0)
			return *k;
	if (cs->nfiles == cs->capfiles) {
		cs->capfiles = cs->capfiles ? cs->capfiles * 2 : 256;
		cs->files = xrealloc(cs->files, cs->capfiles * sizeof(*cs->files));
	}
	cs->files[cs->nfiles] = name; /* the data file's and r's strings outlive the export */
	*k = cs->nfiles;
	return cs->nfiles++;
}

static void cg_grow_fn(struct cg_samp *cs, uint32_t fn)
{
	if (fn < cs->nfn)
		return;
	uint32_t ncap = cs->nfn ? cs->nfn : 256;
	while (ncap <= fn)
		ncap *= 2;
	cs->fn_file = xrealloc(cs->fn_file, ncap * sizeof(*cs->fn_file));
	cs->stamp = xrealloc(cs->stamp, ncap * sizeof(*cs->stamp));
	memset(cs->fn_file + cs->nfn, 0xff, (ncap - cs->nfn) * sizeof(*cs->fn_file));
	memset(cs->stamp + cs->nfn, 0, (ncap - cs->nfn) * sizeof(*cs->stamp));
	cs->nfn = ncap;
}

/* The file and line a frame's cost goes to: its function's file only. */
static void cg_place_line(struct cg_samp *cs, uint32_t fn, const char *file, uint32_t line, uint32_t *ofile,
			  uint32_t *oline)
{
	const struct an_func *af = fn < cs->r->nfuncs ? &cs->r->funcs[fn] : NULL;
	if (cs->fn_file[fn] == ~0u)
		cs->fn_file[fn] = cg_file_num(cs, af && af->file[0] ? af->file : file ? file : "???");
	*ofile = cs->fn_file[fn];
	if (file && cg_file_num(cs, file) == *ofile)
		*oline = line;
	else
		*oline = af && af->file[0] ? af->line : 0;
}

static uint64_t cg_cost_key(uint32_t from, uint32_t line, uint32_t to)
{
	uint64_t h = ((uint64_t)from << 32 | line) * 0x9E3779B97F4A7C15ull;
	h ^= (h >> 29) + to * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t cg_cost_rekey(const void *cs, uint32_t i)
{
	const struct cg_cost *c = &((const struct cg_samp *)cs)->c[i];
	return cg_cost_key(c->from, c->line, c->to);
}

static void cg_add(struct cg_samp *cs, uint32_t from, uint32_t file, uint32_t line, uint32_t to)
{
	util_index_reserve(&cs->index, cs->n, cg_cost_rekey, cs);
	/* a function's lines are all in its one file: (from, line, to) is the key */
	uint32_t *k = util_index_probe(&cs->index, cg_cost_key(from, line, to));
	for (; *k != UTIL_INDEX_EMPTY; k = util_index_next(&cs->index, k)) {
		struct cg_cost *c = &cs->c[*k];
		if (c->from == from && c->line == line && c->to == to) {
			c->n++;
			return;
		}
	}
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 1024;
		cs->c = xrealloc(cs->c, cs->cap * sizeof(*cs->c));
	}
	cs->c[cs->n] = (struct cg_cost){from, file, line, to, 1};
	*k = cs->n++;
}

static void cg_add_sample(void *ctx, const struct an_walk_sample *s)
{
	struct cg_samp *cs = ctx;
	if (s->nframes > cs->capids) {
		cs->capids = s->nframes * 2;
		cs->ids = xrealloc(cs->ids, cs->capids * sizeof(*cs->ids));
	}
	uint32_t stamp = ++cs->sample;
	for (size_t j = s->nframes; j-- > 0;) { /* outermost first: the first of a function is level 1 */
		uint32_t fn = s->fn[j];
		cg_grow_fn(cs, fn);
		cs->ids[j] = fn * 2 + (cs->stamp[fn] == stamp ? 1 : 0);
		cs->stamp[fn] = stamp;
	}
	for (size_t j = s->nframes; j-- > 0;) {
		uint32_t file, line;
		cg_place_line(cs, s->fn[j], s->file[j], s->line[j], &file, &line);
		cg_add(cs, cs->ids[j], file, line, j ? cs->ids[j - 1] : ~0u);
	}
	cs->total++;
}

/* callgrind's order of costs: by caller, line, then callee, the self cost
 * (to ~0u) after the calls of its line; the samples' and the events' */
static int cg_order(uint32_t from_x, uint32_t line_x, uint32_t to_x, uint32_t from_y, uint32_t line_y,
		    uint32_t to_y)
{
	if (from_x != from_y)
		return from_x < from_y ? -1 : 1;
	if (line_x != line_y)
		return line_x < line_y ? -1 : 1;
	if (to_x != to_y)
		return to_x < to_y ? -1 : 1;
	return 0;
}

static int cg_cost_cmp(const void *a, const void *b)
{
	const struct cg_cost *x = a, *y = b;
	return cg_order(x->from, x->line, x->to, y->from, y->line, y->to);
}

static void cg_name_ref(FILE *f, const char *key, uint8_t *done, uint32_t id, const char *name, const char *suffix)
{
	if (done[id]) {
		fprintf(f, "%s=(%u)\n", key, id + 1);
		return;
	}
	done[id] = 1;
	fprintf(f, "%s=(%u) ", key, id + 1);
	folded_name(f, name);
	fprintf(f, "%s\n", suffix);
}

static void cg_header(FILE *f, const struct fmt_data *d, const char *events, const double *total, int nev);
/* the events (values) of each method's callgrind file */
static const char cg_sample_events[] = "event: Samples : samples (exclusive: the function was executing)\n"
				       "events: Samples\n";
static const char cg_instr_events[] = "event: Elapsed : elapsed time (ns)\n"
				      "event: Application : application time (ns), intervals without an OS event\n"
				      "events: Elapsed Application\n";

static int cg_write_sampling(FILE *f, struct an_result *r, const struct fmt_data *d, const struct an_filter *flt)
{
	struct cg_samp cs = {.r = r};
	an_walk_samples(d, r, flt, cg_add_sample, &cs);
	if (cs.n)
		qsort(cs.c, cs.n, sizeof(*cs.c), cg_cost_cmp);
	double total = (double)cs.total;
	cg_header(f, d, cg_sample_events, &total, 1);
	uint8_t *fn_done = xcalloc((size_t)cs.nfn * 2 + 2, 1), *fl_done = xcalloc(cs.nfiles + 1, 1);
	uint8_t *ob_done = xcalloc(r->nmods + 1, 1);
	for (uint32_t i = 0; i < cs.n;) {
		uint32_t id = cs.c[i].from, fn = id / 2;
		const struct an_module *m = fn_module(r, fn);
		if (m)
			cg_name_ref(f, "ob", ob_done, r->funcs[fn].module, m->path, "");
		cg_name_ref(f, "fl", fl_done, cs.fn_file[fn], cs.files[cs.fn_file[fn]], "");
		/* a callee's cob= and cfi= only where they differ (cg_place) */
		uint32_t cur_ob = m ? r->funcs[fn].module : ~0u, cur_fl = cs.fn_file[fn];
		cg_name_ref(f, "fn", fn_done, id, fn_name(r, fn), id & 1 ? "'2" : "");
		for (; i < cs.n && cs.c[i].from == id; i++) {
			const struct cg_cost *c = &cs.c[i];
			if (c->to != ~0u) {
				uint32_t cfn = c->to / 2;
				const struct an_module *cm = fn_module(r, cfn);
				if (cm && r->funcs[cfn].module != cur_ob)
					cg_name_ref(f, "cob", ob_done, r->funcs[cfn].module, cm->path, "");
				/* the callee's one file (it has one: it is a frame of this sample) */
				uint32_t cfile = cfn < cs.nfn && cs.fn_file[cfn] != ~0u ? cs.fn_file[cfn] : cg_file_num(&cs, "???");
				if (cfile != cur_fl)
					cg_name_ref(f, "cfi", fl_done, cfile, cs.files[cfile], "");
				cg_name_ref(f, "cfn", fn_done, c->to, fn_name(r, cfn), c->to & 1 ? "'2" : "");
				/* sampling cannot count calls: one per call site and callee */
				fprintf(f, "calls=1 %u\n", cfn < r->nfuncs && r->funcs[cfn].file[0] ? r->funcs[cfn].line : 0);
			}
			fprintf(f, "%u %" PRIu64 "\n", c->line, c->n);
		}
		fputc('\n', f);
	}
	fprintf(f, "totals: %" PRIu64 "\n", cs.total);
	free(fn_done);
	free(fl_done);
	free(ob_done);
	free(cs.c);
	util_index_free(&cs.index);
	free(cs.files);
	util_index_free(&cs.file_index);
	free(cs.fn_file);
	free(cs.stamp);
	free(cs.ids);
	return ferror(f) ? -1 : 0;
}

/* The file's header; events: the "event:" lines and the "events:" line of the values. */
static void cg_header(FILE *f, const struct fmt_data *d, const char *events, const double *total, int nev)
{
	fputs("# callgrind format\nversion: 1\ncreator: stint\n", f);
	if (d->nprocs == 1)
		fprintf(f, "pid: %u\n", d->procs[0].pid);
	fputs("cmd: ", f);
	folded_name(f, d->command ? d->command : "");
	fputs("\npart: 1\n\npositions: line\n", f);
	fputs(events, f);
	fputs("summary:", f);
	for (int e = 0; e < nev; e++)
		fprintf(f, " %.0f", total[e]);
	fputs("\n\n", f);
}

/*
 * Instrumentation with call sites: the costs per source line, from a
 * replay of the events (analysis/an_lines.h): each interval of a
 * function's own code at the line it is charged to, each call at the line
 * that made it, with the call's count and its activations' inclusive
 * values.  The functions are ids as above (fn'2 for recursive
 * activations); a line in another file than the function's is charged to
 * the function's first line, as for sampling.
 */
struct cgl_cost {
	uint32_t from, line, to; /* to: ~0u for the self cost */
	uint64_t calls;
	double c[2];
};

struct cgl {
	const struct an_result *r;
	struct cgl_cost *c;
	uint32_t n, cap;
	uint32_t *hash, hcap;
	double total[2];
	struct cgl_cost *inh; /* calls of frames inherited across fork, placed last */
	uint32_t ninh, capinh;
};

static uint32_t cgl_slot(const struct cgl *g, uint32_t from, uint32_t line, uint32_t to)
{
	uint64_t h = (((uint64_t)from << 32 | line) * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)to * 0xC2B2AE3D27D4EB4Full);
	uint32_t k = (uint32_t)(h >> 32) & (g->hcap - 1);
	while (g->hash[k] != ~0u) {
		const struct cgl_cost *c = &g->c[g->hash[k]];
		if (c->from == from && c->line == line && c->to == to)
			break;
		k = (k + 1) & (g->hcap - 1);
	}
	return k;
}

/* The cost of (from, line, to), made if new. */
static struct cgl_cost *cgl_cost_at(struct cgl *g, uint32_t from, uint32_t line, uint32_t to)
{
	if ((g->n + 1) * 2 > g->hcap) {
		uint32_t ncap = g->hcap ? g->hcap * 2 : 1024;
		free(g->hash);
		g->hash = malloc(ncap * sizeof(*g->hash));
		if (!g->hash)
			abort();
		memset(g->hash, 0xff, ncap * sizeof(*g->hash));
		g->hcap = ncap;
		for (uint32_t i = 0; i < g->n; i++)
			g->hash[cgl_slot(g, g->c[i].from, g->c[i].line, g->c[i].to)] = i;
	}
	uint32_t k = cgl_slot(g, from, line, to);
	if (g->hash[k] == ~0u) {
		if (g->n == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 1024;
			g->c = realloc(g->c, g->cap * sizeof(*g->c));
			if (!g->c)
				abort();
		}
		g->c[g->n] = (struct cgl_cost){from, line, to, 0, {0, 0}};
		g->hash[k] = g->n++;
	}
	return &g->c[g->hash[k]];
}

static void cgl_event(void *ctx, const struct an_line_ev *e)
{
	struct cgl *g = ctx;
	const struct an_result *r = g->r;
	if (!e->call && e->e == 0)
		return; /* nothing to charge */
	uint32_t from = e->fn * 2 + (e->fn_again ? 1 : 0), to = e->call ? e->callee * 2 + (e->callee_again ? 1 : 0) : ~0u;
	if (e->inherited) { /* placed at the end (cgl_place_inherited) */
		if (g->ninh == g->capinh) {
			g->capinh = g->capinh ? g->capinh * 2 : 16;
			g->inh = xrealloc(g->inh, g->capinh * sizeof(*g->inh));
		}
		g->inh[g->ninh++] = (struct cgl_cost){from, 0, to, 0, {e->e, e->a}};
		return;
	}
	const struct an_func *af = e->fn < r->nfuncs ? &r->funcs[e->fn] : NULL;
	uint32_t line = af ? af->line : 0;
	if (e->file && e->line && af && (!af->file[0] || strcmp(af->file, e->file) == 0))
		line = e->line;
	struct cgl_cost *c = cgl_cost_at(g, from, line, to);
	c->calls += e->call ? 1 : 0;
	c->c[0] += e->e;
	c->c[1] += e->a;
	if (!e->call) {
		g->total[0] += e->e;
		g->total[1] += e->a;
	}
}

/*
 * A frame a forked child inherited (its copy of fork) was not called in
 * the child, but its time there is its caller's inclusive time as well:
 * without a call, callgrind_annotate's inclusive cost of fork was less
 * than its self cost, and main's less than the report's.  Its cost joins
 * the parent process's call of the same function from the same caller (so
 * the count of calls stays the report's), or, with none, is a call of its
 * own at the caller's first line (written as one call: a cost after
 * calls=0 would be read as self cost).
 */
static void cgl_place_inherited(struct cgl *g)
{
	for (uint32_t i = 0; i < g->ninh; i++) {
		const struct cgl_cost *in = &g->inh[i];
		struct cgl_cost *c = NULL;
		for (uint32_t j = 0; j < g->n && !c; j++)
			if (g->c[j].from == in->from && g->c[j].to == in->to && g->c[j].calls)
				c = &g->c[j];
		if (!c) {
			uint32_t fn = in->from / 2;
			c = cgl_cost_at(g, in->from, fn < g->r->nfuncs ? g->r->funcs[fn].line : 0, in->to);
		}
		c->c[0] += in->c[0];
		c->c[1] += in->c[1];
	}
}

static int cgl_cmp(const void *a, const void *b)
{
	const struct cgl_cost *x = a, *y = b;
	return cg_order(x->from, x->line, x->to, y->from, y->line, y->to);
}

static int cg_write_instr_lines(FILE *f, const struct an_view *v, const struct fmt_data *d, struct an_result *rw)
{
	struct cgl g = {.r = rw};
	/* the view's values were compensated unless nothing was subtracted */
	struct an_lines_opts lo = {.no_compensation = rw->compensated_ns == 0, .mode = AN_LINES_EVENTS,
				   .cb = cgl_event, .ctx = &g};
	struct an_lines l;
	if (an_lines_run(d, rw, &lo, &l) < 0)
		return -1;
	an_lines_free(&l);
	cgl_place_inherited(&g);
	free(g.inh);
	if (g.n)
		qsort(g.c, g.n, sizeof(*g.c), cgl_cmp);
	uint32_t nids = rw->nfuncs * 2 + 2;
	struct cg_names nm = {calloc(nids, 1), calloc(rw->nfuncs + 1, 1), calloc(rw->nmods + 1, 1),
			      cg_number_files(rw), 0, 0};
	if (!nm.fn_done || !nm.fl_done || !nm.ob_done)
		abort();
	cg_header(f, d, cg_instr_events, g.total, 2);
	for (uint32_t i = 0; i < g.n;) {
		uint32_t id = g.c[i].from;
		cg_place(f, v, &nm, id, 0);
		cg_fn_ref(f, v, &nm, "fn", id);
		for (; i < g.n && g.c[i].from == id; i++) {
			const struct cgl_cost *c = &g.c[i];
			if (c->to != ~0u) {
				cg_place(f, v, &nm, c->to, 1);
				cg_fn_ref(f, v, &nm, "cfn", c->to);
				/* readers take a cost line after calls=0 for self cost:
				 * a call path only a forked child inherited is one call */
				fprintf(f, "calls=%" PRIu64 " %u\n", c->calls ? c->calls : 1, cg_line(v, c->to));
			}
			fprintf(f, "%u %.0f %.0f\n", c->line, c->c[0], c->c[1]);
		}
		fputc('\n', f);
	}
	fprintf(f, "totals: %.0f %.0f\n", g.total[0], g.total[1]);
	free(g.c);
	free(g.hash);
	free(nm.fn_done);
	free(nm.fl_done);
	free(nm.ob_done);
	free(nm.file_id);
	return ferror(f) ? -1 : 0;
}

int out_instr_has_lines(const struct fmt_data *d, const struct an_filter *flt)
{
	if (flt && (an_filter_active(flt) || flt->just_my_code))
		return 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].nosites)
			return 0;
	return 1;
}

int out_callgrind(FILE *f, const struct an_view *v, const struct fmt_data *d, struct an_result *rw,
		  const struct an_filter *flt)
{
	if (v->sampling)
		return cg_write_sampling(f, rw, d, flt);
	if (out_instr_has_lines(d, flt))
		return cg_write_instr_lines(f, v, d, rw);
	const struct an_result *r = v->r;
	int nev = 2;
	/* exclusive and inclusive value columns of the events */
	int self_k[2] = {AN_EE, AN_AE}, incl_k[2] = {AN_EI, AN_AI};
	uint32_t *order, *same;
	uint32_t n = an_view_preorder(v, &order, &same);
	uint32_t nids = r->nfuncs * 2 + 2;
	double *self = xcalloc((size_t)nids * 2, sizeof(*self));
	uint8_t *used = xcalloc(nids, 1);
	struct cg_edge *edges = xmalloc((n + 1) * sizeof(*edges));
	struct cg_names nm = {xcalloc(nids, 1), xcalloc(r->nfuncs + 1, 1), xcalloc(r->nmods + 1, 1),
			      cg_number_files(r), 0, 0};
	uint32_t ne = 0;
	double total[2] = {0, 0};
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = order[i];
		if (v->n[c].fn >= r->nfuncs)
			continue;
		uint32_t id = cg_id(v, c, same);
		used[id] = 1;
		for (int e = 0; e < nev; e++) {
			self[id * 2 + (uint32_t)e] += v->n[c].v[self_k[e]];
			total[e] += v->n[c].v[self_k[e]];
		}
		uint32_t p = v->n[c].parent;
		if (p && p != ~0u && v->n[p].fn < r->nfuncs) {
			struct cg_edge *ed = &edges[ne++];
			ed->from = cg_id(v, p, same);
			ed->to = id;
			/* readers take a call count of 0 for self cost: sampling
			 * (which cannot count calls) and frames inherited across
			 * fork give each call path one call */
			ed->calls = v->n[c].calls ? v->n[c].calls : 1;
			for (int e = 0; e < nev; e++)
				ed->cost[e] = v->n[c].v[incl_k[e]];
		}
	}
	qsort(edges, ne, sizeof(*edges), cg_edge_cmp);
	uint32_t m = 0; /* merge the edges of different paths */
	for (uint32_t i = 0; i < ne; i++) {
		if (m && edges[m - 1].from == edges[i].from && edges[m - 1].to == edges[i].to) {
			edges[m - 1].calls += edges[i].calls;
			for (int e = 0; e < nev; e++)
				edges[m - 1].cost[e] += edges[i].cost[e];
		} else
			edges[m++] = edges[i];
	}
	ne = m;

	cg_header(f, d, cg_instr_events, total, nev);

	uint32_t ei = 0;
	for (uint32_t id = 0; id < nids; id++) {
		if (!used[id])
			continue;
		cg_place(f, v, &nm, id, 0);
		cg_fn_ref(f, v, &nm, "fn", id);
		uint32_t line = cg_line(v, id);
		fprintf(f, "%u", line);
		for (int e = 0; e < nev; e++)
			fprintf(f, " %.0f", self[id * 2 + (uint32_t)e]);
		fputc('\n', f);
		while (ei < ne && edges[ei].from < id)
			ei++;
		for (; ei < ne && edges[ei].from == id; ei++) {
			const struct cg_edge *ed = &edges[ei];
			cg_place(f, v, &nm, ed->to, 1);
			cg_fn_ref(f, v, &nm, "cfn", ed->to);
			fprintf(f, "calls=%" PRIu64 " %u\n%u", ed->calls, cg_line(v, ed->to), line);
			for (int e = 0; e < nev; e++)
				fprintf(f, " %.0f", ed->cost[e]);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	fputs("totals:", f);
	for (int e = 0; e < nev; e++)
		fprintf(f, " %.0f", total[e]);
	fputc('\n', f);
	free(order);
	free(same);
	free(self);
	free(used);
	free(edges);
	free(nm.fn_done);
	free(nm.fl_done);
	free(nm.ob_done);
	free(nm.file_id);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * Chrome trace events
 * --------------------------------------------------------------------- */

#define CH_BINS 4096

struct ch_ctx {
	FILE *f;
	const struct fmt_data *d;
	struct an_result *r;
	struct out_chrome_opts *o;
	int filtering;        /* a module or function part is set */
	int printing;         /* 0: counting pass, 1: writing pass */
	uint64_t count;       /* events the filter keeps */
	uint64_t written;
	double t0;            /* ns: the earliest thread start */
	double tmax;          /* ns: the latest event seen */
	double bin_lo;        /* ns: where the histogram starts */
	double bin_ns;        /* width of a histogram bin */
	uint64_t *bins;       /* events per start-time bin (histogram pass) */
	double cutoff;        /* ns: events starting at or after it are left out, */
	double cutoff_end;    /* but those before this, the cap's last bin, while under the cap */
	struct cct frames;    /* sampling: the stackFrames, one node per path */
	struct an_addr_map *maps;
	int first;            /* no event written yet (for the commas) */
};

static void ch_sep(struct ch_ctx *c)
{
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = 0;
}

/*
 * One event that the filter keeps, starting at ns (absolute).  Counted in
 * the counting passes; in the writing pass, whether it is before the
 * cut-off (the caller writes it then).
 */
static int ch_event(struct ch_ctx *c, double start)
{
	c->count++;
	if (start > c->tmax)
		c->tmax = start;
	if (c->bins) {
		double b = (start - c->bin_lo) / c->bin_ns; /* events outside it are counted elsewhere */
		if (b >= 0 && b < CH_BINS)
			c->bins[(uint32_t)b]++;
	}
	if (!c->printing || start >= c->cutoff_end || (c->o->max_events && c->written >= c->o->max_events))
		return 0;
	c->written++;
	return 1;
}

static void ch_us(FILE *f, double ns)
{
	fprintf(f, "%.3f", ns / 1000.0);
}

/* A time in picoseconds as microseconds: three decimals (the ns) unless a
 * slice was moved by picoseconds to nest unambiguously (ch_put). */
static void ch_ps(FILE *f, int64_t ps)
{
	if (ps < 0) {
		fputc('-', f);
		ps = -ps;
	}
	int64_t frac = ps % 1000000;
	if (frac % 1000 == 0)
		fprintf(f, "%" PRId64 ".%03" PRId64, ps / 1000000, frac / 1000);
	else
		fprintf(f, "%" PRId64 ".%06" PRId64, ps / 1000000, frac);
}

/*
 * Instrumentation: slices in the order calls are entered, each parent
 * before its children, so a reader that sorts by start time (stably, in
 * file order) sees the caller first.  A call's end is not known when it
 * is entered, so each thread is replayed twice: the first replay notes
 * every call's end and whether the filter keeps it, by the order of entry
 * (9 bytes a call of one thread), the second writes.  (The counting
 * passes of --max-events need neither: they count the calls as they end.)
 *
 * Compensation often leaves a caller no time of its own around its only
 * call: both slices then start and end at the same nanosecond, and
 * readers nest them in whichever order their sort leaves them (speedscope
 * and Perfetto sort by start, then longer first; a stable sort keeps the
 * file order, others do not).  And speedscope, at one instant, begins a
 * slice before it ends another of the same name, so a call that starts
 * as its same-named sibling ends (a loop of calls, compensated to no gap)
 * is drawn inside it.  So a slice starts at least a picosecond after its
 * parent starts and after its previous sibling ends, and ends no later
 * than its parent: a nesting no sort can misread.  The picoseconds are
 * below the clock's resolution and the ns printed otherwise: a call moves
 * by a picosecond for each caller with which it shared its start, a
 * function's total by picoseconds a call.
 */
struct ch_span {
	int64_t start, end; /* ps since t0, as written */
	int64_t last;       /* the end of its latest child (its start before one) */
};

struct ch_frame {
	uint32_t fn;
	uint32_t ord;   /* the order of its entry in its thread */
	double start;   /* ns */
	int match;      /* the function passes the filter */
	int inside;     /* entered below a matching frame */
	int below;      /* a matching frame was entered below it */
	int system;     /* a system library's (hidden by just-my-code) */
	int pushed;     /* its span is on ch_thread.spans (writing replay) */
};

/* The replay of one thread's events (an_walk_events) as slices. */
enum ch_mode { CH_COUNT, CH_NOTE, CH_WRITE };

struct ch_thread {
	struct ch_ctx *c;
	enum ch_mode mode;
	uint32_t pid, tid;
	struct ch_frame *st; /* the open frames, by depth */
	uint32_t cap, inside;
	uint32_t calls;      /* calls entered so far */
	double *end;         /* per call by entry: its end (CH_NOTE) */
	uint8_t *keep;       /* per call by entry: the filter keeps it */
	uint32_t capcalls;
	struct ch_span *spans; /* the written frames open (CH_WRITE) */
	uint32_t nspans, capspans;
	int64_t root_last;   /* the end of the latest slice of no parent */
};

static int ch_keep(const struct ch_ctx *c, const struct ch_frame *fr)
{
	if (fr->system)
		return 0;
	return !c->filtering || fr->match || fr->inside || fr->below;
}

/* The ns (since t0) a slice starts or ends at: both ends rounded, the
 * duration their difference (each rounded apart, a slice could end 1 ns
 * past its caller's, or the next start 1 ns before the previous ended) */
static int64_t ch_ns(const struct ch_ctx *c, double t)
{
	/* (a hostile file's times: kept where llround and the picoseconds
	 * below are defined) */
	double d = t - c->t0;
	if (!(d > -9e18))
		d = -9e18;
	if (d > 9e18)
		d = 9e18;
	return (int64_t)llround(d);
}

/* ch_ns in picoseconds, saturated (a file's huge time overflowed it). */
static int64_t ch_ps_at(const struct ch_ctx *c, double t)
{
	const int64_t lim = INT64_MAX / 1000 - 1;
	int64_t n = ch_ns(c, t);
	return (n > lim ? lim : n < -lim ? -lim : n) * 1000;
}

/* An off-CPU interval is written if it has a length: zero-length ones
 * (at a thread's start, where nothing has been subtracted from yet) say
 * nothing and would open the thread in a viewer. */
static int ch_off_cpu(const struct ch_thread *t, const struct an_walk_ev *e)
{
	return e->os && (!t->c->filtering || t->inside) && ch_ns(t->c, e->end) > ch_ns(t->c, e->start);
}

/* One slice in the writing replay: placed inside its parent (the
 * innermost written frame open) after its previous sibling, written if
 * under the cap; push: it is a call, whose children follow. */
static void ch_put(struct ch_thread *t, const char *name, const char *cat, double start, double end, int push)
{
	struct ch_ctx *c = t->c;
	struct ch_span *par = t->nspans ? &t->spans[t->nspans - 1] : NULL;
	int64_t *last = par ? &par->last : &t->root_last;
	int64_t s = ch_ps_at(c, start), e = ch_ps_at(c, end);
	if (s <= *last)
		s = *last + 1;
	if (par && s > par->end)
		s = par->end;
	if (e < s)
		e = s;
	if (par && e > par->end)
		e = par->end;
	*last = e;
	if (push) {
		if (t->nspans == t->capspans) {
			t->capspans = t->capspans ? t->capspans * 2 : 256;
			t->spans = xrealloc(t->spans, t->capspans * sizeof(*t->spans));
		}
		t->spans[t->nspans++] = (struct ch_span){s, e, s};
	}
	if (!ch_event(c, start))
		return;
	ch_sep(c);
	fputs("{\"ph\":\"X\",\"name\":", c->f);
	out_json_str(c->f, name);
	fputs(",\"cat\":", c->f);
	out_json_str(c->f, cat);
	fprintf(c->f, ",\"pid\":%u,\"tid\":%u,\"ts\":", t->pid, t->tid);
	ch_ps(c->f, s);
	fputs(",\"dur\":", c->f);
	ch_ps(c->f, e - s);
	fputc('}', c->f);
}

static void ch_instr_event(void *ctx, const struct an_walk_ev *e)
{
	struct ch_thread *t = ctx;
	struct ch_ctx *c = t->c;
	const struct an_filter *flt = c->o->filter;
	if (e->what == AN_WALK_INTERVAL) {
		if (t->mode == CH_NOTE || !ch_off_cpu(t, e))
			return;
		if (t->mode == CH_COUNT)
			ch_event(c, e->start);
		else /* inside the frame current in it: after the call in the file */
			ch_put(t, "off-CPU", "os", e->start, e->end, 0);
		return;
	}
	if (e->what == AN_WALK_EXIT) {
		struct ch_frame *fr = &t->st[e->depth];
		t->inside -= fr->match ? 1 : 0;
		if (t->mode == CH_COUNT && ch_keep(c, fr))
			ch_event(c, fr->start);
		else if (t->mode == CH_NOTE) {
			t->end[fr->ord] = e->end;
			t->keep[fr->ord] = (uint8_t)ch_keep(c, fr);
		} else if (t->mode == CH_WRITE && fr->pushed)
			t->nspans--;
		return;
	}
	if (e->depth >= t->cap) {
		while (t->cap <= e->depth)
			t->cap *= 2;
		t->st = xrealloc(t->st, t->cap * sizeof(*t->st));
	}
	struct ch_frame *fr = &t->st[e->depth];
	const struct an_module *m = fn_module(c->r, e->fn);
	fr->fn = e->fn;
	fr->start = e->start;
	fr->ord = t->calls++;
	fr->pushed = 0;
	fr->system = flt && flt->just_my_code && an_is_system_module(m ? m->path : NULL);
	fr->match = c->filtering && an_filter_match(c->r, flt, e->fn);
	fr->inside = t->inside > 0;
	fr->below = 0;
	if (fr->match) {
		t->inside++;
		/* the callers lead to a match: keep them (their callers were
		 * marked when they were) */
		for (uint32_t i = e->depth; i-- > 0 && !t->st[i].below;)
			t->st[i].below = 1;
	}
	if (t->mode == CH_NOTE && fr->ord >= t->capcalls) {
		t->capcalls = t->capcalls ? t->capcalls * 2 : 4096;
		t->end = xrealloc(t->end, t->capcalls * sizeof(*t->end));
		t->keep = xrealloc(t->keep, t->capcalls * sizeof(*t->keep));
	}
	if (t->mode == CH_NOTE) { /* (every frame is closed by an exit, at the end at the latest) */
		t->end[fr->ord] = fr->start;
		t->keep[fr->ord] = 0;
	}
	if (t->mode == CH_WRITE && fr->ord < t->capcalls && t->keep[fr->ord]) {
		char buf[1024];
		ch_put(t, fn_label(c->r, fr->fn, buf, sizeof(buf)), m ? m->base : "?", fr->start, t->end[fr->ord], 1);
		fr->pushed = 1;
	}
}

/* One thread's calls and off-CPU intervals (instrumentation), times
 * compensated as in every view (an_walk_events): counted, or noted and
 * written (above). */
static void ch_instr_thread(struct ch_ctx *c, uint32_t ti)
{
	const struct fmt_thread *th = &c->d->threads[ti];
	struct ch_thread t = {.c = c, .pid = c->d->procs[th->proc].pid, .tid = th->tid, .cap = 256,
			      .mode = c->printing ? CH_NOTE : CH_COUNT, .root_last = INT64_MIN / 2};
	t.st = xmalloc(t.cap * sizeof(*t.st));
	double end = an_walk_events(c->d, c->r, &c->maps[th->proc], ti, c->o->no_compensation, ch_instr_event, &t);
	if (t.mode == CH_NOTE) {
		t.mode = CH_WRITE;
		t.calls = t.inside = 0;
		an_walk_events(c->d, c->r, &c->maps[th->proc], ti, c->o->no_compensation, ch_instr_event, &t);
	}
	if (end > c->tmax)
		c->tmax = end;
	free(t.st);
	free(t.end);
	free(t.keep);
	free(t.spans);
}

/* One sample (an_walk_samples: filtered, inlined functions expanded): an
 * instant event, its stack in stackFrames. */
static void ch_sample(void *ctx, const struct an_walk_sample *s)
{
	struct ch_ctx *c = ctx;
	if (s->time > c->tmax)
		c->tmax = s->time;
	if (!ch_event(c, s->time))
		return;
	uint32_t node = 0;
	for (size_t i = s->nframes; i-- > 0;) /* outermost first */
		node = cct_child(&c->frames, node, s->fn[i]);
	ch_sep(c);
	char buf[1024];
	fputs("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sample\",\"name\":", c->f);
	out_json_str(c->f, fn_label(c->r, s->fn[0], buf, sizeof(buf)));
	fprintf(c->f, ",\"pid\":%u,\"tid\":%u,\"ts\":", c->d->procs[s->proc].pid, c->d->threads[s->thread].tid);
	ch_us(c->f, s->time - c->t0);
	fprintf(c->f, ",\"sf\":%u}", node);
}

static int ch_selected(const struct ch_ctx *c, uint32_t ti)
{
	const struct an_filter *flt = c->o->filter;
	const struct fmt_thread *th = &c->d->threads[ti];
	if (flt && flt->pid && c->d->procs[th->proc].pid != flt->pid)
		return 0;
	if (flt && flt->tid && th->tid != flt->tid)
		return 0;
	return 1;
}

static void ch_pass(struct ch_ctx *c)
{
	c->count = 0;
	if (c->r->sampling) {
		an_walk_samples(c->d, c->r, c->o->filter, ch_sample, c);
		return;
	}
	for (uint32_t ti = 0; ti < c->d->nthreads; ti++)
		if (ch_selected(c, ti))
			ch_instr_thread(c, ti);
}

int out_chrome(FILE *f, const struct fmt_data *d, struct an_result *r, struct out_chrome_opts *o)
{
	struct ch_ctx c = {.f = f, .d = d, .r = r, .o = o, .first = 1, .cutoff = INFINITY, .cutoff_end = INFINITY};
	const struct an_filter *flt = o->filter;
	c.filtering = flt && (flt->module || flt->function);
	c.maps = xcalloc(d->nprocs + 1, sizeof(*c.maps));
	c.t0 = INFINITY;
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		double s = (double)d->threads[ti].start * d->ns_per_tick;
		if (s < c.t0)
			c.t0 = s;
	}
	if (!d->nthreads)
		c.t0 = 0;
	c.tmax = c.t0;
	cct_init(&c.frames);

	/* with a cap: how many events there are, and if too many, where to
	 * cut them off (two more passes); without, one pass writes them all
	 * as they are read */
	uint64_t total = 0;
	if (o->max_events) {
		ch_pass(&c);
		total = c.count;
	}
	if (o->max_events && total > o->max_events) {
		c.bins = xcalloc(CH_BINS, sizeof(*c.bins));
		/* the latest time before which at most max_events start: a
		 * histogram of start times, refined in the bin where the cap
		 * falls (a bin of a long run can hold many more events than the
		 * cap), down to a nanosecond */
		double lo = c.t0, width = c.tmax - c.t0 + 1;
		uint64_t before = 0;
		for (int round = 0; round < 6; round++) {
			memset(c.bins, 0, CH_BINS * sizeof(*c.bins));
			c.bin_lo = lo;
			c.bin_ns = width / CH_BINS;
			ch_pass(&c);
			uint32_t b = 0;
			while (b < CH_BINS && before + c.bins[b] <= o->max_events)
				before += c.bins[b++];
			lo += b * c.bin_ns;
			width = c.bin_ns;
			if (b == CH_BINS || width < 1)
				break;
		}
		/* events that start in the same instant (calls whose compensated
		 * length is 0 follow one another without a tick between them:
		 * 125 in one nanosecond of the demo) cannot be told apart by
		 * time: as many of them as the cap allows are written */
		c.cutoff = lo;
		c.cutoff_end = nextafter(lo + width, INFINITY); /* (width may be under lo's precision) */
		free(c.bins);
		c.bins = NULL;
	}

	c.printing = 1;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	/* names of processes and threads */
	for (uint32_t pi = 0; pi < d->nprocs; pi++) {
		ch_sep(&c);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"args\":{\"name\":",
			d->procs[pi].pid);
		out_json_str(f, d->procs[pi].command ? d->procs[pi].command : "");
		fputs("}}", f);
	}
	for (uint32_t ti = 0; ti < d->nthreads; ti++) {
		if (!ch_selected(&c, ti))
			continue;
		ch_sep(&c);
		fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
			d->procs[d->threads[ti].proc].pid, d->threads[ti].tid);
		out_json_str(f, d->threads[ti].name ? d->threads[ti].name : "");
		fputs("}}", f);
	}
	ch_pass(&c);
	if (!o->max_events)
		total = c.count;
	uint64_t left_out = total - c.written;
	o->written = c.written;
	o->left_out = left_out;
	if (left_out) {
		ch_sep(&c);
		fputs("{\"ph\":\"i\",\"s\":\"g\",\"name\":\"stint: events left out\",\"pid\":0,\"tid\":0,\"ts\":", f);
		ch_us(f, c.cutoff - c.t0);
		fprintf(f, ",\"args\":{\"written\":%" PRIu64 ",\"left_out\":%" PRIu64 ",\"max_events\":%" PRIu64
			   ",\"reason\":\"events starting after this time, and some at it, were left out (--max-events)\"}}",
			c.written, left_out, o->max_events);
	}
	fputs("\n]", f);
	if (r->sampling) {
		fputs(",\"stackFrames\":{", f);
		for (uint32_t i = 1; i < c.frames.len; i++) {
			const struct cct_node *fr = &c.frames.n[i];
			const struct an_module *m = fn_module(r, fr->fn);
			char buf[1024];
			fprintf(f, "%s\n\"%u\":{\"name\":", i > 1 ? "," : "", i);
			out_json_str(f, fn_label(r, fr->fn, buf, sizeof(buf)));
			fputs(",\"category\":", f);
			out_json_str(f, m ? m->base : "?");
			if (fr->parent)
				fprintf(f, ",\"parent\":%u", fr->parent);
			fputc('}', f);
		}
		fputs("\n}", f);
	}
	fprintf(f, ",\"otherData\":{\"producer\":\"stint\",\"method\":\"%s\",\"events\":%" PRIu64
		   ",\"events_left_out\":%" PRIu64 ",\"max_events\":%" PRIu64 "%s}}\n",
		out_schema_of(r->sampling)->name, c.written, left_out, o->max_events,
		r->sampling ? "" : o->no_compensation ? ",\"times\":\"as recorded, without probe-cost compensation\""
					       : ",\"times\":\"probe cost compensated, as in stint report\"");
	for (uint32_t pi = 0; pi < d->nprocs; pi++) {
		an_addr_map_free(&c.maps[pi]);
	}
	free(c.maps);
	cct_release(&c.frames);
	return ferror(f) ? -1 : 0;
}
