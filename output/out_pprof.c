/*
 * out_pprof.c - a view as pprof's profile: perftools.profiles.Profile
 * (out_pprof.proto, encoded by the C that protoc-c generates from it at
 * build time), gzipped as pprof expects.
 *
 * pprof knows samples, not trees: each call path with a value becomes one
 * sample whose locations are the path, leaf first, and whose values are
 * the path's exclusive ones.  Recursion is folded first (out_fold_paths):
 * a path of 200,000 recursive calls would otherwise be written, and held
 * in memory, once for each of its 200,000 prefixes.  pprof then sums a function's "flat" over the
 * samples it is the leaf of and its "cum" over the samples it is anywhere
 * in, counting a recursive function once per sample: exactly stint's
 * exclusive and inclusive values (an inclusive value of a path is the sum
 * of the exclusive values below it).
 *
 * stint keeps functions, not addresses, in its trees, so there is one
 * location per function (address 0, its first line), one function per
 * stint function and one mapping per module, marked as already symbolized
 * so that pprof does not look for the binaries.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "out_export.h"
#include "out_pprof.pb-c.h"

/* The string table, with a hash for interning. */
struct pp_strings {
	char **s;
	size_t n, cap;
	uint32_t *hash, hcap;
};

static uint64_t pp_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* The index of s, added if new (pointers are kept, not copied). */
static int64_t pp_str(struct pp_strings *t, const char *s)
{
	if (!s)
		s = "";
	if ((t->n + 1) * 2 > t->hcap) {
		uint32_t ncap = t->hcap ? t->hcap * 2 : 256;
		uint32_t *nh = malloc(ncap * sizeof(*nh));
		if (!nh)
			abort();
		memset(nh, 0xff, ncap * sizeof(*nh));
		for (size_t i = 0; i < t->n; i++) {
			uint32_t k = (uint32_t)pp_hash(t->s[i]) & (ncap - 1);
			while (nh[k] != ~0u)
				k = (k + 1) & (ncap - 1);
			nh[k] = (uint32_t)i;
		}
		free(t->hash);
		t->hash = nh;
		t->hcap = ncap;
	}
	uint32_t k = (uint32_t)pp_hash(s) & (t->hcap - 1);
	while (t->hash[k] != ~0u) {
		if (strcmp(t->s[t->hash[k]], s) == 0)
			return t->hash[k];
		k = (k + 1) & (t->hcap - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->s = realloc(t->s, t->cap * sizeof(*t->s));
		if (!t->s)
			abort();
	}
	t->s[t->n] = (char *)s; /* protobuf-c wants char *; never written */
	t->hash[k] = (uint32_t)t->n;
	return (int64_t)t->n++;
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

int out_pprof(int fd, const struct an_view *v, const struct fmt_data *d)
{
	const struct an_result *r = v->r;
	struct pp_strings st = {0};
	pp_str(&st, ""); /* index 0 must be the empty string */
	StintPprof__Profile prof;
	stint_pprof__profile__init(&prof);

	/* what a sample's values mean */
	StintPprof__ValueType types[3], period_type;
	StintPprof__ValueType *type_ptrs[3] = {&types[0], &types[1], &types[2]};
	double period_ns = v->sampling && d->rate ? 1e9 / (double)d->rate : 1;
	if (v->sampling) {
		pp_type(&types[0], &st, "samples", "count");
		pp_type(&types[1], &st, "cpu", "nanoseconds");
		pp_type(&period_type, &st, "cpu", "nanoseconds");
		prof.n_sample_type = 2;
		prof.default_sample_type = pp_str(&st, "cpu");
	} else {
		pp_type(&types[0], &st, "calls", "count");
		pp_type(&types[1], &st, "elapsed", "nanoseconds");
		pp_type(&types[2], &st, "application", "nanoseconds");
		pp_type(&period_type, &st, "elapsed", "nanoseconds");
		prof.n_sample_type = 3;
		prof.default_sample_type = pp_str(&st, "elapsed");
	}
	prof.sample_type = type_ptrs;
	prof.period_type = &period_type;
	prof.period = pp_round(period_ns);
	prof.time_nanos = (int64_t)d->wall_start;
	prof.duration_nanos = (int64_t)d->duration_ns;
	int64_t comments[2];
	char *note = NULL;
	if (asprintf(&note, "stint %s profile of: %s", v->sampling ? "sampling" : "instrumentation",
		     d->command ? d->command : "") < 0)
		abort();
	comments[0] = pp_str(&st, note);
	comments[1] = pp_str(&st, v->sampling ? "cpu = samples x the sampling period (1 / frequency)"
					      : "elapsed and application: exclusive time of each call path, "
						"probe cost compensated as in stint report");
	prof.comment = comments;
	prof.n_comment = 2;

	/* functions, locations and mappings: one per stint function or module used */
	uint32_t nf = r->nfuncs, nm = r->nmods;
	uint8_t *fn_used = calloc(nf + 1, 1), *mod_used = calloc(nm + 1, 1);
	StintPprof__Function *fns = calloc(nf + 1, sizeof(*fns));
	StintPprof__Function **fn_ptrs = calloc(nf + 1, sizeof(*fn_ptrs));
	StintPprof__Location *locs = calloc(nf + 1, sizeof(*locs));
	StintPprof__Location **loc_ptrs = calloc(nf + 1, sizeof(*loc_ptrs));
	StintPprof__Line *lines = calloc(nf + 1, sizeof(*lines));
	StintPprof__Line **line_ptrs = calloc(nf + 1, sizeof(*line_ptrs));
	StintPprof__Mapping *maps = calloc(nm + 1, sizeof(*maps));
	StintPprof__Mapping **map_ptrs = calloc(nm + 1, sizeof(*map_ptrs));
	if (!fn_used || !mod_used || !fns || !fn_ptrs || !locs || !loc_ptrs || !lines || !line_ptrs ||
	    !maps || !map_ptrs)
		abort();
	for (uint32_t i = 1; i < v->len; i++)
		if (v->n[i].fn < nf) {
			fn_used[v->n[i].fn] = 1;
			mod_used[r->funcs[v->n[i].fn].module] = 1;
		}
	for (uint32_t m = 0; m < nm; m++) {
		if (!mod_used[m])
			continue;
		StintPprof__Mapping *mp = &maps[prof.n_mapping];
		stint_pprof__mapping__init(mp);
		mp->id = m + 1;
		mp->filename = pp_str(&st, r->mods[m].path);
		const struct fmt_module *fm = pp_module(d, r->mods[m].path);
		if (fm) {
			mp->build_id = pp_str(&st, fm->build_id);
			mp->memory_start = fm->start;
			mp->memory_limit = fm->end;
			mp->file_offset = fm->offset;
		}
		mp->has_functions = mp->has_filenames = mp->has_line_numbers = 1;
		map_ptrs[prof.n_mapping++] = mp;
	}
	for (uint32_t f = 0; f < nf; f++) {
		if (!fn_used[f])
			continue;
		const struct an_func *af = &r->funcs[f];
		StintPprof__Function *fp = &fns[prof.n_function];
		stint_pprof__function__init(fp);
		fp->id = f + 1;
		fp->name = fp->system_name = pp_str(&st, af->name);
		fp->filename = pp_str(&st, af->file);
		fp->start_line = af->line;
		fn_ptrs[prof.n_function++] = fp;
		StintPprof__Line *ln = &lines[prof.n_location];
		stint_pprof__line__init(ln);
		ln->function_id = f + 1;
		ln->line = af->line;
		line_ptrs[prof.n_location] = ln;
		StintPprof__Location *lp = &locs[prof.n_location];
		stint_pprof__location__init(lp);
		lp->id = f + 1;
		lp->mapping_id = af->module + 1;
		lp->n_line = 1;
		lp->line = &line_ptrs[prof.n_location];
		loc_ptrs[prof.n_location++] = lp;
	}
	prof.function = fn_ptrs;
	prof.location = loc_ptrs;
	prof.mapping = map_ptrs;

	/* one sample per call path with a value, recursion folded: the
	 * locations of all samples grow with the data, not its square */
	struct out_paths fp;
	if (out_fold_paths(v, &fp) < 0)
		abort();
	uint32_t np = fp.t.len;
	StintPprof__Sample *smp = calloc(np + 1, sizeof(*smp));
	StintPprof__Sample **smp_ptrs = calloc(np + 1, sizeof(*smp_ptrs));
	int64_t *vals = calloc((size_t)(np + 1) * 3, sizeof(*vals));
	size_t nids = 0;
	for (uint32_t i = 1; i < np; i++)
		for (uint32_t j = i; j && j != ~0u; j = fp.t.n[j].parent)
			nids++;
	uint64_t *ids = malloc((nids + 1) * sizeof(*ids));
	if (!smp || !smp_ptrs || !vals || !ids)
		abort();
	size_t used_ids = 0;
	for (uint32_t i = 1; i < np; i++) {
		const double *fx = fp.x[i];
		int64_t *x = &vals[(size_t)prof.n_sample * 3];
		if (v->sampling) {
			x[0] = pp_round(fx[0]);
			x[1] = pp_round(fx[0] * period_ns);
			if (!x[0])
				continue;
		} else {
			x[0] = pp_round(fx[2]);
			x[1] = pp_round(fx[0]);
			x[2] = pp_round(fx[1]);
			if (!x[0] && !x[1] && !x[2])
				continue;
		}
		StintPprof__Sample *s = &smp[prof.n_sample];
		stint_pprof__sample__init(s);
		s->value = x;
		s->n_value = prof.n_sample_type;
		s->location_id = &ids[used_ids];
		for (uint32_t j = i; j && j != ~0u; j = fp.t.n[j].parent)
			if (fp.t.n[j].fn < nf)
				ids[used_ids + s->n_location_id++] = fp.t.n[j].fn + 1;
		used_ids += s->n_location_id;
		smp_ptrs[prof.n_sample++] = s;
	}
	out_paths_release(&fp);
	prof.sample = smp_ptrs;
	prof.string_table = st.s;
	prof.n_string_table = st.n;

	int rc = -1;
	size_t len = stint_pprof__profile__get_packed_size(&prof);
	uint8_t *buf = malloc(len + 1);
	if (!buf)
		abort();
	stint_pprof__profile__pack(&prof, buf);
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
	free(ids);
	free(vals);
	free(smp);
	free(smp_ptrs);
	free(fn_used);
	free(mod_used);
	free(fns);
	free(fn_ptrs);
	free(locs);
	free(loc_ptrs);
	free(lines);
	free(line_ptrs);
	free(maps);
	free(map_ptrs);
	free(st.s);
	free(st.hash);
	free(note);
	return rc;
}
