/*
 * out_report.c - the function, module, thread and process views as a
 * table, CSV or JSON (doc/numbers.md (the interface) fixes the JSON keys).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"
#include "out_schema.h"
#include "../lib/util.h"

int out_sort_key_ok(const char *key)
{
	return out_sort_column(NULL, key) >= 0 ? 0 : -1;
}

/* Rows by column *col (an out_sort_column() value), then by EI, then by name. */
static int cmp_rows(const void *a, const void *b, void *colp)
{
	const struct an_row *x = a, *y = b;
	int col = *(const int *)colp;
	int c = 0;
	if (col < AN_NVALUES)
		c = (x->v[col] < y->v[col]) - (x->v[col] > y->v[col]);
	else if (col == OUT_SORT_CALLS)
		c = (x->calls < y->calls) - (x->calls > y->calls);
	else if (col == OUT_SORT_NAME)
		c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	else
		c = strcmp(x->module ? x->module : "", y->module ? y->module : "");
	if (!c)
		c = (x->v[AN_EI] < y->v[AN_EI]) - (x->v[AN_EI] > y->v[AN_EI]);
	if (!c)
		c = strcmp(x->name ? x->name : "", y->name ? y->name : "");
	return c;
}

void out_fmt_time(char *buf, size_t n, double ns)
{
	if (ns < 1e3)
		snprintf(buf, n, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, n, "%.2f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, n, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", ns / 1e9);
}

double out_pct(double v, double total)
{
	return total > 0 ? 100.0 * v / total : 0.0;
}

void out_json_text(FILE *f, const char *s, int for_html)
{
	fputc('"', f);
	while (s && *s) {
		unsigned char c = (unsigned char)*s;
		size_t n = util_utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f); /* a byte that is not UTF-8: the replacement character */
			s++;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f || (for_html && (c == '<' || c == '>' || c == '&')))
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
		s++;
	}
	fputc('"', f);
}

void out_json_str(FILE *f, const char *s)
{
	out_json_text(f, s, 0);
}

void out_text_utf8(FILE *f, const char *s)
{
	while (s && *s) {
		size_t n = util_utf8_len(s);
		if (n == 0) {
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
			s++;
		} else {
			fwrite(s, 1, n, f);
			s += n;
		}
	}
}

void out_csv_str(FILE *f, const char *s)
{
	if (s && !strpbrk(s, ",\"\n\r")) {
		out_text_utf8(f, s);
		return;
	}
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		size_t n = util_utf8_len(s);
		if (n == 0)
			fputs("\xef\xbf\xbd", f);
		else {
			fwrite(s, 1, n, f);
			s += n - 1;
		}
	}
	fputc('"', f);
}


/*
 * What the report says of a method beyond its values (out_schema.h has
 * those): the "# ..." lines of the table's header, the JSON members about
 * the recording, and the wording that differs; report_methods[] below.
 */
struct report_method {
	/* The table's header, down to the line before the column headings;
	 * returns the sampling rate when each count gets a column with the
	 * CPU time it stands for (a time-based event), else 0. */
	uint64_t (*table_header)(FILE *f, const struct fmt_data *d, const struct an_result *r,
				 const struct out_opts *o);
	/* The JSON members after "duration_ns", up to "session". */
	void (*json_head)(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct out_opts *o);
	const char *heading[6];             /* the label column's heading, per view (enum out_by) */
	const char *sel_before, *sel_after; /* around the selection's total in "# selection:" */
	const char *run_key[AN_NVALUES];    /* JSON "selection": the whole run's totals, by value */
	int line_file;                      /* JSON line rows also have "file" and "line" */
	/* kept as they were: the columns reserved after the values when a
	 * label is cut to the terminal, and whether the heading is cut too */
	int label_gap, cut_heading;
};
static const struct report_method report_methods[OUT_NMETHODS];

static const struct report_method *report_method(const struct an_result *r)
{
	return &report_methods[out_schema_of(r->sampling)->method];
}

/* The filter's selection and its share of the run (percentages are of the selection). */
static void print_selection(FILE *f, const struct an_result *r, const struct out_opts *o)
{
	if (!o->selection)
		return;
	if (!r->filtered) {
		fprintf(f, "# selection:   %s (system-library frames charged to their callers)\n", o->selection);
		return;
	}
	const struct out_schema *s = out_schema_of(r->sampling);
	const struct report_method *m = report_method(r);
	char sel[32], whole[32];
	out_fmt_value(s, sel, sizeof(sel), r->session.v[AN_EI]);
	out_fmt_value(s, whole, sizeof(whole), r->whole[AN_EI]);
	fprintf(f, "# selection:   %s: %s%s of %s%s (%.1f%%); percentages are of the selection\n", o->selection,
		m->sel_before, sel, whole, m->sel_after, out_pct(r->session.v[AN_EI], r->whole[AN_EI]));
}

/* The same in JSON: the filter and the whole run's totals. */
static void json_selection(FILE *f, const struct an_result *r, const struct out_opts *o)
{
	if (!o->selection)
		return;
	const struct report_method *m = report_method(r);
	fputs(",\n\"selection\":{\"filter\":", f);
	out_json_str(f, o->selection);
	for (int k = 0; k < AN_NVALUES; k++)
		if (m->run_key[k])
			fprintf(f, ",\"%s\":%.0f", m->run_key[k], r->whole[k]);
	fputc('}', f);
}

