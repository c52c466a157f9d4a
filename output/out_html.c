/*
 * out_html.c - `stint html`: one HTML file holding the page's CSS and
 * JavaScript (output/html/, embedded at build time as out_html_assets.h)
 * and the profile as JSON in a <script type="application/json"> block.
 * Nothing in the file refers to another file or address, so it opens
 * offline.
 *
 * Large trees: the flame graph gets at most max_nodes nodes.  Call paths
 * whose inclusive value is below min_share percent of the total, and then,
 * if still too many, the smallest ones, are folded: the folded children of
 * one parent become a single "(other)" node holding their sums and how
 * many call paths it stands for.  The page says what was folded.  Tables
 * and callers/callees are computed here over the whole, unpruned view.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "out_html.h"
#include "output.h"
#include "out_schema.h"
#include "../lib/util.h"
#include "out_html_assets.h"

/* ------------------------------------------------------------------------
 * JSON pieces
 * --------------------------------------------------------------------- */

/* A JSON string that is also safe inside <script>: '<', '>' and '&' escaped
 * (and, as everywhere, bytes that are not UTF-8 written as U+FFFD). */
static void hj_str(FILE *f, const char *s)
{
	out_json_text(f, s, 1);
}

static void hj_key_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, ",\"%s\":", key);
	hj_str(f, s);
}

enum { HJ_FUNCTION, HJ_MODULE, HJ_THREAD, HJ_PROCESS, HJ_SESSION };

/* One row with the keys of `stint report --format json`, plus "f" for functions. */
static void hj_row(FILE *f, const struct an_result *r, const struct an_view *v, const struct an_row *row,
		   int kind)
{
	fputs("{\"name\":", f);
	hj_str(f, row->name);
	hj_key_str(f, "module", row->module);
	const struct out_schema *s = out_schema_of(v->sampling);
	out_json_values(f, s, row->calls, row->v, v->total);
	if (kind == HJ_FUNCTION)
		out_json_per_call(f, s, row->calls, row->callsum, row->vmin, row->vmax);
	if (kind == HJ_FUNCTION && row->func < r->nfuncs) {
		hj_key_str(f, "file", r->funcs[row->func].file);
		fprintf(f, ",\"line\":%u,\"f\":%u", r->funcs[row->func].line, row->func);
	}
	if (kind == HJ_THREAD)
		fprintf(f, ",\"tid\":%u,\"pid\":%u", row->tid, row->pid);
	if (kind == HJ_PROCESS) {
		fprintf(f, ",\"pid\":%u", row->pid);
		hj_key_str(f, "command", row->extra);
	}
	fputc('}', f);
}

static void hj_rows(FILE *f, const struct an_result *r, const struct an_view *v, const char *key,
		    const struct an_row *rows, uint32_t n, int kind)
{
	fprintf(f, ",\n\"%s\":[", key);
	for (uint32_t i = 0; i < n; i++) {
		fputs(i ? ",\n" : "\n", f);
		hj_row(f, r, v, &rows[i], kind);
	}
	fputs("]", f);
}

/* The value of key in d->notes ("key=value key2=value2"), or "0". */
static void hj_note(FILE *f, const char *notes, const char *key)
{
	size_t l = strlen(key);
	for (const char *p = notes; p && *p;) {
		if (strncmp(p, key, l) == 0 && p[l] == '=') {
			const char *val = p + l + 1, *e = strchrnul(val, ' ');
			char *end;
			double x = strtod(val, &end);
			if (end == e && end != val && isfinite(x) && x >= 0) {
				fprintf(f, "%.0f", x);
				return;
			}
			break;
		}
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	fputc('0', f);
}

/* The sources of the per-line panel: a file is read once. */
#define HJ_SOURCE_MAX ((size_t)16 << 20) /* the largest source file read */
#define HJ_SPAN_MAX 2000                 /* most lines shown of one function */
struct hj_src {
	const char *path;
	char *text;          /* NULL: not readable */
	const char **line;   /* line[i]: start of line i + 1 */
	uint32_t nline;
};

static struct hj_src *hj_source(struct hj_src **v, uint32_t *n, const char *path)
{
	for (uint32_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].path, path) == 0)
			return &(*v)[i];
	struct hj_src *grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return NULL;
	*v = grown;
	struct hj_src *s = &grown[(*n)++];
	memset(s, 0, sizeof(*s));
	s->path = path;
	size_t len = 0;
	/* a name from the data file: a regular file of a sane size only */
	s->text = util_read_source(path, HJ_SOURCE_MAX, &len);
	if (!s->text)
		return s;
	for (size_t i = 0; i < len; i++)
		s->nline += s->text[i] == '\n';
	s->nline++;
	s->line = malloc(s->nline * sizeof(*s->line));
	if (!s->line) {
		free(s->text);
		s->text = NULL;
		return s;
	}
	uint32_t k = 0;
	s->line[k++] = s->text;
	for (size_t i = 0; i < len; i++)
		if (s->text[i] == '\n') {
			s->text[i] = 0;
			if (k < s->nline)
				s->line[k++] = s->text + i + 1;
		}
	s->nline = k;
	return s;
}

