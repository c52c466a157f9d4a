/*
 * out_tree.c - the call tree (with its hot path) and the callers/callees
 * butterfly, as text or JSON, for both methods.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out_tree.h"
#include "output.h"
#include "out_schema.h"
#include "../lib/util.h"

struct kid_key {
	double v;
	uint32_t pos, node;
};

/* Largest first; equal ones in their list order (a stable sort). */
static int kid_cmp(const void *a, const void *b)
{
	const struct kid_key *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Children of node i, hottest (largest inclusive) first.  qsort: a node
 * of a hostile file may have hundreds of thousands of children. */
static uint32_t sorted_children(const struct an_view *v, uint32_t i, uint32_t **out)
{
	uint32_t n = 0;
	for (uint32_t c = v->n[i].child; c; c = v->n[c].next)
		n++;
	uint32_t *a = xmalloc((n + 1) * sizeof(*a));
	struct kid_key *k = xmalloc((n + 1) * sizeof(*k));
	n = 0;
	for (uint32_t c = v->n[i].child; c; c = v->n[c].next, n++)
		k[n] = (struct kid_key){v->n[c].v[AN_EI], n, c};
	qsort(k, n, sizeof(*k), kid_cmp);
	for (uint32_t x = 0; x < n; x++)
		a[x] = k[x].node;
	free(k);
	*out = a;
	return n;
}

static void text_values(FILE *f, const struct an_view *v, const struct cct_node *n)
{
	const struct out_schema *s = out_schema_of(v->sampling);
	char t[32];
	if (s->calls)
		fprintf(f, "%10" PRIu64 " ", n->calls);
	for (int c = 0; c < s->ncols; c++) {
		const struct out_column *k = &s->cols[c];
		if (!k->tree_pct_only) {
			out_fmt_value(s, t, sizeof(t), n->v[k->v]);
			fprintf(f, "%*s ", s->tree_value_width, t);
		}
		fprintf(f, "%6.2f ", out_pct(n->v[k->v], v->total[k->denom]));
	}
	fputc(' ', f);
}

/* The columns text_values() takes. */
static int text_values_width(const struct an_view *v)
{
	const struct out_schema *s = out_schema_of(v->sampling);
	int w = (s->calls ? 11 : 0) + 1;
	for (int c = 0; c < s->ncols; c++)
		w += (s->cols[c].tree_pct_only ? 0 : s->tree_value_width + 1) + 7;
	return w;
}

/* The headings of text_values()' columns, or (blank) as many spaces. */
static void text_columns(FILE *f, const struct an_view *v, int blank)
{
	const struct out_schema *s = out_schema_of(v->sampling);
	char t[32];
	if (s->calls)
		fprintf(f, "%10s ", blank ? "" : "Calls");
	for (int c = 0; c < s->ncols; c++) {
		const struct out_column *k = &s->cols[c];
		if (!k->tree_pct_only)
			fprintf(f, "%*s ", s->tree_value_width, blank ? "" : k->abbrev);
		snprintf(t, sizeof(t), "%s%%", k->tree_pct_only ? k->abbrev : "");
		fprintf(f, "%6s ", blank ? "" : t);
	}
	fputc(' ', f);
}

static void text_header(FILE *f, const struct an_view *v, const char *what)
{
	text_columns(f, v, 0);
	fprintf(f, "%s\n", what);
}

struct tree_ctx {
	FILE *f;
	const struct an_view *v;
	double threshold;  /* percent of the total inclusive */
	int hot_only;
	uint64_t folded;   /* nodes not shown */
};

static void json_values(FILE *f, const struct an_view *v, const struct cct_node *n)
{
	out_json_values(f, out_schema_of(v->sampling), n->calls, n->v, v->total);
}

/* The body of a quoted CSV field: quotes doubled, bytes that are not UTF-8 as U+FFFD. */
static void csv_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		size_t n = util_utf8_len(s);
		if (n == 0)
			fputs("\xef\xbf\xbd", f); /* not UTF-8: U+FFFD */
		else {
			fwrite(s, 1, n, f);
			s += n - 1;
		}
	}
}

static void csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	csv_text(f, s);
	fputc('"', f);
}

static void csv_values(FILE *f, const struct an_view *v, const struct cct_node *n)
{
	out_csv_values(f, out_schema_of(v->sampling), n->calls, n->v, v->total, 0);
	fputc('\n', f);
}

/* The CSV header: the columns that say what a row is about, then the values'. */
static void csv_header(FILE *f, const struct an_view *v, const char *key_columns)
{
	fputs(key_columns, f);
	out_csv_values_header(f, out_schema_of(v->sampling), 0);
	fputc('\n', f);
}

