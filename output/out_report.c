/*
 * out_report.c - the function, module, thread and process views as a
 * table, CSV or JSON (SPEC.md section 3 fixes the JSON keys).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

/* Columns a view can be sorted by; index = value column or special. */
static const struct {
	const char *key, *alias;
	int col; /* 0..3 value, 10 calls, 11 name, 12 module */
} out_sort_keys[] = {
	{"elapsed_inclusive", "ei", AN_EI},       {"elapsed_exclusive", "ee", AN_EE},
	{"application_inclusive", "ai", AN_AI},   {"application_exclusive", "ae", AN_AE},
	{"elapsed_inclusive_pct", "ei%", AN_EI},  {"elapsed_exclusive_pct", "ee%", AN_EE},
	{"application_inclusive_pct", "ai%", AN_AI}, {"application_exclusive_pct", "ae%", AN_AE},
	{"inclusive_samples", "inclusive", AN_EI}, {"exclusive_samples", "exclusive", AN_EE},
	{"inclusive_pct", "incl%", AN_EI},        {"exclusive_pct", "excl%", AN_EE},
	{"calls", "calls", 10},                   {"name", "function", 11},
	{"module", "module", 12},
};

static const char *const out_value_keys[AN_NVALUES] = {
	"elapsed_inclusive", "elapsed_exclusive", "application_inclusive", "application_exclusive"};
static const char *const out_value_short[AN_NVALUES] = {"EI", "EE", "AI", "AE"};

static int sort_col(const char *key)
{
	for (size_t i = 0; i < sizeof(out_sort_keys) / sizeof(out_sort_keys[0]); i++)
		if (strcasecmp(key, out_sort_keys[i].key) == 0 || strcasecmp(key, out_sort_keys[i].alias) == 0)
			return out_sort_keys[i].col;
	return -1;
}

int out_sort_key_ok(const char *key)
{
	return sort_col(key) >= 0 ? 0 : -1;
}

static int g_sort_col;