static void json_row(FILE *f, const struct an_result *r, const struct an_row *row, int kind)
{
	const struct out_schema *s = out_schema_of(r->sampling);
	fputs("{\"name\":", f);
	out_json_str(f, row->name);
	fputs(",\"module\":", f);
	out_json_str(f, row->module);
	out_json_values(f, s, row->calls, row->v, r->session.v);
	if (kind == OUT_BY_FUNCTION) {
		out_json_per_call(f, s, row->calls, row->callsum, row->vmin, row->vmax);
		const struct an_func *fn = &r->funcs[row->func];
		fputs(",\"file\":", f);
		out_json_str(f, fn->file);
		fprintf(f, ",\"line\":%u", fn->line);
	}
	if (kind == OUT_BY_LINE && report_method(r)->line_file) { /* the name is "file:line" */
		const char *colon = strrchr(row->name, ':');
		fputs(",\"file\":", f);
		if (colon) {
			char *file = strndup(row->name, (size_t)(colon - row->name));
			out_json_str(f, file ? file : "");
			free(file);
		} else {
			out_json_str(f, "");
		}
		fprintf(f, ",\"line\":%lu", colon ? strtoul(colon + 1, NULL, 10) : 0ul);
	}
	if (kind == OUT_BY_THREAD) {
		fprintf(f, ",\"tid\":%u,\"pid\":%u", row->tid, row->pid);
	}
	if (kind == OUT_BY_PROCESS) {
		fprintf(f, ",\"pid\":%u,\"command\":", row->pid);
		out_json_str(f, row->extra);
	}
	fputc('}', f);
}

static void json_rows(FILE *f, const struct an_result *r, const char *key, struct an_row *rows,
		      uint32_t n, int kind, long limit)
{
	fprintf(f, ",\n\"%s\":[", key);
	for (uint32_t i = 0; i < n && (!limit || i < (uint32_t)limit); i++) {
		fputs(i ? ",\n " : "\n ", f);
		json_row(f, r, &rows[i], kind);
	}
	fputs("]", f);
}

static void print_json(FILE *f, const struct fmt_data *d, const struct an_result *r,
		       const struct out_opts *o, struct an_row *rows[6], uint32_t n[6])
{
	const struct out_schema *s = out_schema_of(r->sampling);
	fprintf(f, "{\"method\":\"%s\",\n\"command\":", s->name);
	out_json_str(f, d->command);
	fprintf(f, ",\n\"exit_status\":%u,\n\"duration_ns\":%" PRIu64, d->exit_status, d->duration_ns);
	if (d->flags & FMT_SESS_LEFT_RUNNING) /* (exit_status is then stint's own) */
		fputs(",\n\"left_running\":true", f);
	report_method(r)->json_head(f, d, r, o);
	fputs(",\n\"session\":", f);
	json_row(f, r, &r->session, -1);
	static const char *const keys[6] = {"functions", "modules", "threads", "processes", "lines", "addresses"};
	/* per line and call-site address: with some methods computed only when asked for */
	int nviews = s->lines_on_request && o->by != OUT_BY_LINE && o->by != OUT_BY_ADDRESS ? 4 : 6;
	for (int v = 0; v < nviews; v++)
		json_rows(f, r, keys[v], rows[v], n[v], v, o->by == v ? o->limit : 0);
	fputs("\n}\n", f);
}

/* The columns that say what a CSV row is about, then its values follow. */
static const char *csv_key_header(const struct out_opts *o)
{
	return o->by == OUT_BY_THREAD ? "tid,pid,name" : o->by == OUT_BY_PROCESS ? "pid,command" : "name,module";
}

static void csv_key(FILE *f, const struct out_opts *o, const struct an_row *row)
{
	if (o->by == OUT_BY_THREAD) {
		fprintf(f, "%u,%u,", row->tid, row->pid);
		out_csv_str(f, row->name);
	} else if (o->by == OUT_BY_PROCESS) {
		fprintf(f, "%u,", row->pid);
		out_csv_str(f, row->extra);
	} else {
		out_csv_str(f, row->name);
		fputc(',', f);
		out_csv_str(f, row->module);
	}
}

static void print_csv(FILE *f, const struct an_result *r, const struct out_opts *o,
		      const struct an_row *rows, uint32_t n)
{
	const struct out_schema *s = out_schema_of(r->sampling);
	fputs(csv_key_header(o), f);
	out_csv_values_header(f, s, s->pct_beside);
	if (o->by == OUT_BY_FUNCTION) { /* (where it is defined: two static functions of one name) */
		out_csv_per_call_header(f, s);
		fputs(",file,line", f);
	}
	fputc('\n', f);
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		csv_key(f, o, row);
		out_csv_values(f, s, row->calls, row->v, r->session.v, s->pct_beside);
		if (o->by == OUT_BY_FUNCTION) {
			const struct an_func *fn = row->func < r->nfuncs ? &r->funcs[row->func] : NULL;
			out_csv_per_call(f, s, row->calls, row->callsum, row->vmin, row->vmax);
			fputc(',', f);
			out_csv_str(f, fn && fn->file ? fn->file : "");
			/* (no line known: empty, as JSON leaves the key out; a 0 read as one) */
			if (fn && fn->line)
				fprintf(f, ",%u", fn->line);
			else
				fputc(',', f);
		}
		fputc('\n', f);
	}
}

