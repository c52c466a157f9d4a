/*
 * out_pprof.c - a view as pprof's profile: perftools.profiles.Profile
 * (out_pprof.proto, encoded by the C that protoc-c generates from it at
 * build time), gzipped as pprof expects.
 *
 * Instrumentation: pprof knows samples, not trees: each call path with a value becomes one
 * sample whose locations are the path, leaf first, and whose values are
 * the path's exclusive ones.  Recursion is folded first (out_fold_paths):
 * a path of 200,000 recursive calls would otherwise be written, and held
 * in memory, once for each of its 200,000 prefixes.  pprof then sums a function's "flat" over the
 * samples it is the leaf of and its "cum" over the samples it is anywhere
 * in, counting a recursive function once per sample: exactly stint's
 * exclusive and inclusive values (an inclusive value of a path is the sum
 * of the exclusive values below it).
 *
 * Sampling profiles are written from the samples themselves
 * (an_walk_samples), not from the tree: one location per sampled address
 * (the leaf's address, a caller's return address) of each process, with
 * the source line of that address, and where the compiler inlined code
 * there, one Line per inlined function, innermost first, as pprof expects;
 * one mapping per module of each process, with its path, build-id and
 * range.  pprof -list and -lines then show samples per source line.
 * Each distinct stack is one sample, written as recorded (a sampled stack
 * holds at most FMT_SAMPLE_MAX_FRAMES addresses, so memory stays
 * proportional to the data file, recursion or not).
 *
 * Instrumentation: where the entries carry their call sites (format 2) and
 * the whole run is exported, one location per function and source line
 * (pp_write_instr_lines); otherwise (filters, just-my-code, older files)
 * the view's trees, which hold functions, not lines: each function is one
 * location (address 0, at the function's first line).
 * Either way the profile is marked as symbolized, so that pprof does not
 * look for the binaries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "out_export.h"
#include "out_schema.h"

#if !STINT_HAVE_PPROF
/* Built without protobuf-c (CMakeLists.txt): the command says so. */
int out_pprof_available(void)
{
	return 0;
}

int out_pprof(int fd, const struct an_view *v, const struct fmt_data *d, struct an_result *rw,
	      const struct an_filter *flt)
{
	(void)fd, (void)v, (void)d, (void)rw, (void)flt;
	errno = ENOTSUP;
	return -1;
}
#else
#include "../analysis/an_lines.h"
#include "../analysis/an_walk.h"
#include "out_pprof.pb-c.h"
#include "../lib/util.h"

int out_pprof_available(void)
{
	return 1;
}

/* The string table, with a hash for interning. */
struct pp_strings {
	char **s;
	size_t n, cap;
	struct util_index index;
	char **owned;   /* strings made for the table (labels), freed with it */
	size_t nowned;
};

static uint64_t pp_str_key(const void *t, uint32_t i)
{
	return util_hash_str(((const struct pp_strings *)t)->s[i], 0);
}

/* The index of s, added if new (pointers are kept, not copied). */
static int64_t pp_str(struct pp_strings *t, const char *s)
{
	if (!s)
		s = "";
	util_index_reserve(&t->index, (uint32_t)t->n, pp_str_key, t);
	uint32_t *k = util_index_probe(&t->index, util_hash_str(s, 0));
	for (; *k != UTIL_INDEX_EMPTY; k = util_index_next(&t->index, k))
		if (strcmp(t->s[*k], s) == 0)
			return *k;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->s = xrealloc(t->s, t->cap * sizeof(*t->s));
	}
	t->s[t->n] = (char *)s; /* protobuf-c wants char *; never written */
	*k = (uint32_t)t->n;
	return (int64_t)t->n++;
}

/* The index of function fn's name as the report prints it: "FILE:NAME"
 * for one of two static functions of one name (an_func_label), which
 * pprof, merging functions by name, would add up as one. */
static int64_t pp_fn_label(struct pp_strings *t, const struct an_result *r, uint32_t fn)
{
	char buf[1024];
	const char *l = an_func_label(r, fn, buf, sizeof(buf));
	if (l != buf)
		return pp_str(t, l);
	t->owned = xrealloc(t->owned, (t->nowned + 1) * sizeof(*t->owned));
	t->owned[t->nowned] = xstrdup(buf);
	return pp_str(t, t->owned[t->nowned++]);
}

static void pp_strings_free(struct pp_strings *t)
{
	free(t->s);
	util_index_free(&t->index);
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
}