/*
 * The walk every tree format shares: depth first with an explicit stack
 * (the recursion of a profiled program makes trees as deep as its own
 * stack was, 200,000 levels and more), the children of each node hottest
 * first, those below the threshold (or off the hot path) left out.
 */
enum { TREE_TEXT, TREE_JSON, TREE_CSV };

/* text rows indent one step per level up to this depth, then say the depth */
#define TREE_MAX_INDENT 64
/* CSV paths longer than this many frames show the first and last ones */
#define TREE_PATH_HEAD 16
#define TREE_PATH_TAIL 47

struct tree_frame {
	uint32_t node;
	uint32_t *kids, nk, k;
	int hot;
	int first;         /* JSON: no child written yet */
	uint32_t hidden;   /* children left out */
	double hidden_v;
};

static void text_enter(struct tree_ctx *c, const struct tree_frame *fr, uint32_t depth)
{
	const struct an_view *v = c->v;
	const struct cct_node *n = &v->n[fr->node];
	text_values(c->f, v, n);
	for (uint32_t d = 0; d < depth && d < TREE_MAX_INDENT; d++)
		fputs("  ", c->f);
	if (depth > TREE_MAX_INDENT) /* deeper: the indentation would grow with the square */
		fprintf(c->f, "(depth %u) ", depth);
	char lb[4300];
	fprintf(c->f, "%s%s " OUT_MOD_FMT "\n", fr->hot ? "* " : "", an_func_label(v->r, n->fn, lb, sizeof(lb)),
		OUT_MOD_ARGS(v->r->mods[v->r->funcs[n->fn].module].base));
}

static void text_leave(struct tree_ctx *c, const struct tree_frame *fr, uint32_t depth)
{
	const struct an_view *v = c->v;
	if (!fr->hidden)
		return;
	c->folded += fr->hidden;
	text_columns(c->f, v, 1);
	for (uint32_t d = 0; d <= depth && d < TREE_MAX_INDENT; d++)
		fputs("  ", c->f);
	if (depth + 1 > TREE_MAX_INDENT)
		fprintf(c->f, "(depth %u) ", depth + 1);
	fprintf(c->f, "(%u more call path%s, %.2f%% in all)\n", fr->hidden, fr->hidden == 1 ? "" : "s",
		out_pct(fr->hidden_v, v->total[AN_EI]));
}

static void json_enter(struct tree_ctx *c, const struct tree_frame *fr)
{
	const struct an_view *v = c->v;
	const struct cct_node *n = &v->n[fr->node];
	fputs("{\"name\":", c->f);
	out_json_str(c->f, v->r->funcs[n->fn].name);
	fputs(",\"module\":", c->f);
	out_json_str(c->f, v->r->mods[v->r->funcs[n->fn].module].base);
	json_values(c->f, v, n);
	if (c->hot_only)
		fprintf(c->f, ",\"hot\":%s", fr->hot ? "true" : "false");
	fputs(",\"children\":[", c->f);
}

/* One CSV row: depth, the path (names joined by ';'), module, values. */
static void csv_enter(struct tree_ctx *c, const struct tree_frame *st, uint32_t sp)
{
	const struct an_view *v = c->v;
	const struct cct_node *n = &v->n[st[sp - 1].node];
	fprintf(c->f, "%u,\"", sp - 1);
	for (uint32_t i = 0; i < sp; i++) {
		if (sp > TREE_PATH_HEAD + TREE_PATH_TAIL && i == TREE_PATH_HEAD) {
			fprintf(c->f, ";...%u frames...", sp - TREE_PATH_HEAD - TREE_PATH_TAIL);
			i = sp - TREE_PATH_TAIL - 1;
			continue;
		}
		if (i)
			fputc(';', c->f);
		csv_text(c->f, v->r->funcs[v->n[st[i].node].fn].name);
	}
	fputs("\",", c->f);
	csv_field(c->f, v->r->mods[v->r->funcs[n->fn].module].base);
	csv_values(c->f, v, n);
}