/* Percentages of hot rows stand out, as perf colours them: red from 5%, green from 0.5%. */
static void put_pct(FILE *f, const struct out_opts *o, int width, double pct)
{
	const char *on = !o->color ? NULL : pct >= 5.0 ? "\033[31m" : pct >= 0.5 ? "\033[32m" : NULL;
	if (on)
		fprintf(f, "%s%*.2f\033[m", on, width, pct);
	else
		fprintf(f, "%*.2f", width, pct);
}

/* A row's label, cut to the columns left on the terminal (whole in CSV and JSON). */
void out_put_label(FILE *f, int width, int used, const char *label)
{
	int room = width > 0 ? width - used : 0;
	int len = (int)strlen(label);
	if (room <= 0 || len <= room || room < 8) {
		fprintf(f, "%s\n", label);
		return;
	}
	fprintf(f, "%.*s..\n", room - 2, label);
}


static void row_label(char *buf, size_t n, const struct an_result *r, const struct out_opts *o,
		      const struct an_row *row)
{
	char name[4300];
	if (o->by == OUT_BY_FUNCTION && row->func < r->nfuncs)
		snprintf(buf, n, "%s " OUT_MOD_FMT, an_func_label(r, row->func, name, sizeof(name)),
			 OUT_MOD_ARGS(row->module));
	else if (o->by == OUT_BY_THREAD)
		snprintf(buf, n, "%u %s (pid %u)", row->tid, row->name, row->pid);
	else if (o->by == OUT_BY_PROCESS)
		snprintf(buf, n, "%u %s", row->pid, row->extra);
	else if (o->by == OUT_BY_MODULE)
		snprintf(buf, n, "%s", row->name);
	else
		snprintf(buf, n, "%s " OUT_MOD_FMT, row->name, OUT_MOD_ARGS(row->module));
}

static void print_table(FILE *f, const struct fmt_data *d, const struct an_result *r,
			const struct out_opts *o, const struct an_row *rows, uint32_t n)
{
	const struct out_schema *s = out_schema_of(r->sampling);
	const struct report_method *m = report_method(r);
	uint64_t rate = m->table_header(f, d, r, o); /* with a time column per count */
	int show_calls = s->calls && o->by != OUT_BY_THREAD && o->by != OUT_BY_PROCESS;
	int per_call = s->calls && o->per_call && o->by == OUT_BY_FUNCTION;
	int vw = s->table_value_width, pw = s->table_pct_width;
	int used = (show_calls ? 11 : 0) + s->ncols * (vw + pw + 2 + (rate ? 11 : 0)) + (per_call ? s->ncols * 33 : 0) +
		   m->label_gap;
	if (show_calls)
		fprintf(f, "%10s ", "Calls");
	for (int c = 0; c < s->ncols; c++) {
		fprintf(f, "%*s ", vw, s->cols[c].title);
		if (rate)
			fprintf(f, "%10s ", "time");
		fprintf(f, "%*s ", pw, "%");
	}
	for (int c = 0; c < s->ncols && per_call; c++) {
		char a[16], mn[16], mx[16];
		snprintf(a, sizeof(a), "%s avg", s->cols[c].abbrev);
		snprintf(mn, sizeof(mn), "%s min", s->cols[c].abbrev);
		snprintf(mx, sizeof(mx), "%s max", s->cols[c].abbrev);
		fprintf(f, "%10s %10s %10s ", a, mn, mx);
	}
	fputc(' ', f);
	if (m->cut_heading)
		out_put_label(f, o->width, used, m->heading[o->by]);
	else
		fprintf(f, "%s\n", m->heading[o->by]);
	char label[4096];
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		char t[32];
		if (show_calls)
			fprintf(f, "%10" PRIu64 " ", row->calls);
		for (int c = 0; c < s->ncols; c++) {
			const struct out_column *k = &s->cols[c];
			out_fmt_value(s, t, sizeof(t), row->v[k->v]);
			fprintf(f, "%*s ", vw, t);
			if (rate) {
				out_fmt_time(t, sizeof(t), row->v[k->v] * 1e9 / (double)rate);
				fprintf(f, "%10s ", t);
			}
			put_pct(f, o, pw, out_pct(row->v[k->v], r->session.v[k->denom]));
			fputc(' ', f);
		}
		for (int c = 0; c < s->ncols && per_call; c++) {
			const struct out_column *k = &s->cols[c];
			char a[32], mn[32], mx[32];
			out_fmt_time(a, sizeof(a), out_per_call_avg(row->calls, row->callsum[k->v]));
			out_fmt_time(mn, sizeof(mn), row->vmin[k->v]);
			out_fmt_time(mx, sizeof(mx), row->vmax[k->v]);
			fprintf(f, "%10s %10s %10s ", a, mn, mx);
		}
		fputc(' ', f);
		row_label(label, sizeof(label), r, o, row);
		out_put_label(f, o->width, used, label);
	}
}

/* ------------------------------------------------------------------------
 * Instrumentation: what the header and JSON say of the recording
 * --------------------------------------------------------------------- */

/*
 * A program instrumented through its patch sites (not built with
 * -finstrument-functions): how many of its functions have one, and the
 * others by name ("patched=N/M unpatched=a,b" in the session notes).
 */
