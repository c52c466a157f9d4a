/*
 * an_diff.c - matching two runs' functions for `stint diff` (an_diff.h).
 * Both runs' rows get a key, (name, module) or (name, "") for a function of
 * the run's executable, are sorted by it together, and equal neighbours
 * from A and B become one row.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "an_diff.h"
#include "an_view.h"
#include "../format/format.h"

struct diff_key {
	const char *name, *module; /* module "" for the executable's functions */
	const char *file;          /* the defining source file's name, "" unknown */
	int run;                   /* 0: A, 1: B */
	uint32_t index;
};

/* Whether module (a base name) is the executable of one of d's processes. */
static int diff_is_exe(const struct fmt_data *d, const char *module)
{
	for (uint32_t i = 0; i < d->nprocs; i++) {
		const char *slash = strrchr(d->procs[i].exe, '/');
		if (strcmp(slash ? slash + 1 : d->procs[i].exe, module) == 0)
			return 1;
	}
	return 0;
}

static int diff_key_cmp(const void *x, const void *y)
{
	const struct diff_key *p = x, *q = y;
	int c = strcmp(p->name, q->name);
	if (c == 0)
		c = strcmp(p->module, q->module);
	if (c == 0)
		c = p->run - q->run;
	if (c == 0)
		c = strcmp(p->file, q->file);
	if (c == 0)
		c = p->index < q->index ? -1 : p->index > q->index;
	return c;
}

int an_diff_match(const struct fmt_data *da, const struct an_row *ra, uint32_t na, const struct fmt_data *db,
		  const struct an_row *rb, uint32_t nb, struct an_diff_row **out, uint32_t *n)
{
	struct diff_key *keys = malloc(((size_t)na + nb + 1) * sizeof(*keys));
	struct an_diff_row *rows = calloc((size_t)na + nb + 1, sizeof(*rows));
	if (!keys || !rows) {
		free(keys);
		free(rows);
		return -1;
	}
	size_t nk = 0;
	/* (the file by its name: two builds in two directories) */
	for (uint32_t i = 0; i < na; i++)
		keys[nk++] = (struct diff_key){ra[i].name, diff_is_exe(da, ra[i].module) ? "" : ra[i].module,
					      util_file_name(ra[i].file), 0, i};
	for (uint32_t i = 0; i < nb; i++)
		keys[nk++] = (struct diff_key){rb[i].name, diff_is_exe(db, rb[i].module) ? "" : rb[i].module,
					      util_file_name(rb[i].file), 1, i};
	qsort(keys, nk, sizeof(*keys), diff_key_cmp);
	uint32_t m = 0;
	for (size_t g = 0, e; g < nk; g = e) {
		/* a group of one name in one module: A's rows in order, then
		 * B's.  A B row joins the A row of its source file, else the
		 * first A row left (a function that moved to another file, a
		 * build without DWARF); two static functions of one name in two
		 * files stay two */
		size_t nga = 0;
		for (e = g; e < nk && strcmp(keys[e].name, keys[g].name) == 0 &&
			    strcmp(keys[e].module, keys[g].module) == 0;
		     e++)
			nga += keys[e].run == 0;
		uint32_t first_a = m;
		for (size_t k = g; k < e; k++) {
			const struct diff_key *key = &keys[k];
			const struct an_row *src = key->run ? &rb[key->index] : &ra[key->index];
			struct an_diff_row *d = NULL;
			for (int pass = 0; key->run && pass < 2 && !d; pass++)
				for (size_t i = 0; i < nga && !d; i++)
					if (!rows[first_a + i].in_b &&
					    (pass || strcmp(keys[g + i].file, key->file) == 0))
						d = &rows[first_a + i];
			if (!d)
				d = &rows[m++];
			if (!d->in_a && !d->in_b) {
				d->name = src->name;
				d->module = src->module;
				d->file = key->file;
			}
			double *v = key->run ? d->b : d->a;
			memcpy(v, src->v, sizeof(src->v));
			v[AN_NVALUES] = (double)src->calls;
			if (key->run)
				d->in_b = 1;
			else
				d->in_a = 1;
		}
		for (uint32_t i = first_a; m - first_a > 1 && i < m; i++)
			rows[i].same_name = 1;
	}
	free(keys);
	*out = rows;
	*n = m;
	return 0;
}

static int diff_change_cmp(const void *x, const void *y, void *arg)
{
	const struct an_diff_row *p = x, *q = y;
	int key = *(const int *)arg;
	double dp = fabs(p->b[key] - p->a[key]), dq = fabs(q->b[key] - q->a[key]);
	if (dp != dq)
		return dp < dq ? 1 : -1;
	return strcmp(p->name, q->name);
}

void an_diff_sort(struct an_diff_row *rows, uint32_t n, int key)
{
	qsort_r(rows, n, sizeof(*rows), diff_change_cmp, &key);
}

void an_diff_rows(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f,
		  struct an_row **rows, uint32_t *n)
{
	struct an_view v;
	an_view_build(d, r, f, &v);
	an_view_functions(&v, rows, n);
	if (r->sampling) /* as percentages of the selection's samples */
		for (uint32_t i = 0; i < *n; i++)
			for (int k = 0; k < 2; k++)
				(*rows)[i].v[k] = v.total[AN_EI] > 0 ? 100.0 * (*rows)[i].v[k] / v.total[AN_EI] : 0;
	an_view_release(&v);
}