static const struct an_lines *hj_sort_lines;
static int hj_line_cmp(const void *a, const void *b)
{
	const struct an_line_row *x = &hj_sort_lines->lines[*(const uint32_t *)a];
	const struct an_line_row *y = &hj_sort_lines->lines[*(const uint32_t *)b];
	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * "lines": per function (by its index) the source file of its code and,
 * per line from the first to the last with a value, [line, calls, EI, EE,
 * AI, AE, text] (text null where the source could not be read), the
 * values of the function's own code and of the calls made on the line.
 */
/* One row of a function's source lines: [line, calls, values..., text]. */
static void hj_line_row(FILE *f, uint32_t ln, const struct an_line_row *x, const struct hj_src *sf, uint32_t *shown)
{
	fprintf(f, "%s[%u,%" PRIu64, (*shown)++ ? "," : "", ln, x ? x->row.calls : 0);
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, ",%.0f", x ? x->row.v[k] : 0.0);
	fputc(',', f);
	if (sf && sf->text && ln >= 1 && ln <= sf->nline)
		hj_str(f, sf->line[ln - 1]);
	else
		fputs("null", f);
	fputc(']', f);
}

static int hj_lines_json(FILE *f, const struct an_result *r, const struct an_lines *l)
{
	uint32_t *ord = malloc((l->nlines + 1) * sizeof(*ord)), n = 0, nsrc = 0;
	struct hj_src *src = NULL;
	if (!ord)
		return -1;
	for (uint32_t i = 0; i < l->nlines; i++)
		if (!an_line_row_empty(&l->lines[i]) && l->lines[i].fn < r->nfuncs)
			ord[n++] = i;
	hj_sort_lines = l;
	qsort(ord, n, sizeof(*ord), hj_line_cmp);
	fputs(",\n\"lines\":{", f);
	int first_fn = 1;
	for (uint32_t a = 0; a < n;) {
		uint32_t fn = l->lines[ord[a]].fn, b = a;
		while (b < n && l->lines[ord[b]].fn == fn)
			b++;
		/* the function's own file (inlined code of other files is left out) */
		const char *file = r->funcs[fn].file && r->funcs[fn].file[0] ? r->funcs[fn].file : l->lines[ord[a]].file;
		uint32_t lo = UINT32_MAX, hi = 0;
		for (uint32_t i = a; i < b; i++)
			if (strcmp(l->lines[ord[i]].file, file) == 0) {
				uint32_t ln = l->lines[ord[i]].line;
				lo = ln < lo ? ln : lo;
				hi = ln > hi ? ln : hi;
			}
		if (lo == UINT32_MAX) {
			a = b;
			continue;
		}
		if (r->funcs[fn].line && r->funcs[fn].line < lo && lo - r->funcs[fn].line < HJ_SPAN_MAX / 2)
			lo = r->funcs[fn].line;
		struct hj_src *sf = hj_source(&src, &nsrc, file);
		int span = hi - lo < HJ_SPAN_MAX && sf && sf->text;
		fprintf(f, "%s\n\"%u\":{\"file\":", first_fn ? "" : ",", fn);
		first_fn = 0;
		hj_str(f, file);
		fputs(",\"rows\":[", f);
		uint32_t shown = 0;
		if (span) {
			/* (64 bits: hi may be the largest line number) */
			uint32_t i = a;
			for (uint64_t ln = lo; ln <= hi; ln++) {
				while (i < b && (l->lines[ord[i]].line < ln || strcmp(l->lines[ord[i]].file, file) != 0))
					i++;
				hj_line_row(f, (uint32_t)ln, i < b && l->lines[ord[i]].line == ln ? &l->lines[ord[i]] : NULL,
					    sf, &shown);
			}
		} else {
			/* the lines with values only: not every number between
			 * (a damaged file's line 4294967295 took forever) */
			uint32_t last = 0;
			for (uint32_t i = a; i < b; i++) {
				const struct an_line_row *x = &l->lines[ord[i]];
				if (strcmp(x->file, file) != 0 || (shown && x->line == last))
					continue;
				hj_line_row(f, x->line, x, sf, &shown);
				last = x->line;
			}
		}
		fputs("]}", f);
		a = b;
	}
	fputs("}", f);
	for (uint32_t i = 0; i < nsrc; i++) {
		free(src[i].text);
		free(src[i].line);
	}
	free(src);
	free(ord);
	return 0;
}