static void print_patched(FILE *f, const char *notes)
{
	const char *p = notes ? strstr(notes, "patched=") : NULL;
	while (p && p != notes && p[-1] != ' ')
		p = strstr(p + 1, "patched=");
	if (!p)
		return;
	unsigned long long n = 0, m = 0;
	if (sscanf(p + 8, "%llu/%llu", &n, &m) != 2)
		return;
	fprintf(f, "# instrumented: %llu of %llu functions of the program, through the patch sites its "
		   "compiler left (-pg -mfentry, -fpatchable-function-entry)\n", n, m);
	const char *u = strstr(notes, " unpatched=");
	if (!u)
		return;
	u += 11;
	int len = (int)(strchrnul(u, ' ') - u);
	fputs("# not instrumented (no patch site): ", f);
	int col = 37, shown = 0, total = 1;
	for (int i = 0; i < len; i++)
		total += u[i] == ',';
	for (int i = 0; i < len; shown++) {
		int e = i;
		while (e < len && u[e] != ',')
			e++;
		if (shown == 40) { /* a long list: the first ones, then a count */
			fprintf(f, " and %d more", total - shown);
			break;
		}
		if (i && col + (e - i) > 110) {
			fputs(",\n#   ", f);
			col = 4;
		} else if (i) {
			fputs(", ", f);
		}
		fprintf(f, "%.*s", e - i, u + i);
		col += e - i + 2;
		i = e + 1;
	}
	fputc('\n', f);
}

/*
 * The selection `stint record` was given (--function, --depth,
 * --min-duration...: "select=" in the notes, %XX-escaped), decoded into buf;
 * NULL when the whole program was recorded.
 */
static const char *recorded_selection(const char *notes, char *buf, size_t n)
{
	const char *p = notes ? strstr(notes, "select=") : NULL;
	while (p && p != notes && p[-1] != ' ')
		p = strstr(p + 1, "select=");
	if (!p || n < 4)
		return NULL;
	size_t k = 0;
	for (p += 7; *p && *p != ' ' && k + 1 < n; p++) {
		unsigned v;
		if (*p == '%' && p[1] && p[2] && sscanf(p + 1, "%2x", &v) == 1) {
			buf[k++] = (char)v;
			p += 2;
		} else {
			buf[k++] = *p;
		}
	}
	buf[k] = 0;
	return buf;
}

static void print_recorded_selection(FILE *f, const char *notes)
{
	char b[4096];
	if (!recorded_selection(notes, b, sizeof(b)))
		return;
	fprintf(f, "# selected at record time: %s; the calls left out are absent from every view (not 0):\n"
		   "#   their time is their callers' exclusive time (doc/stint-record.md)\n", b);
}

/* a count in the data file's notes ("key=digits"), "0" when there is none */
static const char *note_get(const char *notes, const char *key, char *buf, size_t n);
static const char *attached_pids(const struct fmt_data *d, char *buf, size_t n);