static void tree_walk(struct tree_ctx *c, uint32_t root, int hot, int format)
{
	const struct an_view *v = c->v;
	uint32_t cap = 64, sp = 0;
	struct tree_frame *st = xmalloc(cap * sizeof(*st));
	st[sp++] = (struct tree_frame){.node = root, .hot = hot, .first = 1};
	for (;;) {
		struct tree_frame *fr = &st[sp - 1];
		if (!fr->kids) { /* entering the node */
			fr->nk = sorted_children(v, fr->node, &fr->kids);
			if (format == TREE_TEXT)
				text_enter(c, fr, sp - 1);
			else if (format == TREE_JSON)
				json_enter(c, fr);
			else
				csv_enter(c, st, sp);
		}
		if (fr->k < fr->nk) {
			uint32_t idx = fr->k++, ch = fr->kids[idx];
			int is_hot = fr->hot && idx == 0;
			if ((c->hot_only && !is_hot) || out_pct(v->n[ch].v[AN_EI], v->total[AN_EI]) < c->threshold) {
				fr->hidden++;
				fr->hidden_v += v->n[ch].v[AN_EI];
				continue;
			}
			if (format == TREE_JSON && !fr->first)
				fputc(',', c->f);
			fr->first = 0;
			if (sp == cap) {
				cap *= 2;
				st = xrealloc(st, cap * sizeof(*st));
			}
			st[sp++] = (struct tree_frame){.node = ch, .hot = is_hot, .first = 1};
			continue;
		}
		/* leaving the node */
		if (format == TREE_TEXT)
			text_leave(c, fr, sp - 1);
		else if (format == TREE_JSON) {
			c->folded += fr->hidden;
			fputs("]}", c->f);
		}
		free(fr->kids);
		if (--sp == 0)
			break;
	}
	free(st);
}

void out_tree(FILE *f, const struct an_view *v, double threshold, int hot_path, int format)
{
	struct tree_ctx c = {f, v, threshold, hot_path, 0};
	uint32_t *roots;
	uint32_t nr = sorted_children(v, 0, &roots);
	if (format == TREE_CSV) {
		csv_header(f, v, "depth,path,module");
		for (uint32_t k = 0; k < nr; k++)
			if (!(hot_path && k) && out_pct(v->n[roots[k]].v[AN_EI], v->total[AN_EI]) >= threshold)
				tree_walk(&c, roots[k], hot_path && k == 0, TREE_CSV);
	} else if (format == TREE_JSON) {
		fprintf(f, "{\"method\":\"%s\",\"threshold_pct\":%g,\"hot_path\":%s,\"roots\":[",
			out_schema_of(v->sampling)->name, threshold, hot_path ? "true" : "false");
		int first = 1;
		for (uint32_t k = 0; k < nr; k++) {
			if ((hot_path && k) || out_pct(v->n[roots[k]].v[AN_EI], v->total[AN_EI]) < threshold) {
				c.folded++;
				continue;
			}
			if (!first)
				fputc(',', f);
			first = 0;
			tree_walk(&c, roots[k], hot_path && k == 0, TREE_JSON);
		}
		fprintf(f, "],\"paths_not_shown\":%" PRIu64 "}\n", c.folded);
	} else {
		text_header(f, v, "Call tree");
		for (uint32_t k = 0; k < nr; k++) {
			if ((hot_path && k) || out_pct(v->n[roots[k]].v[AN_EI], v->total[AN_EI]) < threshold) {
				c.folded++;
				continue;
			}
			tree_walk(&c, roots[k], hot_path && k == 0, TREE_TEXT);
		}
		if (hot_path)
			fputs("\n(* marks the hot path: the hottest call at each level)\n", f);
		else if (c.folded)
			fprintf(f, "\n(call paths below %.2f%% of the total are folded; --threshold 0 shows all)\n",
				threshold);
	}
	free(roots);
}