/* What the summary says of the recording and of the analysis beyond the
 * values (out_schema.h), per method. */
static void hj_instr_recording(FILE *f, const struct fmt_data *d)
{
	hj_key_str(f, "os_event_detector", d->os);
}

static void hj_instr_analysis(FILE *f, const struct an_result *r, const struct out_html_opts *o)
{
	fprintf(f, ",\"compensation\":{\"enabled\":%s,\"cost_per_event_ns\":%.3f,\"subtracted_ns\":%.0f}",
		o->no_compensation ? "false" : "true", r->cost_ns, r->compensated_ns);
	fprintf(f, ",\"events\":%" PRIu64 ",\"lost_events\":%" PRIu64, r->events, r->lost);
}

static void hj_sample_recording(FILE *f, const struct fmt_data *d)
{
	hj_key_str(f, "event", d->clock);
	fprintf(f, ",\"frequency_hz\":%" PRIu64, d->rate);
	hj_key_str(f, "unwinding", d->os);
	fputs(",\"lost_samples\":", f);
	hj_note(f, d->notes, "lost");
}

static void hj_sample_analysis(FILE *f, const struct an_result *r, const struct out_html_opts *o)
{
	(void)o;
	fprintf(f, ",\"samples\":%" PRIu64 ",\"cut_stacks\":%" PRIu64, r->samples, r->cut_stacks);
}

static const struct {
	void (*recording)(FILE *f, const struct fmt_data *d);
	void (*analysis)(FILE *f, const struct an_result *r, const struct out_html_opts *o);
} hj_methods[OUT_NMETHODS] = {
	[OUT_METHOD_INSTRUMENTATION] = {hj_instr_recording, hj_instr_analysis},
	[OUT_METHOD_SAMPLING] = {hj_sample_recording, hj_sample_analysis},
};