static uint64_t instr_table_header(FILE *f, const struct fmt_data *d, const struct an_result *r,
				   const struct out_opts *o)
{
	char wall[32], comp[32], ei[32], ai[32], when[64] = "";
	time_t secs = (time_t)(d->wall_start / 1000000000ull);
	struct tm tm;
	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	out_fmt_time(wall, sizeof(wall), (double)d->duration_ns);
	out_fmt_time(comp, sizeof(comp), r->compensated_ns);
	out_fmt_time(ei, sizeof(ei), r->session.v[AN_EI]);
	out_fmt_time(ai, sizeof(ai), r->session.v[AN_AI]);
	fprintf(f, "# stint report - instrumentation\n");
	fprintf(f, "# command:     %s\n", d->command);
	if (d->flags & FMT_SESS_ATTACHED) { /* it may run on: no exit status of it */
		char pids[128];
		fprintf(f, "# recorded:    %s, wall time %s, attached to the running process%s %s\n", when, wall,
			d->nprocs > 1 ? "es" : "", attached_pids(d, pids, sizeof(pids)));
	} else if (d->flags & FMT_SESS_LEFT_RUNNING) {
		fprintf(f, "# recorded:    %s, wall time %s, no exit status: the program ran on when stint stopped "
			"waiting\n", when, wall);
	} else {
		fprintf(f, "# recorded:    %s, wall time %s, exit status %u\n", when, wall, d->exit_status);
	}
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		bytes += d->threads[i].ev_len;
	fprintf(f, "# processes:   %u   threads: %u   events: %" PRIu64 " (%.2f bytes each)\n", d->nprocs,
		d->nthreads, r->events, r->events ? (double)bytes / (double)r->events : 0.0);
	fprintf(f, "# OS events:   %s\n", d->os);
	if (o->no_compensation)
		fprintf(f, "# compensation: off (raw times, probe cost included)\n");
	else
	{
		char ovh[32];
		out_fmt_time(ovh, sizeof(ovh), r->overhead_ns);
		/* the probes of functions patched at load cost about twice the
		 * compiler's, and have their own yardstick */
		char path[64] = "";
		if (r->patched_cost_procs && r->patched_cost_procs == d->nprocs)
			snprintf(path, sizeof(path), "functions patched at load; ");
		else if (r->patched_cost_procs)
			snprintf(path, sizeof(path), "in %u of %u processes patched at load; ", r->patched_cost_procs,
				 d->nprocs);
		/* the cost is the median of calibrations spread over the run */
		char measured[96] = "";
		if (r->cost_samples > 1)
			snprintf(measured, sizeof(measured), "median of %u measurements, %.1f-%.1f; ", r->cost_samples,
				 r->cost_min_ns, r->cost_max_ns);
		/* attaching probes no library calls: their cost is no part of it */
		char lib[48] = "";
		if (!(d->flags & FMT_SESS_ATTACHED))
			snprintf(lib, sizeof(lib), "library calls %.1f ns", r->lib_cost_ns);
		else
			snprintf(lib, sizeof(lib), "library calls not probed");
		fprintf(f,
			"# compensation: %.1f ns per event (%s%s%s) subtracted, %s in all, of it %s "
			"the profiler's own (--no-compensation turns it off)\n",
			r->cost_ns, path, measured, lib, comp, ovh);
	}
	fprintf(f, "# session:     EI %s   AI %s\n", ei, ai);
	print_patched(f, d->notes);
	out_patch_header(f, d->notes, o->why);
	if (d->flags & FMT_SESS_ATTACHED)
		fprintf(f, "# attached:    recorded from attach to detach (stint record -p); the frames open at "
			   "attach count no call\n");
	print_recorded_selection(f, d->notes);
	print_selection(f, r, o);
	if (r->lost)
		fprintf(f, "# lost events: %" PRIu64 "\n", r->lost);
	if (d->damage)
		fprintf(f, "# DAMAGED FILE: %s; values cover what precedes the damage\n", d->damage);
	char ub[32];
	unsigned long long unrecorded = strtoull(note_get(d->notes, "unrecorded", ub, sizeof(ub)), NULL, 10);
	unsigned long long procs = strtoull(note_get(d->notes, "unrecorded_procs", ub, sizeof(ub)), NULL, 10);
	if (unrecorded || procs) {
		char t[64] = "", p[64] = "";
		if (unrecorded)
			snprintf(t, sizeof(t), "%llu thread%s", unrecorded, unrecorded == 1 ? "" : "s");
		if (procs)
			snprintf(p, sizeof(p), "%llu process%s", procs, procs == 1 ? "" : "es");
		fprintf(f, "# not recorded: %s%s%s, started when the program could no longer reach stint's "
			   "spool (no file descriptor free, the rights to it given up or a chroot, system calls restricted, "
			   "or a file size limit too small)%s\n",
			t, unrecorded && procs ? " and " : "", p,
			unrecorded ? ", or on a thread's thread-local storage (clone with CLONE_VM)" : "");
	}
	unsigned long long unprobed = strtoull(note_get(d->notes, "unprobed", ub, sizeof(ub)), NULL, 10);
	if (unprobed)
		fprintf(f, "# not probed: %llu library function%s whose GOT entr%s the code also reads as data (a call "
			   "through a register, an address taken; stint record named them): their time is their "
			   "callers'\n",
			unprobed, unprobed == 1 ? "" : "s", unprobed == 1 ? "y" : "ies");
	/* why a thread's recording stopped early, the first that applies */
	static const struct {
		uint32_t flag;
		const char *why;
	} stopped[] = {
		{FMT_THR_NOSPACE, "the disk filled during recording"},
		{FMT_THR_CAPPED, "reached the per-thread limit of 7.5 GiB of events of an older stint"},
		{FMT_THR_SECCOMP, "the program restricted its system calls (seccomp), and the recording stopped "
				  "when its buffer was full"},
		{FMT_THR_SHAREDTLS, "it made a child with clone(CLONE_VM) that shares its thread-local storage, "
				    "whose calls cannot be told from its own"},
		{FMT_THR_FILELIMIT, "the program's file size limit (ulimit -f, RLIMIT_FSIZE) is smaller than its "
				    "recording's buffer file needed to grow"},
		{FMT_THR_NOCLOCK, "it turned off its time-stamp counter (seccomp's strict mode, or prctl PR_SET_TSC), "
				  "which every probe reads: the recording stopped there, and threads it started after "
				  "are not recorded"},
		{FMT_THR_LEFTPROBE, "a signal handler that interrupted one of stint's probes left it (siglongjmp, "
				    "exit, or the thread's asynchronous cancellation), and the recording stopped there"},
		{FMT_THR_NOACCESS, "the program gave up the rights to reach stint's spool (setuid)"},
		{FMT_THR_NOFILES, "the program had no file descriptor free (RLIMIT_NOFILE) when the recording "
				  "needed one"},
		{FMT_THR_ORPHANED, "stint record was killed while it ran"},
	};
	for (uint32_t i = 0; i < d->nthreads; i++)
		for (size_t k = 0; k < sizeof(stopped) / sizeof(stopped[0]); k++)
			if (d->threads[i].flags & stopped[k].flag) {
				fprintf(f, "# thread %u: %s; its later events are missing\n", d->threads[i].tid,
					stopped[k].why);
				break;
			}
	fputc('\n', f);
	fputs("# columns:     Elapsed = wall time, Application = the intervals in which the thread stayed on the CPU;\n"
	      "#              incl = with the functions called, excl = own code only; % of the session's incl time\n\n",
	      f);
	if (o->by == OUT_BY_LINE || o->by == OUT_BY_ADDRESS)
		fputs("# lines:       an interval of a function's own code counts for the line (address) of the call\n"
		      "#              that ends it, or of the function's latest call (its entry) when it returns;\n"
		      "#              incl adds the calls made there; Calls = calls made there\n\n", f);
	return 0;
}