static int cmp_rows(const void *a, const void *b)
{
	const struct an_row *x = a, *y = b;
	int c = 0;
	if (g_sort_col < AN_NVALUES)
		c = (x->v[g_sort_col] < y->v[g_sort_col]) - (x->v[g_sort_col] > y->v[g_sort_col]);
	else if (g_sort_col == 10)
		c = (x->calls < y->calls) - (x->calls > y->calls);
	else if (g_sort_col == 11)
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

void out_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void csv_str(FILE *f, const char *s)
{
	if (s && !strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The session totals used as denominators (SPEC.md section 1). */
static double denom(const struct an_result *r, int k)
{
	return (k == AN_EI || k == AN_EE) ? r->session.v[AN_EI] : r->session.v[AN_AI];
}

static void json_row(FILE *f, const struct an_result *r, const struct an_row *row, int kind)
{
	fputs("{\"name\":", f);
	out_json_str(f, row->name);
	fputs(",\"module\":", f);
	out_json_str(f, row->module);
	fprintf(f, ",\"calls\":%" PRIu64, row->calls);
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, ",\"%s\":%.0f,\"%s_pct\":%.4f", out_value_keys[k], row->v[k], out_value_keys[k],
			out_pct(row->v[k], denom(r, k)));
	if (kind == OUT_BY_FUNCTION) {
		for (int k = 0; k < AN_NVALUES; k++)
			fprintf(f, ",\"%s_avg\":%.1f,\"%s_min\":%.0f,\"%s_max\":%.0f", out_value_keys[k],
				row->calls ? row->v[k] / (double)row->calls : 0.0, out_value_keys[k],
				row->vmin[k], out_value_keys[k], row->vmax[k]);
		const struct an_func *fn = &r->funcs[row->func];
		fputs(",\"file\":", f);
		out_json_str(f, fn->file);
		fprintf(f, ",\"line\":%u", fn->line);
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
		       const struct out_opts *o, struct an_row *rows[4], uint32_t n[4])
{
	fputs("{\"method\":\"instrumentation\",\n\"command\":", f);
	out_json_str(f, d->command);
	fprintf(f, ",\n\"exit_status\":%u,\n\"duration_ns\":%" PRIu64 ",\n\"os_event_detector\":", d->exit_status,
		d->duration_ns);
	out_json_str(f, d->os);
	/* subtracted = probe_events x cost_per_event + library_events x
	 * cost_per_library_event + overhead - unsubtracted (analysis.h) */
	fprintf(f,
		",\n\"compensation\":{\"enabled\":%s,\"cost_per_event_ns\":%.6f,"
		"\"cost_per_library_event_ns\":%.6f,\"probe_events\":%" PRIu64 ",\"library_events\":%" PRIu64
		",\"overhead_ns\":%.0f,\"unsubtracted_ns\":%.0f,\"subtracted_ns\":%.0f}",
		o->no_compensation ? "false" : "true", r->cost_ns, r->lib_cost_ns, r->probe_events, r->lib_events,
		r->overhead_ns, o->no_compensation ? 0.0 : r->unsubtracted_ns, r->compensated_ns);
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		bytes += d->threads[i].ev_len;
	fprintf(f, ",\n\"events\":%" PRIu64 ",\n\"event_bytes\":%" PRIu64 ",\n\"lost_events\":%" PRIu64, r->events,
		bytes, r->lost);
	if (d->damage) {
		fputs(",\n\"damage\":", f);
		out_json_str(f, d->damage);
	}
	fputs(",\n\"session\":", f);
	json_row(f, r, &r->session, -1);
	json_rows(f, r, "functions", rows[0], n[0], OUT_BY_FUNCTION, o->by == OUT_BY_FUNCTION ? o->limit : 0);
	json_rows(f, r, "modules", rows[1], n[1], OUT_BY_MODULE, o->by == OUT_BY_MODULE ? o->limit : 0);
	json_rows(f, r, "threads", rows[2], n[2], OUT_BY_THREAD, o->by == OUT_BY_THREAD ? o->limit : 0);
	json_rows(f, r, "processes", rows[3], n[3], OUT_BY_PROCESS, o->by == OUT_BY_PROCESS ? o->limit : 0);
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
		csv_str(f, row->name);
	} else if (o->by == OUT_BY_PROCESS) {
		fprintf(f, "%u,", row->pid);
		csv_str(f, row->extra);
	} else {
		csv_str(f, row->name);
		fputc(',', f);
		csv_str(f, row->module);
	}
}

static void print_csv(FILE *f, const struct an_result *r, const struct out_opts *o,
		      const struct an_row *rows, uint32_t n)
{
	fputs(csv_key_header(o), f);
	fputs(",calls", f);
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, ",%s,%s_pct", out_value_keys[k], out_value_keys[k]);
	if (o->by == OUT_BY_FUNCTION)
		for (int k = 0; k < AN_NVALUES; k++)
			fprintf(f, ",%s_avg,%s_min,%s_max", out_value_keys[k], out_value_keys[k], out_value_keys[k]);
	fputc('\n', f);
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		csv_key(f, o, row);
		fprintf(f, ",%" PRIu64, row->calls);
		for (int k = 0; k < AN_NVALUES; k++)
			fprintf(f, ",%.0f,%.4f", row->v[k], out_pct(row->v[k], denom(r, k)));
		if (o->by == OUT_BY_FUNCTION)
			for (int k = 0; k < AN_NVALUES; k++)
				fprintf(f, ",%.1f,%.0f,%.0f", row->calls ? row->v[k] / (double)row->calls : 0.0,
					row->vmin[k], row->vmax[k]);
		fputc('\n', f);
	}
}