static void hj_summary(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct an_view *v,
		       const struct out_html_opts *o)
{
	const struct out_schema *s = out_schema_of(v->sampling);
	fprintf(f, "\"method\":\"%s\"", s->name);
	if (d) {
		char when[64] = "";
		time_t secs = (time_t)(d->wall_start / 1000000000ull);
		struct tm tm;
		if (localtime_r(&secs, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		hj_key_str(f, "command", d->command);
		if (d->wall_start)
			hj_key_str(f, "recorded", when);
		fprintf(f, ",\"exit_status\":%u,\"duration_ns\":%" PRIu64 ",\"nprocs\":%u,\"nthreads\":%u",
			d->exit_status, d->duration_ns, d->nprocs, d->nthreads);
		hj_methods[s->method].recording(f, d);
		if (d->damage)
			hj_key_str(f, "damage", d->damage);
	}
	hj_methods[s->method].analysis(f, r, o);
	if (o->filter)
		hj_key_str(f, "filter", o->filter);
	fputs(",\"totals\":[", f);
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, "%s%.0f", k ? "," : "", v->total[k]);
	fputc(']', f);
}

/* ------------------------------------------------------------------------
 * The flame graph's tree: pruning and aggregation
 * --------------------------------------------------------------------- */

struct hj_tree {
	const struct an_view *v;
	uint32_t *ord;      /* preorder of the view's nodes, root first */
	uint32_t n;         /* nodes in ord */
	uint8_t *keep;      /* per view node */
	uint8_t *other;     /* per view node: has a folded child */
	uint32_t *size;     /* per view node: nodes in its subtree */
	double *sub[2];     /* per view node: EE and AE summed over its subtree */
};

static double hj_ei(const struct hj_tree *t, uint32_t i)
{
	return i == 0 ? t->v->total[AN_EI] : t->v->n[i].v[AN_EI];
}

/*
 * Mark the nodes kept with inclusive value >= thr (> thr when strict),
 * whose parent is kept; returns kept nodes plus "(other)" nodes needed.
 */
static uint32_t hj_select(struct hj_tree *t, double thr, int strict)
{
	const struct an_view *v = t->v;
	uint32_t kept = 1, others = 0;
	memset(t->other, 0, v->len);
	t->keep[0] = 1;
	for (uint32_t k = 1; k < t->n; k++) {
		uint32_t i = t->ord[k], p = v->n[i].parent;
		double e = hj_ei(t, i);
		t->keep[i] = t->keep[p] && (strict ? e > thr : e >= thr);
		if (t->keep[i])
			kept++;
		else if (t->keep[p] && !t->other[p]) {
			t->other[p] = 1;
			others++;
		}
	}
	return kept + others;
}

static int hj_cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

/* Choose what to keep; fills stats. Returns -1 on OOM. */
static int hj_prune(struct hj_tree *t, const struct out_html_opts *o, struct out_html_stats *st)
{
	const struct an_view *v = t->v;
	uint32_t maxn = o->max_nodes < 16 ? 16 : o->max_nodes;
	double thr = o->min_share > 0 ? o->min_share / 100.0 * v->total[AN_EI] : -1.0;
	int strict = 0;
	uint32_t total = hj_select(t, thr, strict);
	if (total > maxn) {
		/* too many even so: keep the K largest, K shrinking until it fits */
		double *e = malloc((size_t)t->n * sizeof(*e));
		if (!e)
			return -1;
		uint32_t ne = 0;
		for (uint32_t k = 1; k < t->n; k++)
			if (t->keep[t->ord[k]])
				e[ne++] = hj_ei(t, t->ord[k]);
		qsort(e, ne, sizeof(*e), hj_cmp_desc);
		uint32_t want = maxn - 1;
		while (total > maxn && want > 0) {
			if (want >= ne)
				want = ne - 1;
			thr = e[want]; /* the (want+1)-th largest: keep those above it */
			strict = 1;
			total = hj_select(t, thr, strict);
			if (total > maxn)
				want = (uint32_t)((double)want * (double)maxn / (double)total * 0.97);
		}
		if (total > maxn) /* want reached 0: the root and one "(other)" */
			total = hj_select(t, INFINITY, 1);
		free(e);
	}
	st->threshold = thr < 0 ? 0 : thr;
	st->source_nodes = t->n - 1;
	st->shown_nodes = total - 1;
	st->other_nodes = 0;
	st->folded_nodes = 0;
	for (uint32_t k = 1; k < t->n; k++) {
		uint32_t i = t->ord[k];
		if (!t->keep[i] && t->keep[v->n[i].parent])
			st->folded_nodes += t->size[i];
		if (t->other[i])
			st->other_nodes++;
	}
	if (t->other[0])
		st->other_nodes++;
	return 0;
}

/* Preorder, subtree sizes and subtree sums.  Returns -1 on OOM. */
static int hj_walk(struct hj_tree *t)
{
	const struct an_view *v = t->v;
	uint32_t *stack = malloc((size_t)(v->len + 1) * sizeof(*stack));
	if (!stack)
		return -1;
	uint32_t sp = 0;
	t->n = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		t->ord[t->n++] = i;
		for (uint32_t c = v->n[i].child; c; c = v->n[c].next)
			stack[sp++] = c;
	}
	free(stack);
	for (uint32_t i = 0; i < v->len; i++) {
		t->size[i] = 1;
		t->sub[0][i] = i ? v->n[i].v[AN_EE] : 0;
		t->sub[1][i] = i ? v->n[i].v[AN_AE] : 0;
	}
	for (uint32_t k = t->n; k-- > 1;) {
		uint32_t i = t->ord[k], p = v->n[i].parent;
		t->size[p] += t->size[i];
		t->sub[0][p] += t->sub[0][i];
		t->sub[1][p] += t->sub[1][i];
	}
	return 0;
}