static void instr_json_head(FILE *f, const struct fmt_data *d, const struct an_result *r,
			    const struct out_opts *o)
{
	fputs(",\n\"os_event_detector\":", f);
	out_json_str(f, d->os);
	/* subtracted = probe_events x cost_per_event + library_events x
	 * cost_per_library_event + overhead - unsubtracted (analysis.h) */
	fprintf(f,
		",\n\"compensation\":{\"enabled\":%s,\"cost_per_event_ns\":%.6f,"
		"\"cost_per_library_event_ns\":%.6f,\"probe_events\":%" PRIu64 ",\"library_events\":%" PRIu64
		",\"overhead_ns\":%.0f,\"unsubtracted_ns\":%.0f,\"subtracted_ns\":%.0f,\"cost_path\":\"%s\","
		"\"cost_in_call_ns\":%.6f,\"calibrations\":%u,\"cost_min_ns\":%.6f,\"cost_max_ns\":%.6f}",
		o->no_compensation ? "false" : "true", r->cost_ns, r->lib_cost_ns, r->probe_events, r->lib_events,
		r->overhead_ns, o->no_compensation ? 0.0 : r->unsubtracted_ns, r->compensated_ns,
		!r->patched_cost_procs ? "hooks" : r->patched_cost_procs == d->nprocs ? "patched" : "mixed",
		r->call_cost_ns, r->cost_samples, r->cost_min_ns, r->cost_max_ns);
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		bytes += d->threads[i].ev_len;
	fprintf(f, ",\n\"events\":%" PRIu64 ",\n\"event_bytes\":%" PRIu64 ",\n\"lost_events\":%" PRIu64, r->events,
		bytes, r->lost);
	if (d->damage) {
		fputs(",\n\"damage\":", f);
		out_json_str(f, d->damage);
	}
	out_patch_json(f, d->notes);
	json_selection(f, r, o);
	fprintf(f, ",\n\"attached\":%s", d->flags & FMT_SESS_ATTACHED ? "true" : "false");
	char ub[32];
	fprintf(f, ",\n\"unrecorded_threads\":%llu",
		strtoull(note_get(d->notes, "unrecorded", ub, sizeof(ub)), NULL, 10));
	fprintf(f, ",\n\"unrecorded_processes\":%llu",
		strtoull(note_get(d->notes, "unrecorded_procs", ub, sizeof(ub)), NULL, 10));
	fprintf(f, ",\n\"unprobed_library_functions\":%llu",
		strtoull(note_get(d->notes, "unprobed", ub, sizeof(ub)), NULL, 10));
	char rsel[4096];
	if (recorded_selection(d->notes, rsel, sizeof(rsel))) {
		fputs(",\n\"recorded_selection\":", f);
		out_json_str(f, rsel);
	}
}

/* ------------------------------------------------------------------------
 * Sampling: what the header and JSON say of the recording
 * --------------------------------------------------------------------- */