static void print_header(FILE *f, const struct fmt_data *d, const struct an_result *r,
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
	fprintf(f, "# recorded:    %s, wall time %s, exit status %u\n", when, wall, d->exit_status);
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
		fprintf(f,
			"# compensation: %.1f ns per event (library calls %.1f ns) subtracted, %s in all, of it %s "
			"the profiler's own (--no-compensation turns it off)\n",
			r->cost_ns, r->lib_cost_ns, comp, ovh);
	}
	fprintf(f, "# session:     EI %s   AI %s\n", ei, ai);
	if (r->lost)
		fprintf(f, "# lost events: %" PRIu64 "\n", r->lost);
	if (d->damage)
		fprintf(f, "# DAMAGED FILE: %s; values cover what precedes the damage\n", d->damage);
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].flags & FMT_THR_NOSPACE)
			fprintf(f, "# thread %u: the disk filled during recording; its later events are missing\n",
				d->threads[i].tid);
	fputc('\n', f);
}

static void print_table(FILE *f, const struct fmt_data *d, const struct an_result *r,
			const struct out_opts *o, const struct an_row *rows, uint32_t n)
{
	print_header(f, d, r, o);
	const char *first = o->by == OUT_BY_FUNCTION ? "Function"
			    : o->by == OUT_BY_MODULE ? "Module"
			    : o->by == OUT_BY_THREAD ? "Thread"
						     : "Process";
	int show_calls = o->by == OUT_BY_FUNCTION || o->by == OUT_BY_MODULE;
	if (show_calls)
		fprintf(f, "%10s ", "Calls");
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, "%11s %6s ", out_value_short[k], "%");
	if (o->per_call && o->by == OUT_BY_FUNCTION)
		for (int k = 0; k < AN_NVALUES; k++)
			fprintf(f, "%10s %10s %10s ", "avg", "min", "max");
	fprintf(f, " %s%s\n", first, o->by == OUT_BY_FUNCTION ? " [module]" : "");
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		char t[32];
		if (show_calls)
			fprintf(f, "%10" PRIu64 " ", row->calls);
		for (int k = 0; k < AN_NVALUES; k++) {
			out_fmt_time(t, sizeof(t), row->v[k]);
			fprintf(f, "%11s %6.2f ", t, out_pct(row->v[k], denom(r, k)));
		}
		if (o->per_call && o->by == OUT_BY_FUNCTION)
			for (int k = 0; k < AN_NVALUES; k++) {
				char a[32], mn[32], mx[32];
				out_fmt_time(a, sizeof(a), row->calls ? row->v[k] / (double)row->calls : 0);
				out_fmt_time(mn, sizeof(mn), row->vmin[k]);
				out_fmt_time(mx, sizeof(mx), row->vmax[k]);
				fprintf(f, "%10s %10s %10s ", a, mn, mx);
			}
		if (o->by == OUT_BY_FUNCTION)
			fprintf(f, " %s [%s]\n", row->name, row->module);
		else if (o->by == OUT_BY_THREAD)
			fprintf(f, " %u %s (pid %u)\n", row->tid, row->name, row->pid);
		else if (o->by == OUT_BY_PROCESS)
			fprintf(f, " %u %s\n", row->pid, row->extra);
		else
			fprintf(f, " %s\n", row->name);
	}
	if (o->per_call && o->by == OUT_BY_FUNCTION)
		fputs("\n(avg/min/max per call of EI, EE, AI, AE, in that order)\n", f);
}

/* ------------------------------------------------------------------------
 * Sampling views
 * --------------------------------------------------------------------- */