/* The "tree" object: column arrays of the kept nodes, then the "(other)" nodes. */
static int hj_tree_json(FILE *f, struct hj_tree *t, const struct out_html_stats *st)
{
	const struct an_view *v = t->v;
	uint32_t nout = st->shown_nodes + 1;
	uint32_t *idx = malloc((size_t)v->len * sizeof(*idx));   /* view node -> page node */
	uint32_t *src = malloc((size_t)nout * sizeof(*src));      /* page node -> view node */
	uint8_t *isother = calloc(nout, 1);
	double (*val)[AN_NVALUES] = calloc(nout, sizeof(*val));
	uint64_t *calls = calloc(nout, sizeof(*calls));
	uint32_t *folded = calloc(nout, sizeof(*folded));
	uint32_t *par = malloc((size_t)nout * sizeof(*par));
	int rc = -1;
	if (!idx || !src || !isother || !val || !calls || !folded || !par)
		goto out;
	uint32_t m = 0;
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t i = t->ord[k];
		if (!t->keep[i])
			continue;
		idx[i] = m;
		src[m] = i;
		par[m] = i ? idx[v->n[i].parent] : ~0u;
		if (i) {
			calls[m] = v->n[i].calls;
			memcpy(val[m], v->n[i].v, sizeof(val[m]));
		} else {
			/* the root: the selection's totals; its exclusive part is the
			 * time (samples) with no function on the stack */
			val[m][AN_EI] = v->total[AN_EI];
			val[m][AN_AI] = v->total[AN_AI]; /* 0 for sampling, as its nodes' AI */
			double ce = 0, ca = 0;
			for (uint32_t c = v->n[0].child; c; c = v->n[c].next) {
				ce += v->n[c].v[AN_EI];
				ca += v->n[c].v[AN_AI];
			}
			val[m][AN_EE] = val[m][AN_EI] > ce ? val[m][AN_EI] - ce : 0;
			val[m][AN_AE] = val[m][AN_AI] > ca ? val[m][AN_AI] - ca : 0;
		}
		m++;
	}
	/* one "(other)" node per parent with folded children */
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t i = t->ord[k];
		if (!t->keep[i] || !t->other[i])
			continue;
		uint32_t o = m++;
		isother[o] = 1;
		par[o] = idx[i];
		src[o] = i;
	}
	/* sums of the folded children into their parent's "(other)" node */
	uint32_t first_other = nout - st->other_nodes;
	for (uint32_t o = first_other; o < nout; o++)
		idx[src[o]] = o; /* now: kept parent -> its "(other)" node */
	for (uint32_t k = 1; k < t->n; k++) {
		uint32_t i = t->ord[k], p = v->n[i].parent;
		if (t->keep[i] || !t->keep[p])
			continue;
		uint32_t o = idx[p];
		calls[o] += v->n[i].calls;
		val[o][AN_EI] += v->n[i].v[AN_EI];
		val[o][AN_AI] += v->n[i].v[AN_AI];
		val[o][AN_EE] += t->sub[0][i];
		val[o][AN_AE] += t->sub[1][i];
		folded[o] += t->size[i];
	}
	fprintf(f, ",\n\"tree\":{\"source_nodes\":%u,\"shown_nodes\":%u,\"other_nodes\":%u,\"folded_nodes\":%u,"
		   "\"threshold\":%.17g",
		st->source_nodes, st->shown_nodes, st->other_nodes, st->folded_nodes, st->threshold);
	fputs(",\n\"fn\":[", f);
	for (uint32_t j = 0; j < nout; j++)
		fprintf(f, "%s%" PRId64, j ? "," : "",
			j == 0 ? (int64_t)-1 : isother[j] ? (int64_t)-2 : (int64_t)v->n[src[j]].fn);
	fputs("],\n\"parent\":[", f);
	for (uint32_t j = 0; j < nout; j++)
		fprintf(f, "%s%" PRId64, j ? "," : "", j == 0 ? (int64_t)-1 : (int64_t)par[j]);
	fputs("],\n\"calls\":[", f);
	for (uint32_t j = 0; j < nout; j++)
		fprintf(f, "%s%" PRIu64, j ? "," : "", calls[j]);
	const struct out_schema *s = out_schema_of(v->sampling);
	fputs("],\n\"v\":[", f);
	for (int k = 0; k < s->ncols; k++) {
		fputs(k ? "],\n[" : "[", f);
		for (uint32_t j = 0; j < nout; j++)
			fprintf(f, "%s%.0f", j ? "," : "", val[j][s->cols[k].v]);
	}
	fputs("]],\n\"folded\":[", f);
	int first = 1;
	for (uint32_t j = first_other; j < nout; j++) {
		fprintf(f, "%s[%u,%u]", first ? "" : ",", j, folded[j]);
		first = 0;
	}
	fputs("]}", f);
	rc = 0;