/* The value of the notes' word "key=value" (*len bytes), or NULL. */
static const char *note_find(const char *notes, const char *key, size_t *len)
{
	size_t l = strlen(key);
	for (const char *p = notes; p && *p;) {
		if (strncmp(p, key, l) == 0 && p[l] == '=') {
			const char *v = p + l + 1;
			*len = (size_t)(strchrnul(v, ' ') - v);
			return v;
		}
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return NULL;
}

static const char *note_get(const char *notes, const char *key, char *buf, size_t n)
{
	size_t len;
	const char *v = note_find(notes, key, &len);
	/* a count: digits only, as it goes into JSON unquoted */
	if (v && len > 0 && len < 20 && strspn(v, "0123456789") == len)
		snprintf(buf, n, "%.*s", (int)len, v);
	else
		snprintf(buf, n, "0");
	return buf;
}

/* A note's value that is a list of names and counts ("a.so:1,b.so:2"):
 * only the characters such a list has, so that a foreign file cannot put
 * terminal controls into the header; "" when absent or anything else. */
static const char *note_get_list(const char *notes, const char *key, char *buf, size_t n)
{
	size_t len;
	const char *v = note_find(notes, key, &len);
	buf[0] = 0;
	if (v && len < n &&
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-:,[]") == len)
		snprintf(buf, n, "%.*s", (int)len, v);
	return buf;
}

/* "PID" of an attached recording (and its children's, if any) */
static const char *attached_pids(const struct fmt_data *d, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < d->nprocs && o + 12 < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%u", i ? ", " : "", d->procs[i].pid);
	return buf;
}

/* What the in-process sampler could not see (recorder/rec_inproc.c). */
static void print_inproc_header(FILE *f, const struct fmt_data *d)
{
	char b[32];
	unsigned long long sys = strtoull(note_get(d->notes, "syscall", b, sizeof(b)), NULL, 10);
	unsigned long long ut = strtoull(note_get(d->notes, "utime", b, sizeof(b)), NULL, 10);
	unsigned long long st = strtoull(note_get(d->notes, "stime", b, sizeof(b)), NULL, 10);
	unsigned long long unsampled = strtoull(note_get(d->notes, "unsampled", b, sizeof(b)), NULL, 10);
	if (strcmp(note_get(d->notes, "usage", b, sizeof(b)), "0") != 0 && ut + st > 0)
		fprintf(f, "# kernel time: system time %.1f%% of the CPU time; ", 100.0 * (double)st / (double)(ut + st));
	else
		fputs("# kernel time: ", f);
	if (strcmp(note_get(d->notes, "kernel", b, sizeof(b)), "1") == 0)
		fputs("samples in system calls kept (--kernel),\n"
		      "#              charged to the call (no kernel frames); in page faults and interrupts: to the\n"
		      "#              instruction interrupted\n", f);
	else
		fprintf(f, "%llu samples in system calls not kept;\n"
			"#              in page faults and interrupts: charged to the instruction interrupted\n", sys);
	if (unsampled)
		fprintf(f, "# NOT SAMPLED: %llu thread%s (no CPU-time timer, or far fewer samples than "
			"CPU time: the sampler's signal was blocked)\n", unsampled, unsampled == 1 ? "" : "s");
	else
		fputs("# not sampled: 0 threads\n", f);
}

static uint64_t sample_table_header(FILE *f, const struct fmt_data *d, const struct an_result *r,
				    const struct out_opts *o)
{
	char dur[32], when[64] = "", b1[32], b2[32];
	time_t secs = (time_t)(d->wall_start / 1000000000ull);
	struct tm tm;
	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	out_fmt_time(dur, sizeof(dur), (double)d->duration_ns);
	fprintf(f, "# stint report - sampling\n");
	fprintf(f, "# command:     %s\n", d->command);
	if (d->flags & FMT_SESS_ATTACHED)
		fprintf(f, "# recorded:    %s, duration %s, attached to the running process%s %s\n", when, dur,
			d->nprocs > 1 ? "es" : "", attached_pids(d, b2, sizeof(b2)));
	else if (d->flags & FMT_SESS_LEFT_RUNNING)
		fprintf(f, "# recorded:    %s, duration %s, no exit status: the program ran on when stint stopped "
			"waiting\n", when, dur);
	else
		fprintf(f, "# recorded:    %s, duration %s, exit status %u\n", when, dur, d->exit_status);
	const char *unw = strcmp(d->os, "dwarf") == 0 ? "DWARF CFI (libdwfl)" : strcmp(d->os, "fp") == 0 ? "frame pointers" : d->os;
	if (strcmp(note_get(d->notes, "stack", b1, sizeof(b1)), "0") != 0)
		fprintf(f, "# sampling:    %s at %" PRIu64 " Hz%s; stacks unwound with %s (user stack copy %s bytes)\n",
			d->clock, d->rate, strcmp(d->clock, "task-clock") == 0 ? " of CPU time" : "", unw, b1);
	else
		fprintf(f, "# sampling:    %s at %" PRIu64 " Hz%s; stacks unwound with %s\n", d->clock, d->rate,
			strcmp(d->clock, "task-clock") == 0 ? " of CPU time" : "", unw);
	fprintf(f, "# samples:     %" PRIu64 " kept, %s lost, %" PRIu64 " stacks cut short\n", r->samples,
		note_get(d->notes, "lost", b2, sizeof(b2)), r->cut_stacks);
	print_selection(f, r, o);
	if (strcmp(note_get(d->notes, "stackout", b2, sizeof(b2)), "0") != 0)
		fprintf(f, "# cut short:   %s stacks because the %s-byte copy of the user stack ran out: "
			"record with a larger --stack-size (at most 65000)\n", b2, b1);
	if (strcmp(note_get(d->notes, "nofile", b2, sizeof(b2)), "0") != 0)
		fprintf(f, "# cut short:   %s stacks in programs or libraries whose file was removed before stint read "
			   "it (a program deleted once it ran): not unwound further, not named\n", b2);
	if (strcmp(note_get(d->notes, "toodeep", b2, sizeof(b2)), "0") != 0)
		fprintf(f, "# cut short:   %s stacks deeper than the frames kept: their outermost frames\n", b2);
	if (strcmp(note_get(d->notes, "compat32", b2, sizeof(b2)), "0") != 0)
		fprintf(f, "# cut short:   %s stacks of 32-bit programs, which stint does not unwind: the function on "
			   "top only\n", b2);
	if (strcmp(note_get(d->notes, "nocfi", b2, sizeof(b2)), "0") != 0) {
		char at[512];
		note_get_list(d->notes, "nocfiat", at, sizeof(at));
		fprintf(f, "# cut short:   %s stacks at code without unwind information (hand-written assembly, or code generated at run time)",
			b2);
		if (*at) {
			fputs(": ", f);
			for (const char *c = at; *c; c++)
				if (*c == ':')
					fputc(' ', f);
				else if (*c == ',')
					fputs(", ", f);
				else
					fputc(*c, f);
		}
		fputc('\n', f);
	}
	if (strcmp(note_get(d->notes, "inproc", b2, sizeof(b2)), "1") == 0)
		print_inproc_header(f, d);
	fprintf(f, "# processes:   %u   threads: %u", d->nprocs, d->nthreads);
	if (d->flags & FMT_SESS_ATTACHED) /* threads named as they were when stint attached */
		for (uint32_t i = 0; i < d->nthreads && i < 8; i++)
			fprintf(f, "%s%u %s%s", i ? ", " : " (", d->threads[i].tid, d->threads[i].name,
				i + 1 == d->nthreads || i == 7 ? (i + 1 < d->nthreads ? ", ...)" : ")") : "");
	fputc('\n', f);
	if (d->damage)
		fprintf(f, "# DAMAGED FILE: %s; values cover what precedes the damage\n", d->damage);
	fputc('\n', f);
	/* time-based events give each sample a period of CPU time: show the estimate beside the count */
	int timed = d->rate && (!strcmp(d->clock, "task-clock") || !strcmp(d->clock, "cpu-clock") ||
				!strcmp(d->clock, "cpu-time"));
	fputs("# columns:     Inclusive = samples with the function anywhere on the stack, Exclusive = on top;\n"
	      "#              % of the samples kept", f);
	fputs(timed ? "; time = samples x the sampling period (an estimate)\n\n" : "\n\n", f);
	return timed ? d->rate : 0;
}

static void sample_json_head(FILE *f, const struct fmt_data *d, const struct an_result *r,
			     const struct out_opts *o)
{
	char b[64];
	fputs(",\n\"event\":", f);
	out_json_str(f, d->clock);
	fprintf(f, ",\n\"frequency_hz\":%" PRIu64 ",\n\"unwinding\":", d->rate);
	out_json_str(f, d->os);
	/* the samples the percentages are of: the selection's under a filter */
	fprintf(f, ",\n\"samples\":%" PRIu64, r->filtered ? (uint64_t)r->session.v[AN_EI] : r->samples);
	fprintf(f, ",\n\"lost_samples\":%s", note_get(d->notes, "lost", b, sizeof(b)));
	fprintf(f, ",\n\"cut_stacks\":%" PRIu64, r->cut_stacks);
	fprintf(f, ",\n\"cut_stack_copy\":%s", note_get(d->notes, "stackout", b, sizeof(b)));
	fprintf(f, ",\n\"cut_no_unwind_info\":%s", note_get(d->notes, "nocfi", b, sizeof(b)));
	fprintf(f, ",\n\"cut_file_removed\":%s", note_get(d->notes, "nofile", b, sizeof(b)));
	fprintf(f, ",\n\"cut_too_deep\":%s", note_get(d->notes, "toodeep", b, sizeof(b)));
	fprintf(f, ",\n\"cut_32bit\":%s", note_get(d->notes, "compat32", b, sizeof(b)));
	fprintf(f, ",\n\"attached\":%s", d->flags & FMT_SESS_ATTACHED ? "true" : "false");
	if (strcmp(note_get(d->notes, "inproc", b, sizeof(b)), "1") == 0) {
		/* the in-process sampler: what it could not see */
		fprintf(f, ",\n\"unsampled_threads\":%s", note_get(d->notes, "unsampled", b, sizeof(b)));
		fprintf(f, ",\n\"system_call_samples\":%s", note_get(d->notes, "syscall", b, sizeof(b)));
		if (strcmp(note_get(d->notes, "usage", b, sizeof(b)), "0") != 0) {
			fprintf(f, ",\n\"user_time_ns\":%s", note_get(d->notes, "utime", b, sizeof(b)));
			fprintf(f, ",\n\"system_time_ns\":%s", note_get(d->notes, "stime", b, sizeof(b)));
		}
	}
	if (d->damage) {
		fputs(",\n\"damage\":", f);
		out_json_str(f, d->damage);
	}
	json_selection(f, r, o);
}

static const struct report_method report_methods[OUT_NMETHODS] = {
	[OUT_METHOD_INSTRUMENTATION] = {
		.table_header = instr_table_header, .json_head = instr_json_head,
		.heading = {"Function [module]", "Module", "Thread", "Process", "Source line [module]",
			    "Call site or entry (module offset) [module]"},
		.sel_before = "EI ", .sel_after = "",
		.run_key = {[AN_EI] = "run_elapsed_inclusive", [AN_AI] = "run_application_inclusive"},
		.line_file = 1, .label_gap = 1, .cut_heading = 1,
	},
	[OUT_METHOD_SAMPLING] = {
		.table_header = sample_table_header, .json_head = sample_json_head,
		.heading = {"Function [module]", "Module", "Thread", "Process", "Source line [module]",
			    "Address (module offset) [module]"},
		.sel_before = "", .sel_after = " samples",
		.run_key = {[AN_EI] = "run_samples"},
		.line_file = 0, .label_gap = 2, .cut_heading = 0,
	},
};

int out_report(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct out_opts *o)
{
	const struct out_schema *s = out_schema_of(r->sampling);
	struct an_row *rows[6] = {r->functions, r->modules, r->thread_rows, r->processes, r->lines, r->addresses};
	uint32_t n[6] = {r->nfunctions, r->nmodules, r->nthread_rows, r->nprocesses, r->nlines, r->naddresses};
	int col = o->sort ? out_sort_column(s, o->sort) : o->by == OUT_BY_FUNCTION ? s->sort_function : s->sort_other;
	if (col < 0)
		return -1;
	for (int v = 0; v < 6; v++) {
		int by = v == o->by ? col : v == OUT_BY_FUNCTION ? s->sort_function : s->sort_other;
		if (n[v]) /* some methods have line and address rows only for --by line|address */
			qsort_r(rows[v], n[v], sizeof(struct an_row), cmp_rows, &by);
	}
	if (o->format == OUT_JSON)
		print_json(f, d, r, o, rows, n);
	else if (o->format == OUT_CSV)
		print_csv(f, r, o, rows[o->by], n[o->by]);
	else
		print_table(f, d, r, o, rows[o->by], n[o->by]);
	return 0;
}