static void pp_type(StintPprof__ValueType *vt, struct pp_strings *t, const char *type, const char *unit)
{
	stint_pprof__value_type__init(vt);
	vt->type = pp_str(t, type);
	vt->unit = pp_str(t, unit);
}

/* The module of fmt_data with this path (for its build-id and range). */
static const struct fmt_module *pp_module(const struct fmt_data *d, const char *path)
{
	for (uint32_t p = 0; p < d->nprocs; p++)
		for (uint32_t i = 0; i < d->procs[p].nmods; i++)
			if (d->procs[p].mods[i].path && path && strcmp(d->procs[p].mods[i].path, path) == 0)
				return &d->procs[p].mods[i];
	return NULL;
}

static int64_t pp_round(double x)
{
	/* values from a hostile file can be beyond int64: clamp, never convert out of range */
	if (!(x > -9.2e18))
		return x != x ? 0 : INT64_MIN;
	if (!(x < 9.2e18))
		return INT64_MAX;
	return (int64_t)floor(x + 0.5);
}

/* Encode prof and write it gzipped to fd (which stays open).  Returns 0, -1 on error. */
static int pp_pack_write(int fd, const StintPprof__Profile *prof)
{
	int rc = -1;
	size_t len = stint_pprof__profile__get_packed_size(prof);
	uint8_t *buf = xmalloc(len + 1);
	stint_pprof__profile__pack(prof, buf);
	int fd2 = dup(fd); /* gzclose closes its descriptor; the caller keeps fd */
	gzFile gz = fd2 >= 0 ? gzdopen(fd2, "wb") : NULL;
	if (gz) {
		size_t off = 0;
		rc = 0;
		while (off < len) {
			unsigned chunk = len - off > (1u << 30) ? 1u << 30 : (unsigned)(len - off);
			if (gzwrite(gz, buf + off, chunk) != (int)chunk) {
				rc = -1;
				break;
			}
			off += chunk;
		}
		if (gzclose(gz) != Z_OK)
			rc = -1;
	} else if (fd2 >= 0)
		close(fd2);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------------------
 * Sampling: locations per address, samples per distinct stack
 * --------------------------------------------------------------------- */

struct pp_loc {
	uint32_t proc, line0, nline; /* lines: pp_samp.lfn/lline[line0..] */
	uint64_t pc, mapping;
	int leaf;
};

struct pp_samp {
	struct an_result *r;
	const struct fmt_data *d;
	uint32_t *map_base;          /* per process: first mapping id - 1 */
	uint8_t *map_used;           /* per mapping id */
	uint8_t *fn_used;            /* per function, grown with r */
	uint32_t fn_cap;
	struct pp_loc *loc;          /* location id i + 1 */
	uint32_t nloc, caploc;
	struct util_index loc_index;
	uint32_t *lfn, *lline;       /* Line entries of the locations */
	uint32_t nl, capl;
	uint64_t *ids;               /* the distinct stacks' location ids, leaf first */
	size_t nids, capids;
	size_t *stk_at;              /* per distinct stack: offset into ids */
	uint32_t *stk_len;
	uint64_t *stk_count;
	uint32_t nstk, capstk;
	struct util_index stk_index;
	uint64_t *cur;               /* the stack being added */
	size_t capcur;
};

static uint64_t pp_mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t pp_loc_key(uint32_t proc, uint64_t pc, int leaf)
{
	return pp_mix(pp_mix(proc, pc), (uint64_t)leaf);
}

static int pp_loc_eq(const struct pp_loc *l, uint32_t proc, uint64_t pc, int leaf)
{
	return l->proc == proc && l->pc == pc && l->leaf == leaf;
}

static uint64_t pp_loc_rekey(const void *ctx, uint32_t i)
{
	const struct pp_loc *l = &((const struct pp_samp *)ctx)->loc[i];
	return pp_loc_key(l->proc, l->pc, l->leaf);
}

static uint64_t pp_stk_key(const uint64_t *ids, uint32_t n)
{
	uint64_t h = n;
	for (uint32_t i = 0; i < n; i++)
		h = pp_mix(h, ids[i]);
	return h;
}

static uint64_t pp_stk_rekey(const void *ctx, uint32_t i)
{
	const struct pp_samp *ps = ctx;
	return pp_stk_key(ps->ids + ps->stk_at[i], ps->stk_len[i]);
}

/* The mapping (id) of the module of process proc holding pc, 0 if none. */
static uint64_t pp_mapping_of(struct pp_samp *ps, uint32_t proc, uint64_t pc)
{
	int i = fmt_module_at(&ps->d->procs[proc], pc);
	if (i < 0)
		return 0;
	uint32_t id = ps->map_base[proc] + (uint32_t)i + 1;
	ps->map_used[id] = 1;
	return id;
}

static void pp_use_fn(struct pp_samp *ps, uint32_t fn)
{
	if (fn >= ps->fn_cap)
		UTIL_GROW_ZEROED(ps->fn_used, ps->fn_cap, fn);
	ps->fn_used[fn] = 1;
}

/* The location id of frames[k..k+n) (one address of the sample). */
static uint64_t pp_location(struct pp_samp *ps, const struct an_walk_sample *s, size_t k, size_t n)
{
	uint32_t pi = s->pc_index[k];
	uint64_t pc = s->pcs[pi];
	int leaf = pi == 0;
	util_index_reserve(&ps->loc_index, ps->nloc, pp_loc_rekey, ps);
	uint32_t *h = util_index_probe(&ps->loc_index, pp_loc_key(s->proc, pc, leaf));
	for (; *h != UTIL_INDEX_EMPTY; h = util_index_next(&ps->loc_index, h))
		if (pp_loc_eq(&ps->loc[*h], s->proc, pc, leaf))
			return (uint64_t)*h + 1;
	if (ps->nloc == ps->caploc) {
		ps->caploc = ps->caploc ? ps->caploc * 2 : 256;
		ps->loc = xrealloc(ps->loc, ps->caploc * sizeof(*ps->loc));
	}
	if (ps->nl + n > ps->capl) {
		ps->capl = (uint32_t)((ps->nl + n) * 2 + 256);
		ps->lfn = xrealloc(ps->lfn, ps->capl * sizeof(*ps->lfn));
		ps->lline = xrealloc(ps->lline, ps->capl * sizeof(*ps->lline));
	}
	struct pp_loc *l = &ps->loc[ps->nloc];
	l->proc = s->proc;
	l->pc = pc;
	l->leaf = leaf;
	l->mapping = pp_mapping_of(ps, s->proc, pc);
	l->line0 = ps->nl;
	l->nline = (uint32_t)n;
	for (size_t j = 0; j < n; j++) { /* innermost inlined function first, as pprof wants */
		ps->lfn[ps->nl] = s->fn[k + j];
		ps->lline[ps->nl++] = s->line[k + j];
		pp_use_fn(ps, s->fn[k + j]);
	}
	*h = ps->nloc;
	return ++ps->nloc;
}

static void pp_add_sample(void *ctx, const struct an_walk_sample *s)
{
	struct pp_samp *ps = ctx;
	if (s->nframes > ps->capcur) {
		ps->capcur = s->nframes * 2;
		ps->cur = xrealloc(ps->cur, ps->capcur * sizeof(*ps->cur));
	}
	uint32_t n = 0;
	for (size_t k = 0; k < s->nframes;) { /* frames of one address make one location */
		size_t e = k + 1;
		while (e < s->nframes && s->pc_index[e] == s->pc_index[k])
			e++;
		ps->cur[n++] = pp_location(ps, s, k, e - k);
		k = e;
	}
	util_index_reserve(&ps->stk_index, ps->nstk, pp_stk_rekey, ps);
	uint32_t *h = util_index_probe(&ps->stk_index, pp_stk_key(ps->cur, n));
	for (; *h != UTIL_INDEX_EMPTY; h = util_index_next(&ps->stk_index, h)) {
		uint32_t i = *h;
		if (ps->stk_len[i] == n && memcmp(ps->ids + ps->stk_at[i], ps->cur, n * sizeof(*ps->cur)) == 0) {
			ps->stk_count[i]++;
			return;
		}
	}
	if (ps->nstk == ps->capstk) {
		ps->capstk = ps->capstk ? ps->capstk * 2 : 256;
		ps->stk_at = xrealloc(ps->stk_at, ps->capstk * sizeof(*ps->stk_at));
		ps->stk_len = xrealloc(ps->stk_len, ps->capstk * sizeof(*ps->stk_len));
		ps->stk_count = xrealloc(ps->stk_count, ps->capstk * sizeof(*ps->stk_count));
	}
	if (ps->nids + n > ps->capids) {
		ps->capids = (ps->nids + n) * 2 + 1024;
		ps->ids = xrealloc(ps->ids, ps->capids * sizeof(*ps->ids));
	}
	memcpy(ps->ids + ps->nids, ps->cur, n * sizeof(*ps->cur));
	ps->stk_at[ps->nstk] = ps->nids;
	ps->stk_len[ps->nstk] = n;
	ps->stk_count[ps->nstk] = 1;
	ps->nids += n;
	*h = ps->nstk++;
}

static void pp_samp_free(struct pp_samp *ps)
{
	free(ps->map_base);
	free(ps->map_used);
	free(ps->fn_used);
	free(ps->loc);
	util_index_free(&ps->loc_index);
	free(ps->lfn);
	free(ps->lline);
	free(ps->ids);
	free(ps->stk_at);
	free(ps->stk_len);
	free(ps->stk_count);
	util_index_free(&ps->stk_index);
	free(ps->cur);
}

/* The program's executable: the first process's (the one started). */
static int pp_is_main(const struct fmt_data *d, const char *path)
{
	return d->nprocs && d->procs[0].exe && path && strcmp(path, d->procs[0].exe) == 0;
}

/* A sampling mapping: module fm of a process, id its mapping id. */
static void pp_samp_mapping(StintPprof__Profile *prof, struct pp_strings *st, const struct fmt_module *fm,
			    uint32_t id, StintPprof__Mapping *maps, StintPprof__Mapping **map_ptrs)
{
	StintPprof__Mapping *mp = &maps[prof->n_mapping];
	stint_pprof__mapping__init(mp);
	mp->id = id;
	mp->filename = pp_str(st, fm->path);
	mp->build_id = pp_str(st, fm->build_id);
	mp->memory_start = fm->start;
	mp->memory_limit = fm->end;
	mp->file_offset = fm->offset;
	mp->has_functions = mp->has_filenames = mp->has_line_numbers = mp->has_inline_frames = 1;
	map_ptrs[prof->n_mapping++] = mp;
}

/*
 * Fill prof's mappings, functions, locations and samples from the samples
 * of d that filter f keeps, and write it.  Returns 0, -1 on error.
 */
static int pp_write_sampling(int fd, StintPprof__Profile *prof, struct pp_strings *st, const struct fmt_data *d,
			     struct an_result *r, const struct an_filter *f, double period_ns)
{
	struct pp_samp ps = {.r = r, .d = d};
	uint32_t nmaps = 0;
	ps.map_base = xcalloc(d->nprocs + 1, sizeof(*ps.map_base));
	for (uint32_t p = 0; p < d->nprocs; p++) {
		ps.map_base[p] = nmaps;
		nmaps += d->procs[p].nmods;
	}
	ps.map_used = xcalloc(nmaps + 1, 1);
	an_walk_samples(d, r, f, pp_add_sample, &ps);

	StintPprof__Mapping *maps = xcalloc(nmaps + 1, sizeof(*maps));
	StintPprof__Mapping **map_ptrs = xcalloc(nmaps + 1, sizeof(*map_ptrs));
	uint32_t nf = r->nfuncs < ps.fn_cap ? r->nfuncs : ps.fn_cap;
	StintPprof__Function *fns = xcalloc(nf + 1, sizeof(*fns));
	StintPprof__Function **fn_ptrs = xcalloc(nf + 1, sizeof(*fn_ptrs));
	StintPprof__Location *locs = xcalloc(ps.nloc + 1, sizeof(*locs));
	StintPprof__Location **loc_ptrs = xcalloc(ps.nloc + 1, sizeof(*loc_ptrs));
	StintPprof__Line *lines = xcalloc(ps.nl + 1, sizeof(*lines));
	StintPprof__Line **line_ptrs = xcalloc(ps.nl + 1, sizeof(*line_ptrs));
	StintPprof__Sample *smp = xcalloc(ps.nstk + 1, sizeof(*smp));
	StintPprof__Sample **smp_ptrs = xcalloc(ps.nstk + 1, sizeof(*smp_ptrs));
	int64_t *vals = xcalloc((size_t)(ps.nstk + 1) * 2, sizeof(*vals));
	/* the first process's executable first (pp_add_mappings), then the
	 * modules of each process in order */
	uint32_t main_id = 0;
	for (uint32_t i = 0; d->nprocs && i < d->procs[0].nmods && !main_id; i++)
		if (ps.map_used[i + 1] && pp_is_main(d, d->procs[0].mods[i].path))
			main_id = i + 1;
	if (main_id)
		pp_samp_mapping(prof, st, &d->procs[0].mods[main_id - 1], main_id, maps, map_ptrs);
	for (uint32_t p = 0; p < d->nprocs; p++)
		for (uint32_t i = 0; i < d->procs[p].nmods; i++) {
			uint32_t id = ps.map_base[p] + i + 1;
			if (ps.map_used[id] && id != main_id)
				pp_samp_mapping(prof, st, &d->procs[p].mods[i], id, maps, map_ptrs);
		}
	for (uint32_t fi = 0; fi < nf; fi++) {
		if (!ps.fn_used[fi])
			continue;
		const struct an_func *af = &r->funcs[fi];
		StintPprof__Function *fp = &fns[prof->n_function];
		stint_pprof__function__init(fp);
		fp->id = fi + 1;
		fp->name = pp_fn_label(st, r, fi);
		fp->system_name = pp_str(st, af->name);
		fp->filename = pp_str(st, af->file);
		fp->start_line = af->line;
		fn_ptrs[prof->n_function++] = fp;
	}
	for (uint32_t i = 0; i < ps.nloc; i++) {
		const struct pp_loc *pl = &ps.loc[i];
		StintPprof__Location *lp = &locs[i];
		stint_pprof__location__init(lp);
		lp->id = i + 1;
		lp->mapping_id = pl->mapping;
		lp->address = pl->pc;
		lp->n_line = pl->nline;
		lp->line = &line_ptrs[pl->line0];
		for (uint32_t k = pl->line0; k < pl->line0 + pl->nline; k++) {
			stint_pprof__line__init(&lines[k]);
			lines[k].function_id = ps.lfn[k] + 1;
			lines[k].line = ps.lline[k];
			line_ptrs[k] = &lines[k];
		}
		loc_ptrs[i] = lp;
	}
	prof->n_location = ps.nloc;
	for (uint32_t i = 0; i < ps.nstk; i++) {
		StintPprof__Sample *s = &smp[i];
		stint_pprof__sample__init(s);
		s->value = &vals[(size_t)i * 2];
		s->value[0] = (int64_t)ps.stk_count[i];
		s->value[1] = pp_round((double)ps.stk_count[i] * period_ns);
		s->n_value = 2;
		s->location_id = ps.ids + ps.stk_at[i];
		s->n_location_id = ps.stk_len[i];
		smp_ptrs[i] = s;
	}
	prof->n_sample = ps.nstk;
	prof->mapping = map_ptrs;
	prof->function = fn_ptrs;
	prof->location = loc_ptrs;
	prof->sample = smp_ptrs;
	prof->string_table = st->s;
	prof->n_string_table = st->n;
	int rc = pp_pack_write(fd, prof);
	free(maps);
	free(map_ptrs);
	free(fns);
	free(fn_ptrs);
	free(locs);
	free(loc_ptrs);
	free(lines);
	free(line_ptrs);
	free(smp);
	free(smp_ptrs);
	free(vals);
	pp_samp_free(&ps);
	return rc;
}

/* An instrumentation profile's functions, locations (nloc, each of one
 * line) and mappings, and which functions and modules of r it uses. */
struct pp_tables {
	uint8_t *fn_used, *mod_used;
	StintPprof__Function *fns, **fn_ptrs;
	StintPprof__Location *locs, **loc_ptrs;
	StintPprof__Line *lines, **line_ptrs;
	StintPprof__Mapping *maps, **map_ptrs;
};

static void pp_tables_alloc(struct pp_tables *t, const struct an_result *r, uint32_t nloc)
{
	uint32_t nf = r->nfuncs, nm = r->nmods;
	t->fn_used = xcalloc(nf + 1, 1);
	t->mod_used = xcalloc(nm + 1, 1);
	t->fns = xcalloc(nf + 1, sizeof(*t->fns));
	t->fn_ptrs = xcalloc(nf + 1, sizeof(*t->fn_ptrs));
	t->locs = xcalloc(nloc + 1, sizeof(*t->locs));
	t->loc_ptrs = xcalloc(nloc + 1, sizeof(*t->loc_ptrs));
	t->lines = xcalloc(nloc + 1, sizeof(*t->lines));
	t->line_ptrs = xcalloc(nloc + 1, sizeof(*t->line_ptrs));
	t->maps = xcalloc(nm + 1, sizeof(*t->maps));
	t->map_ptrs = xcalloc(nm + 1, sizeof(*t->map_ptrs));
}

static void pp_tables_free(struct pp_tables *t)
{
	free(t->fn_used);
	free(t->mod_used);
	free(t->fns);
	free(t->fn_ptrs);
	free(t->locs);
	free(t->loc_ptrs);
	free(t->lines);
	free(t->line_ptrs);
	free(t->maps);
	free(t->map_ptrs);
}

/* Function fn of r, and its module, are used (fn beyond r's functions: none). */
static void pp_use(struct pp_tables *t, const struct an_result *r, uint32_t fn)
{
	if (fn < r->nfuncs) {
		t->fn_used[fn] = 1;
		t->mod_used[r->funcs[fn].module] = 1;
	}
}

/* One mapping per module of r that used[] marks (id: the module's index +
 * 1), the executable's first: pprof takes the first mapping for the
 * program ("File:", "Build ID:"); r's modules are in the order functions
 * were met, a library's often first. */
static void pp_add_mappings(StintPprof__Profile *prof, struct pp_strings *st, const struct fmt_data *d,
			    const struct an_result *r, const uint8_t *used, StintPprof__Mapping *maps,
			    StintPprof__Mapping **ptrs)
{
	uint32_t main_mod = r->nmods;
	for (uint32_t m = 0; m < r->nmods && main_mod == r->nmods; m++)
		if (used[m] && pp_is_main(d, r->mods[m].path))
			main_mod = m;
	for (uint32_t k = 0; k <= r->nmods; k++) {
		/* k == 0: the executable, then the others in order */
		uint32_t m = k == 0 ? main_mod : k - 1;
		if (m >= r->nmods || !used[m] || (k > 0 && m == main_mod))
			continue;
		StintPprof__Mapping *mp = &maps[prof->n_mapping];
		stint_pprof__mapping__init(mp);
		mp->id = m + 1;
		mp->filename = pp_str(st, r->mods[m].path);
		const struct fmt_module *fm = pp_module(d, r->mods[m].path);
		if (fm) {
			mp->build_id = pp_str(st, fm->build_id);
			mp->memory_start = fm->start;
			mp->memory_limit = fm->end;
			mp->file_offset = fm->offset;
		}
		mp->has_functions = mp->has_filenames = mp->has_line_numbers = 1;
		ptrs[prof->n_mapping++] = mp;
	}
	prof->mapping = ptrs;
}

/* One function per function of r that used[] marks (id: its index + 1). */
static void pp_add_functions(StintPprof__Profile *prof, struct pp_strings *st, const struct an_result *r,
			     const uint8_t *used, StintPprof__Function *fns, StintPprof__Function **ptrs)
{
	for (uint32_t f = 0; f < r->nfuncs; f++) {
		if (!used[f])
			continue;
		const struct an_func *af = &r->funcs[f];
		StintPprof__Function *fp = &fns[prof->n_function];
		stint_pprof__function__init(fp);
		fp->id = f + 1;
		fp->name = pp_fn_label(st, r, f);
		fp->system_name = pp_str(st, af->name);
		fp->filename = pp_str(st, af->file);
		fp->start_line = af->line;
		ptrs[prof->n_function++] = fp;
	}
	prof->function = ptrs;
}

/* Location lp (id) of one line ln (*lnp, the line's pointer slot): a
 * function's line, in a mapping. */
static void pp_line_location(StintPprof__Location *lp, StintPprof__Line *ln, StintPprof__Line **lnp, uint64_t id,
			uint64_t function_id, int64_t line, uint64_t mapping_id)
{
	stint_pprof__line__init(ln);
	ln->function_id = function_id;
	ln->line = line;
	*lnp = ln;
	stint_pprof__location__init(lp);
	lp->id = id;
	lp->mapping_id = mapping_id;
	lp->n_line = 1;
	lp->line = lnp;
}

/* The samples of pp_add_paths, alive until the profile is written. */
struct pp_paths {
	StintPprof__Sample *smp, **ptrs;
	int64_t *vals;
	uint64_t *ids;
};

/*
 * Instrumentation: one sample per node of the path tree t (node 0 its
 * root) whose values x[node] (exclusive elapsed, exclusive application,
 * calls) are not all 0, with the values calls, elapsed, application and
 * as locations the path's nodes' fn + 1, innermost first (fn >= nloc left
 * out).  The locations of all samples grow with the tree, not its square.
 */
static void pp_add_paths(StintPprof__Profile *prof, const struct cct *t, const double (*x)[3], uint32_t nloc,
			 struct pp_paths *pp)
{
	uint32_t n = t->len;
	pp->smp = xcalloc(n + 1, sizeof(*pp->smp));
	pp->ptrs = xcalloc(n + 1, sizeof(*pp->ptrs));
	pp->vals = xcalloc((size_t)(n + 1) * 3, sizeof(*pp->vals));
	size_t nids = 0;
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j && j != ~0u; j = t->n[j].parent)
			nids++;
	pp->ids = xmalloc((nids + 1) * sizeof(*pp->ids));
	size_t used_ids = 0;
	for (uint32_t i = 1; i < n; i++) {
		int64_t *v = &pp->vals[(size_t)prof->n_sample * 3];
		v[0] = pp_round(x[i][2]);
		v[1] = pp_round(x[i][0]);
		v[2] = pp_round(x[i][1]);
		if (!v[0] && !v[1] && !v[2])
			continue;
		StintPprof__Sample *sp = &pp->smp[prof->n_sample];
		stint_pprof__sample__init(sp);
		sp->value = v;
		sp->n_value = prof->n_sample_type;
		sp->location_id = &pp->ids[used_ids];
		for (uint32_t j = i; j && j != ~0u; j = t->n[j].parent)
			if (t->n[j].fn < nloc)
				pp->ids[used_ids + sp->n_location_id++] = t->n[j].fn + 1;
		used_ids += sp->n_location_id;
		pp->ptrs[prof->n_sample++] = sp;
	}
	prof->sample = pp->ptrs;
}