out:
	free(idx);
	free(src);
	free(isother);
	free(val);
	free(calls);
	free(folded);
	free(par);
	return rc;
}

/* ------------------------------------------------------------------------
 * Callers and callees: one pass over the whole view
 * --------------------------------------------------------------------- */

struct hj_edge {
	uint32_t caller, callee; /* an_func indices; caller ~0u: no caller */
	uint64_t calls;
	double v[AN_NVALUES];
};

struct hj_edges {
	struct hj_edge *e;
	uint32_t len, cap;
	struct util_index index; /* (caller, callee) -> edge */
};

static uint64_t hj_edge_key(uint32_t a, uint32_t b)
{
	return util_hash64(((uint64_t)a << 32) | b);
}

static uint64_t hj_edge_rekey(const void *s, uint32_t i)
{
	const struct hj_edge *e = &((const struct hj_edges *)s)->e[i];
	return hj_edge_key(e->caller, e->callee);
}

static struct hj_edge *hj_edge_get(struct hj_edges *s, uint32_t a, uint32_t b)
{
	util_index_reserve(&s->index, s->len, hj_edge_rekey, s);
	uint32_t *h = util_index_probe(&s->index, hj_edge_key(a, b));
	for (; *h != UTIL_INDEX_EMPTY; h = util_index_next(&s->index, h)) {
		struct hj_edge *e = &s->e[*h];
		if (e->caller == a && e->callee == b)
			return e;
	}
	*h = s->len;
	struct hj_edge *e = &s->e[s->len++];
	memset(e, 0, sizeof(*e));
	e->caller = a;
	e->callee = b;
	return e;
}

static int hj_cmp_edge(const void *a, const void *b)
{
	const struct hj_edge *x = a, *y = b;
	if (x->v[AN_EI] != y->v[AN_EI])
		return (x->v[AN_EI] < y->v[AN_EI]) - (x->v[AN_EI] > y->v[AN_EI]);
	/* ties in a fixed order, whatever order the walk met them in */
	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return (x->callee > y->callee) - (x->callee < y->callee);
}

/*
 * The edge caller->callee of view node i gets i's calls; its time goes to
 * the edge of the outermost call of i's function on i's path, its
 * inclusive time only when that is i itself (as an_view_callers() and
 * an_view_callees() count them).
 */
static int hj_edges_build(const struct an_view *v, struct hj_edges *s)
{
	s->cap = v->len;
	s->len = 0;
	memset(&s->index, 0, sizeof(s->index));
	s->e = malloc((size_t)s->cap * sizeof(*s->e));
	uint32_t *order = NULL, *same = NULL, *outer = NULL;
	int rc = -1;
	if (!s->e)
		goto out;
	uint32_t nord = an_view_preorder(v, &order, &same);
	outer = an_view_outermost(v);
	for (uint32_t k = 0; k < nord; k++) {
		uint32_t i = order[k];
		const struct cct_node *n = &v->n[i];
		uint32_t caller = n->parent == 0 ? ~0u : v->n[n->parent].fn;
		uint32_t op = v->n[outer[i]].parent, owner = op == 0 ? ~0u : v->n[op].fn;
		hj_edge_get(s, caller, n->fn)->calls += n->calls;
		struct hj_edge *e = hj_edge_get(s, owner, n->fn);
		e->v[AN_EE] += n->v[AN_EE];
		e->v[AN_AE] += n->v[AN_AE];
		if (outer[i] == i) {
			e->v[AN_EI] += n->v[AN_EI];
			e->v[AN_AI] += n->v[AN_AI];
		}
	}
	qsort(s->e, s->len, sizeof(*s->e), hj_cmp_edge);
	rc = 0;
out:
	util_index_free(&s->index);
	free(order);
	free(same);
	free(outer);
	return rc;
}

static void hj_edges_json(FILE *f, const struct an_view *v, const struct hj_edges *s, uint32_t n)
{
	fprintf(f, ",\n\"edges\":{\"total\":%u,\"shown\":%u,\"caller\":[", s->len, n);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRId64, i ? "," : "", s->e[i].caller == ~0u ? (int64_t)-1 : (int64_t)s->e[i].caller);
	fputs("],\n\"callee\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", s->e[i].callee);
	fputs("],\n\"calls\":[", f);
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", s->e[i].calls);
	const struct out_schema *sch = out_schema_of(v->sampling);
	fputs("],\n\"v\":[", f);
	for (int k = 0; k < sch->ncols; k++) {
		fputs(k ? "],\n[" : "[", f);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%.0f", i ? "," : "", s->e[i].v[sch->cols[k].v]);
	}
	fputs("]]}", f);
}