static const char *note_get(const char *notes, const char *key, char *buf, size_t n)
{
	size_t l = strlen(key);
	for (const char *p = notes; p && *p;) {
		if (strncmp(p, key, l) == 0 && p[l] == '=') {
			const char *v = p + l + 1, *e = strchrnul(v, ' ');
			snprintf(buf, n, "%.*s", (int)(e - v), v);
			return buf;
		}
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	snprintf(buf, n, "0");
	return buf;
}

static void json_sample_row(FILE *f, const struct an_result *r, const struct an_row *row, int kind)
{
	double total = r->session.v[AN_EI];
	fputs("{\"name\":", f);
	out_json_str(f, row->name);
	fputs(",\"module\":", f);
	out_json_str(f, row->module);
	fprintf(f, ",\"inclusive_samples\":%.0f,\"exclusive_samples\":%.0f,\"inclusive_pct\":%.4f,\"exclusive_pct\":%.4f",
		row->v[AN_EI], row->v[AN_EE], out_pct(row->v[AN_EI], total), out_pct(row->v[AN_EE], total));
	if (kind == OUT_BY_FUNCTION) {
		const struct an_func *fn = &r->funcs[row->func];
		fputs(",\"file\":", f);
		out_json_str(f, fn->file);
		fprintf(f, ",\"line\":%u", fn->line);
	}
	if (kind == OUT_BY_THREAD)
		fprintf(f, ",\"tid\":%u,\"pid\":%u", row->tid, row->pid);
	if (kind == OUT_BY_PROCESS) {
		fprintf(f, ",\"pid\":%u,\"command\":", row->pid);
		out_json_str(f, row->extra);
	}
	fputc('}', f);
}

static void print_sample_json(FILE *f, const struct fmt_data *d, const struct an_result *r,
			      const struct out_opts *o, struct an_row *rows[6], uint32_t n[6])
{
	char b[64];
	fputs("{\"method\":\"sampling\",\n\"command\":", f);
	out_json_str(f, d->command);
	fprintf(f, ",\n\"exit_status\":%u,\n\"duration_ns\":%" PRIu64 ",\n\"event\":", d->exit_status,
		d->duration_ns);
	out_json_str(f, d->clock);
	fprintf(f, ",\n\"frequency_hz\":%" PRIu64 ",\n\"unwinding\":", d->rate);
	out_json_str(f, d->os);
	fprintf(f, ",\n\"samples\":%" PRIu64, r->samples);
	fprintf(f, ",\n\"lost_samples\":%s", note_get(d->notes, "lost", b, sizeof(b)));
	fprintf(f, ",\n\"cut_stacks\":%" PRIu64, r->cut_stacks);
	if (d->damage) {
		fputs(",\n\"damage\":", f);
		out_json_str(f, d->damage);
	}
	fputs(",\n\"session\":", f);
	json_sample_row(f, r, &r->session, -1);
	static const char *const keys[6] = {"functions", "modules", "threads", "processes", "lines", "addresses"};
	for (int v = 0; v < 6; v++) {
		fprintf(f, ",\n\"%s\":[", keys[v]);
		for (uint32_t i = 0; i < n[v] && (!o->limit || o->by != v || i < (uint32_t)o->limit); i++) {
			fputs(i ? ",\n " : "\n ", f);
			json_sample_row(f, r, &rows[v][i], v);
		}
		fputs("]", f);
	}
	fputs("\n}\n", f);
}

static void sample_row_label(FILE *f, const struct out_opts *o, const struct an_row *row)
{
	if (o->by == OUT_BY_FUNCTION)
		fprintf(f, "%s [%s]", row->name, row->module);
	else if (o->by == OUT_BY_THREAD)
		fprintf(f, "%u %s (pid %u)", row->tid, row->name, row->pid);
	else if (o->by == OUT_BY_PROCESS)
		fprintf(f, "%u %s", row->pid, row->extra);
	else if (o->by == OUT_BY_MODULE)
		fputs(row->name, f);
	else
		fprintf(f, "%s [%s]", row->name, row->module);
}

static void print_sample_csv(FILE *f, const struct an_result *r, const struct out_opts *o,
			     const struct an_row *rows, uint32_t n)
{
	double total = r->session.v[AN_EI];
	fputs(csv_key_header(o), f);
	fputs(",inclusive_samples,exclusive_samples,inclusive_pct,exclusive_pct\n", f);
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		csv_key(f, o, row);
		fprintf(f, ",%.0f,%.0f,%.4f,%.4f\n", row->v[AN_EI], row->v[AN_EE], out_pct(row->v[AN_EI], total),
			out_pct(row->v[AN_EE], total));
	}
}