static void pp_paths_free(struct pp_paths *pp)
{
	free(pp->smp);
	free(pp->ptrs);
	free(pp->vals);
	free(pp->ids);
}

/*
 * Instrumentation with call sites, the whole run: one location per place
 * (a function at one of its source lines, analysis/an_lines.h), one sample
 * per path of places with a value: its exclusive times at the line they
 * were charged to, and the calls of the functions entered there, at their
 * first line.  Each caller location is at the line of the call, so pprof
 * -list and -lines show the four values' Elapsed and Application per line.
 */
static int pp_write_instr_lines(int fd, StintPprof__Profile *prof, struct pp_strings *st, const struct fmt_data *d,
				struct an_result *r)
{
	struct an_lines l;
	struct an_lines_opts lo = {.no_compensation = r->compensated_ns == 0, .mode = AN_LINES_PER_FUNCTION,
				   .paths = 1};
	if (an_lines_run(d, r, &lo, &l) < 0)
		return -1;
	uint32_t nf = r->nfuncs, np = l.nplaces;
	struct pp_tables t;
	pp_tables_alloc(&t, r, np);
	for (uint32_t i = 0; i < np; i++)
		pp_use(&t, r, l.place_fn[i]);
	pp_add_mappings(prof, st, d, r, t.mod_used, t.maps, t.map_ptrs);
	pp_add_functions(prof, st, r, t.fn_used, t.fns, t.fn_ptrs);
	for (uint32_t i = 0; i < np; i++) {
		uint32_t f = l.place_fn[i], row = l.place_row[i];
		const struct an_func *af = f < nf ? &r->funcs[f] : NULL;
		/* a line in the function's own file (code of another file,
		 * inlined from a header, at the function's first line) */
		int64_t line = af ? af->line : 0;
		if (row != ~0u && af && (!af->file[0] || strcmp(l.lines[row].file, af->file) == 0))
			line = l.lines[row].line;
		pp_line_location(&t.locs[i], &t.lines[i], &t.line_ptrs[i], i + 1, f + 1, line, af ? af->module + 1 : 0);
		t.loc_ptrs[i] = &t.locs[i];
	}
	prof->n_location = np;
	prof->location = t.loc_ptrs;
	struct pp_paths pp;
	pp_add_paths(prof, &l.paths, (const double(*)[3])l.pv, UINT32_MAX, &pp);
	prof->string_table = st->s;
	prof->n_string_table = st->n;
	int rc = pp_pack_write(fd, prof);
	pp_paths_free(&pp);
	pp_tables_free(&t);
	an_lines_free(&l);
	return rc;
}