/* ------------------------------------------------------------------------
 * The page
 * --------------------------------------------------------------------- */

int out_html(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct an_view *v,
	     const struct out_html_opts *o, struct out_html_stats *stats)
{
	struct out_html_stats st = {0};
	struct hj_tree t = {.v = v};
	struct hj_edges ed = {0};
	int rc = -1;
	t.ord = malloc((size_t)v->len * sizeof(*t.ord));
	t.keep = calloc(v->len, 1);
	t.other = calloc(v->len, 1);
	t.size = malloc((size_t)v->len * sizeof(*t.size));
	t.sub[0] = malloc((size_t)v->len * sizeof(double));
	t.sub[1] = malloc((size_t)v->len * sizeof(double));
	if (!t.ord || !t.keep || !t.other || !t.size || !t.sub[0] || !t.sub[1])
		goto nomem;
	if (hj_walk(&t) < 0 || hj_prune(&t, o, &st) < 0 || hj_edges_build(v, &ed) < 0)
		goto nomem;
	st.edges = ed.len < o->max_edges ? ed.len : o->max_edges;
	st.dropped_edges = ed.len - st.edges;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>stint: ",
	      f);
	/* the title: the command, HTML-escaped */
	for (const char *s = d && d->command ? d->command : "profile"; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (util_utf8_len(s) == 0)
			fputs("\xef\xbf\xbd", f); /* not UTF-8: U+FFFD */
		else { /* a whole character */
			size_t n = util_utf8_len(s);
			fwrite(s, 1, n, f);
			s += n - 1;
		}
	}
	fputs("</title>\n<style>\n", f);
	fputs((const char *)out_html_css, f);
	fputs("</style></head>\n<body>\n<div id=\"app\"><noscript>This report needs JavaScript.</noscript></div>\n"
	      "<script type=\"application/json\" id=\"stint-data\">{",
	      f);
	hj_summary(f, d, r, v, o);
	fputs(",\n\"session\":", f);
	struct an_row session = r->session;
	memcpy(session.v, v->total, sizeof(session.v));
	hj_row(f, r, v, &session, HJ_SESSION);
	hj_rows(f, r, v, "functions", r->functions, r->nfunctions, HJ_FUNCTION);
	hj_rows(f, r, v, "modules", r->modules, r->nmodules, HJ_MODULE);
	hj_rows(f, r, v, "threads", r->thread_rows, r->nthread_rows, HJ_THREAD);
	hj_rows(f, r, v, "processes", r->processes, r->nprocesses, HJ_PROCESS);
	/* function names and modules the tree and the edges refer to */
	fputs(",\n\"mods\":[", f);
	for (uint32_t i = 0; i < r->nmods; i++) {
		if (i)
			fputc(',', f);
		hj_str(f, r->mods[i].base);
	}
	fputs("],\n\"funcs\":[", f);
	for (uint32_t i = 0; i < r->nfuncs; i++) {
		fputs(i ? ",\n[" : "\n[", f);
		hj_str(f, r->funcs[i].name);
		fprintf(f, ",%u,", r->funcs[i].module);
		hj_str(f, r->funcs[i].file);
		fprintf(f, ",%u]", r->funcs[i].line);
	}
	fputs("]", f);
	if (hj_tree_json(f, &t, &st) < 0)
		goto nomem;
	hj_edges_json(f, v, &ed, st.edges);
	if (o->lines && hj_lines_json(f, r, o->lines) < 0)
		goto nomem;
	fputs("}</script>\n<script>\n", f);
	fputs((const char *)out_html_js, f);
	fputs("</script>\n</body></html>\n", f);
	rc = ferror(f) ? -1 : 0;
	if (rc < 0 && !errno)
		errno = EIO;
	goto out;
nomem:
	errno = ENOMEM;
out:
	if (stats)
		*stats = st;
	free(t.ord);
	free(t.keep);
	free(t.other);
	free(t.size);
	free(t.sub[0]);
	free(t.sub[1]);
	free(ed.e);
	return rc;
}