static void print_sample_table(FILE *f, const struct fmt_data *d, const struct an_result *r,
			       const struct out_opts *o, const struct an_row *rows, uint32_t n)
{
	char dur[32], when[64] = "", b1[32], b2[32];
	time_t secs = (time_t)(d->wall_start / 1000000000ull);
	struct tm tm;
	if (localtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	out_fmt_time(dur, sizeof(dur), (double)d->duration_ns);
	fprintf(f, "# stint report - sampling\n");
	fprintf(f, "# command:     %s\n", d->command);
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
	fprintf(f, "# processes:   %u   threads: %u\n", d->nprocs, d->nthreads);
	if (d->damage)
		fprintf(f, "# DAMAGED FILE: %s; values cover what precedes the damage\n", d->damage);
	fputc('\n', f);
	static const char *const first[6] = {"Function [module]", "Module", "Thread", "Process",
					     "Source line [module]", "Address (module offset) [module]"};
	fprintf(f, "%10s %7s %10s %7s  %s\n", "Inclusive", "%", "Exclusive", "%", first[o->by]);
	double total = r->session.v[AN_EI];
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		fprintf(f, "%10.0f %7.2f %10.0f %7.2f  ", row->v[AN_EI], out_pct(row->v[AN_EI], total), row->v[AN_EE],
			out_pct(row->v[AN_EE], total));
		sample_row_label(f, o, row);
		fputc('\n', f);
	}
}

int out_report(FILE *f, const struct fmt_data *d, const struct an_result *r, const struct out_opts *o)
{
	if (r->sampling) {
		struct an_row *rows[6] = {r->functions, r->modules, r->thread_rows, r->processes, r->lines, r->addresses};
		uint32_t n[6] = {r->nfunctions, r->nmodules, r->nthread_rows, r->nprocesses, r->nlines, r->naddresses};
		int col = o->sort ? sort_col(o->sort) : AN_EE;
		if (col < 0 || col == AN_AI || col == AN_AE || col == 10)
			return -1;
		for (int v = 0; v < 6; v++) {
			g_sort_col = v == o->by ? col : AN_EE;
			qsort(rows[v], n[v], sizeof(struct an_row), cmp_rows);
		}
		if (o->format == OUT_JSON)
			print_sample_json(f, d, r, o, rows, n);
		else if (o->format == OUT_CSV)
			print_sample_csv(f, r, o, rows[o->by], n[o->by]);
		else
			print_sample_table(f, d, r, o, rows[o->by], n[o->by]);
		return 0;
	}
	if (o->by == OUT_BY_LINE || o->by == OUT_BY_ADDRESS)
		return -2;
	struct an_row *rows[4] = {r->functions, r->modules, r->thread_rows, r->processes};
	uint32_t n[4] = {r->nfunctions, r->nmodules, r->nthread_rows, r->nprocesses};
	int col = o->sort ? sort_col(o->sort) : (o->by == OUT_BY_FUNCTION ? AN_EE : AN_EI);
	if (col < 0)
		return -1;
	for (int v = 0; v < 4; v++) {
		g_sort_col = (v == o->by) ? col : (v == OUT_BY_FUNCTION ? AN_EE : AN_EI);
		qsort(rows[v], n[v], sizeof(struct an_row), cmp_rows);
	}
	if (o->format == OUT_JSON)
		print_json(f, d, r, o, rows, n);
	else if (o->format == OUT_CSV)
		print_csv(f, r, o, rows[o->by], n[o->by]);
	else
		print_table(f, d, r, o, rows[o->by], n[o->by]);
	return 0;
}