/* What a sample's values mean, per method. */
static const struct pp_method {
	const char *type[3][2]; /* the samples' values: name, unit */
	size_t ntypes;
	size_t main;            /* the default type, and the period's */
	const char *comment;
} pp_methods[OUT_NMETHODS] = {
	[OUT_METHOD_INSTRUMENTATION] = {
		{{"calls", "count"}, {"elapsed", "nanoseconds"}, {"application", "nanoseconds"}}, 3, 1,
		"elapsed and application: exclusive time of each call path, probe cost compensated as in stint report",
	},
	[OUT_METHOD_SAMPLING] = {
		{{"samples", "count"}, {"cpu", "nanoseconds"}}, 2, 1,
		"cpu = samples x the sampling period (1 / frequency)",
	},
};

int out_pprof(int fd, const struct an_view *v, const struct fmt_data *d, struct an_result *rw,
	       const struct an_filter *flt)
{
	const struct an_result *r = v->r;
	struct pp_strings st = {0};
	pp_str(&st, ""); /* index 0 must be the empty string */
	StintPprof__Profile prof;
	stint_pprof__profile__init(&prof);

	/* what a sample's values mean */
	StintPprof__ValueType types[3], period_type;
	StintPprof__ValueType *type_ptrs[3] = {&types[0], &types[1], &types[2]};
	const struct out_schema *sch = out_schema_of(v->sampling);
	const struct pp_method *pm = &pp_methods[sch->method];
	/* a sample stands for 1 / frequency of CPU time; instrumentation's values are times */
	double period_ns = sch->unit == OUT_UNIT_SAMPLES && d->rate ? 1e9 / (double)d->rate : 1;
	for (size_t i = 0; i < pm->ntypes; i++)
		pp_type(&types[i], &st, pm->type[i][0], pm->type[i][1]);
	pp_type(&period_type, &st, pm->type[pm->main][0], pm->type[pm->main][1]);
	prof.n_sample_type = pm->ntypes;
	prof.default_sample_type = pp_str(&st, pm->type[pm->main][0]);
	prof.sample_type = type_ptrs;
	prof.period_type = &period_type;
	prof.period = pp_round(period_ns);
	prof.time_nanos = (int64_t)d->wall_start;
	prof.duration_nanos = (int64_t)d->duration_ns;
	int64_t comments[2];
	char *note = xasprintf("stint %s profile of: %s", sch->name, d->command ? d->command : "");
	comments[0] = pp_str(&st, note);
	comments[1] = pp_str(&st, pm->comment);
	prof.comment = comments;
	prof.n_comment = 2;
	/* sampling: from the samples, per address; instrumentation: per line where it can */
	if (v->sampling || out_instr_has_lines(d, flt)) {
		int src = v->sampling ? pp_write_sampling(fd, &prof, &st, d, rw, flt, period_ns)
				      : pp_write_instr_lines(fd, &prof, &st, d, rw);
		pp_strings_free(&st);
		free(note);
		return src;
	}

	/* instrumentation: functions, locations and mappings: one per stint function or module used */
	uint32_t nf = r->nfuncs;
	struct pp_tables t;
	pp_tables_alloc(&t, r, nf);
	for (uint32_t i = 1; i < v->len; i++)
		pp_use(&t, r, v->n[i].fn);
	pp_add_mappings(&prof, &st, d, r, t.mod_used, t.maps, t.map_ptrs);
	pp_add_functions(&prof, &st, r, t.fn_used, t.fns, t.fn_ptrs);
	for (uint32_t f = 0; f < nf; f++) { /* a location per function, at its first line */
		if (!t.fn_used[f])
			continue;
		size_t k = prof.n_location++;
		pp_line_location(&t.locs[k], &t.lines[k], &t.line_ptrs[k], f + 1, f + 1, r->funcs[f].line,
				 r->funcs[f].module + 1);
		t.loc_ptrs[k] = &t.locs[k];
	}
	prof.location = t.loc_ptrs;

	/* one sample per call path with a value, recursion folded */
	struct out_paths fp;
	out_fold_paths(v, &fp);
	struct pp_paths pp;
	pp_add_paths(&prof, &fp.t, (const double(*)[3])fp.x, nf, &pp);
	out_paths_release(&fp);
	prof.string_table = st.s;
	prof.n_string_table = st.n;

	int rc = pp_pack_write(fd, &prof);
	pp_paths_free(&pp);
	pp_tables_free(&t);
	pp_strings_free(&st);
	free(note);
	return rc;
}
#endif /* STINT_HAVE_PPROF */