static void butterfly_rows(FILE *f, const struct an_view *v, const char *title, struct an_row *rows,
			   uint32_t n, const struct an_row *self, int json, int *first_section, int width)
{
	/* by inclusive value, largest first, ties in their order (stable) */
	struct kid_key *k = xmalloc((n + 1) * sizeof(*k));
	struct an_row *sorted = xmalloc((n + 1) * sizeof(*sorted));
	for (uint32_t x = 0; x < n; x++)
		k[x] = (struct kid_key){rows[x].v[AN_EI], x, x};
	qsort(k, n, sizeof(*k), kid_cmp);
	for (uint32_t x = 0; x < n; x++)
		sorted[x] = rows[k[x].node];
	if (n)
		memcpy(rows, sorted, n * sizeof(*rows));
	free(k);
	free(sorted);
	if (json) {
		fprintf(f, "%s\"%s\":[", *first_section ? "" : ",", title);
		*first_section = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct cct_node tmp = {0};
			tmp.calls = rows[i].calls;
			memcpy(tmp.v, rows[i].v, sizeof(tmp.v));
			fputs(i ? ",{\"name\":" : "{\"name\":", f);
			out_json_str(f, rows[i].name);
			fputs(",\"module\":", f);
			out_json_str(f, rows[i].module);
			json_values(f, v, &tmp);
			if (self && self->v[AN_EI] > 0)
				fprintf(f, ",\"share_pct\":%.4f", out_pct(rows[i].v[AN_EI], self->v[AN_EI]));
			fputc('}', f);
		}
		fputs("]", f);
		return;
	}
	fprintf(f, "\n%s:\n", title);
	for (uint32_t i = 0; i < n; i++) {
		struct cct_node tmp = {0};
		tmp.calls = rows[i].calls;
		memcpy(tmp.v, rows[i].v, sizeof(tmp.v));
		text_values(f, v, &tmp);
		int used = text_values_width(v);
		if (self && self->v[AN_EI] > 0) {
			fprintf(f, "%5.1f%% of it  ", out_pct(rows[i].v[AN_EI], self->v[AN_EI]));
			used += 14;
		}
		char lb[4300];
		const char *nm = rows[i].func < v->r->nfuncs && strcmp(v->r->funcs[rows[i].func].name, rows[i].name) == 0
					 ? an_func_label(v->r, rows[i].func, lb, sizeof(lb))
					 : rows[i].name;
		char *label = xasprintf("%s " OUT_MOD_FMT, nm, OUT_MOD_ARGS(rows[i].module));
		out_put_label(f, width, used, label);
		free(label);
	}
	if (!n)
		fputs("  (none)\n", f);
}

void out_butterfly(FILE *f, const struct an_view *v, uint32_t fn, int callees_first, int format, int width)
{
	int json = format == 1;
	struct an_row *callers, *callees, self;
	uint32_t ncallers, ncallees;
	an_view_callers(v, fn, &callers, &ncallers, &self);
	an_view_callees(v, fn, &callees, &ncallees);
	if (format == 2) {
		csv_header(f, v, "relation,name,module");
		for (int part = 0; part < 3; part++) {
			const struct an_row *rows = part == 0 ? &self : part == 1 ? callers : callees;
			uint32_t n = part == 0 ? 1 : part == 1 ? ncallers : ncallees;
			for (uint32_t i = 0; i < n; i++) {
				struct cct_node tmp = {0};
				tmp.calls = rows[i].calls;
				memcpy(tmp.v, rows[i].v, sizeof(tmp.v));
				fputs(part == 0 ? "function," : part == 1 ? "caller," : "callee,", f);
				csv_field(f, rows[i].name);
				fputc(',', f);
				csv_field(f, rows[i].module);
				csv_values(f, v, &tmp);
			}
		}
		free(callers);
		free(callees);
		return;
	}
	int first = 1;
	if (json) {
		fputs("{\"function\":{\"name\":", f);
		out_json_str(f, self.name);
		fputs(",\"module\":", f);
		out_json_str(f, self.module);
		struct cct_node tmp = {0};
		tmp.calls = self.calls;
		memcpy(tmp.v, self.v, sizeof(tmp.v));
		json_values(f, v, &tmp);
		fputs("},", f);
	} else {
		char lb[4300];
		const char *nm = self.func < v->r->nfuncs && strcmp(v->r->funcs[self.func].name, self.name) == 0
					 ? an_func_label(v->r, self.func, lb, sizeof(lb))
					 : self.name;
		fprintf(f, "# %s " OUT_MOD_FMT "\n", nm, OUT_MOD_ARGS(self.module));
		text_header(f, v, "Function");
		struct cct_node tmp = {0};
		tmp.calls = self.calls;
		memcpy(tmp.v, self.v, sizeof(tmp.v));
		text_values(f, v, &tmp);
		char *label = xasprintf("%s (the function itself)", self.name);
		out_put_label(f, width, text_values_width(v), label);
		free(label);
	}
	if (callees_first) {
		butterfly_rows(f, v, "callees", callees, ncallees, &self, json, &first, width);
		butterfly_rows(f, v, "callers", callers, ncallers, &self, json, &first, width);
	} else {
		butterfly_rows(f, v, "callers", callers, ncallers, &self, json, &first, width);
		butterfly_rows(f, v, "callees", callees, ncallees, &self, json, &first, width);
	}
	if (json)
		fputs("}\n", f);
	else
		fputs("\n(callers: the function's values under each caller; callees: each callee's values "
		      "under the function)\n",
		      f);
	free(callers);
	free(callees);
}
