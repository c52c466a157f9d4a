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
#include "../lib/util.h"

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

/* Rows by column *col (a sort_col() value), then by EI, then by name. */
static int cmp_rows(const void *a, const void *b, void *colp)
{
	const struct an_row *x = a, *y = b;
	int col = *(const int *)colp;
	int c = 0;
	if (col < AN_NVALUES)
		c = (x->v[col] < y->v[col]) - (x->v[col] > y->v[col]);
	else if (col == 10)
		c = (x->calls < y->calls) - (x->calls > y->calls);
	else if (col == 11)
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

/* The session totals used as denominators (doc/numbers.md, instrumentation). */
static double denom(const struct an_result *r, int k)
{
	return (k == AN_EI || k == AN_EE) ? r->session.v[AN_EI] : r->session.v[AN_AI];
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
	if (r->sampling) {
		fprintf(f, "# selection:   %s: %.0f of %.0f samples (%.1f%%); percentages are of the selection\n",
			o->selection, r->session.v[AN_EI], r->whole[AN_EI], out_pct(r->session.v[AN_EI], r->whole[AN_EI]));
		return;
	}
	char sel[32], whole[32];
	out_fmt_time(sel, sizeof(sel), r->session.v[AN_EI]);
	out_fmt_time(whole, sizeof(whole), r->whole[AN_EI]);
	fprintf(f, "# selection:   %s: EI %s of %s (%.1f%%); percentages are of the selection\n", o->selection, sel,
		whole, out_pct(r->session.v[AN_EI], r->whole[AN_EI]));
}

/* The same in JSON: the filter and the whole run's totals. */
static void json_selection(FILE *f, const struct an_result *r, const struct out_opts *o)
{
	if (!o->selection)
		return;
	fputs(",\n\"selection\":{\"filter\":", f);
	out_json_str(f, o->selection);
	if (r->sampling)
		fprintf(f, ",\"run_samples\":%.0f}", r->whole[AN_EI]);
	else
		fprintf(f, ",\"run_elapsed_inclusive\":%.0f,\"run_application_inclusive\":%.0f}", r->whole[AN_EI],
			r->whole[AN_AI]);
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
	if (kind == OUT_BY_LINE) { /* the name is "file:line" */
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

static const char *recorded_selection(const char *notes, char *buf, size_t n);

static void print_json(FILE *f, const struct fmt_data *d, const struct an_result *r,
		       const struct out_opts *o, struct an_row *rows[6], uint32_t n[6])
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
		",\"overhead_ns\":%.0f,\"unsubtracted_ns\":%.0f,\"subtracted_ns\":%.0f,\"cost_path\":\"%s\","
		"\"cost_in_call_ns\":%.6f}",
		o->no_compensation ? "false" : "true", r->cost_ns, r->lib_cost_ns, r->probe_events, r->lib_events,
		r->overhead_ns, o->no_compensation ? 0.0 : r->unsubtracted_ns, r->compensated_ns,
		!r->patched_cost_procs ? "hooks" : r->patched_cost_procs == d->nprocs ? "patched" : "mixed",
		r->call_cost_ns);
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
	char rsel[4096];
	if (recorded_selection(d->notes, rsel, sizeof(rsel))) {
		fputs(",\n\"recorded_selection\":", f);
		out_json_str(f, rsel);
	}
	fputs(",\n\"session\":", f);
	json_row(f, r, &r->session, -1);
	json_rows(f, r, "functions", rows[0], n[0], OUT_BY_FUNCTION, o->by == OUT_BY_FUNCTION ? o->limit : 0);
	json_rows(f, r, "modules", rows[1], n[1], OUT_BY_MODULE, o->by == OUT_BY_MODULE ? o->limit : 0);
	json_rows(f, r, "threads", rows[2], n[2], OUT_BY_THREAD, o->by == OUT_BY_THREAD ? o->limit : 0);
	json_rows(f, r, "processes", rows[3], n[3], OUT_BY_PROCESS, o->by == OUT_BY_PROCESS ? o->limit : 0);
	/* per line and call-site address: computed when asked for (--by line|address) */
	if (o->by == OUT_BY_LINE || o->by == OUT_BY_ADDRESS) {
		json_rows(f, r, "lines", rows[4], n[4], OUT_BY_LINE, o->by == OUT_BY_LINE ? o->limit : 0);
		json_rows(f, r, "addresses", rows[5], n[5], OUT_BY_ADDRESS, o->by == OUT_BY_ADDRESS ? o->limit : 0);
	}
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
		/* the probes of functions patched at load cost about twice the
		 * compiler's, and have their own yardstick */
		char path[64] = "";
		if (r->patched_cost_procs && r->patched_cost_procs == d->nprocs)
			snprintf(path, sizeof(path), "functions patched at load; ");
		else if (r->patched_cost_procs)
			snprintf(path, sizeof(path), "in %u of %u processes patched at load; ", r->patched_cost_procs,
				 d->nprocs);
		fprintf(f,
			"# compensation: %.1f ns per event (%slibrary calls %.1f ns) subtracted, %s in all, of it %s "
			"the profiler's own (--no-compensation turns it off)\n",
			r->cost_ns, path, r->lib_cost_ns, comp, ovh);
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
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].flags & FMT_THR_NOSPACE)
			fprintf(f, "# thread %u: the disk filled during recording; its later events are missing\n",
				d->threads[i].tid);
		else if (d->threads[i].flags & FMT_THR_CAPPED)
			fprintf(f, "# thread %u: reached the per-thread limit of 7.5 GiB of events of an older "
				   "stint; its later events are missing\n",
				d->threads[i].tid);
		else if (d->threads[i].flags & FMT_THR_ORPHANED)
			fprintf(f, "# thread %u: stint record was killed while it ran; its later events are "
				   "missing\n",
				d->threads[i].tid);
	fputc('\n', f);
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
static void put_label(FILE *f, const struct out_opts *o, int used, const char *label)
{
	int room = o->width > 0 ? o->width - used : 0;
	int len = (int)strlen(label);
	if (room <= 0 || len <= room || room < 8) {
		fprintf(f, "%s\n", label);
		return;
	}
	fprintf(f, "%.*s..\n", room - 2, label);
}

static const char *const out_value_title[AN_NVALUES] = {"Elapsed incl", "Elapsed excl", "Applic. incl",
							 "Applic. excl"};

static void print_table(FILE *f, const struct fmt_data *d, const struct an_result *r,
			const struct out_opts *o, const struct an_row *rows, uint32_t n)
{
	print_header(f, d, r, o);
	fputs("# columns:     Elapsed = wall time, Application = the intervals in which the thread stayed on the CPU;\n"
	      "#              incl = with the functions called, excl = own code only; % of the session's incl time\n\n",
	      f);
	const char *first = o->by == OUT_BY_FUNCTION ? "Function [module]"
			    : o->by == OUT_BY_MODULE ? "Module"
			    : o->by == OUT_BY_THREAD ? "Thread"
			    : o->by == OUT_BY_LINE ? "Source line [module]"
			    : o->by == OUT_BY_ADDRESS ? "Call site or entry (module offset) [module]"
						     : "Process";
	if (o->by == OUT_BY_LINE || o->by == OUT_BY_ADDRESS)
		fputs("# lines:       an interval of a function's own code counts for the line (address) of the call\n"
		      "#              that ends it, or of the function's latest call (its entry) when it returns;\n"
		      "#              incl adds the calls made there; Calls = calls made there\n\n", f);
	int show_calls = o->by != OUT_BY_THREAD && o->by != OUT_BY_PROCESS;
	int per_call = o->per_call && o->by == OUT_BY_FUNCTION;
	int used = (show_calls ? 11 : 0) + AN_NVALUES * 20 + (per_call ? AN_NVALUES * 33 : 0) + 1;
	if (show_calls)
		fprintf(f, "%10s ", "Calls");
	for (int k = 0; k < AN_NVALUES; k++)
		fprintf(f, "%12s %6s ", out_value_title[k], "%");
	if (per_call)
		for (int k = 0; k < AN_NVALUES; k++)
		{
			char a[16], mn[16], mx[16];
			snprintf(a, sizeof(a), "%s avg", out_value_short[k]);
			snprintf(mn, sizeof(mn), "%s min", out_value_short[k]);
			snprintf(mx, sizeof(mx), "%s max", out_value_short[k]);
			fprintf(f, "%10s %10s %10s ", a, mn, mx);
		}
	fputc(' ', f);
	put_label(f, o, used, first);
	char label[4096];
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		char t[32];
		if (show_calls)
			fprintf(f, "%10" PRIu64 " ", row->calls);
		for (int k = 0; k < AN_NVALUES; k++) {
			out_fmt_time(t, sizeof(t), row->v[k]);
			fprintf(f, "%12s ", t);
			put_pct(f, o, 6, out_pct(row->v[k], denom(r, k)));
			fputc(' ', f);
		}
		if (per_call)
			for (int k = 0; k < AN_NVALUES; k++) {
				char a[32], mn[32], mx[32];
				out_fmt_time(a, sizeof(a), row->calls ? row->v[k] / (double)row->calls : 0);
				out_fmt_time(mn, sizeof(mn), row->vmin[k]);
				out_fmt_time(mx, sizeof(mx), row->vmax[k]);
				fprintf(f, "%10s %10s %10s ", a, mn, mx);
			}
		if (o->by == OUT_BY_FUNCTION || o->by == OUT_BY_LINE || o->by == OUT_BY_ADDRESS)
			snprintf(label, sizeof(label), "%s [%s]", row->name, row->module);
		else if (o->by == OUT_BY_THREAD)
			snprintf(label, sizeof(label), "%u %s (pid %u)", row->tid, row->name, row->pid);
		else if (o->by == OUT_BY_PROCESS)
			snprintf(label, sizeof(label), "%u %s", row->pid, row->extra);
		else
			snprintf(label, sizeof(label), "%s", row->name);
		fputc(' ', f);
		put_label(f, o, used, label);
	}
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
			/* a count: digits only, as it goes into JSON unquoted */
			if (e > v && e - v < 20 && strspn(v, "0123456789") == (size_t)(e - v)) {
				snprintf(buf, n, "%.*s", (int)(e - v), v);
				return buf;
			}
			break;
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
	/* the samples the percentages are of: the selection's under a filter */
	fprintf(f, ",\n\"samples\":%" PRIu64, r->filtered ? (uint64_t)r->session.v[AN_EI] : r->samples);
	fprintf(f, ",\n\"lost_samples\":%s", note_get(d->notes, "lost", b, sizeof(b)));
	fprintf(f, ",\n\"cut_stacks\":%" PRIu64, r->cut_stacks);
	fprintf(f, ",\n\"cut_stack_copy\":%s", note_get(d->notes, "stackout", b, sizeof(b)));
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

static void sample_row_label(char *buf, size_t n, const struct out_opts *o, const struct an_row *row)
{
	if (o->by == OUT_BY_THREAD)
		snprintf(buf, n, "%u %s (pid %u)", row->tid, row->name, row->pid);
	else if (o->by == OUT_BY_PROCESS)
		snprintf(buf, n, "%u %s", row->pid, row->extra);
	else if (o->by == OUT_BY_MODULE)
		snprintf(buf, n, "%s", row->name);
	else
		snprintf(buf, n, "%s [%s]", row->name, row->module);
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
	if (d->flags & FMT_SESS_ATTACHED)
		fprintf(f, "# recorded:    %s, duration %s, attached to the running process%s %s\n", when, dur,
			d->nprocs > 1 ? "es" : "", attached_pids(d, b2, sizeof(b2)));
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
	static const char *const first[6] = {"Function [module]", "Module", "Thread", "Process",
					     "Source line [module]", "Address (module offset) [module]"};
	/* time-based events give each sample a period of CPU time: show the estimate beside the count */
	int timed = d->rate && (!strcmp(d->clock, "task-clock") || !strcmp(d->clock, "cpu-clock") ||
				!strcmp(d->clock, "cpu-time"));
	fputs("# columns:     Inclusive = samples with the function anywhere on the stack, Exclusive = on top;\n"
	      "#              % of the samples kept", f);
	fputs(timed ? "; time = samples x the sampling period (an estimate)\n\n" : "\n\n", f);
	if (timed)
		fprintf(f, "%10s %10s %7s %10s %10s %7s  %s\n", "Inclusive", "time", "%", "Exclusive", "time", "%",
			first[o->by]);
	else
		fprintf(f, "%10s %7s %10s %7s  %s\n", "Inclusive", "%", "Exclusive", "%", first[o->by]);
	double total = r->session.v[AN_EI];
	int used = timed ? 62 : 40;
	char label[4096], t[32];
	for (uint32_t i = 0; i < n && (!o->limit || i < (uint32_t)o->limit); i++) {
		const struct an_row *row = &rows[i];
		for (int k = AN_EI; k <= AN_EE; k++) {
			fprintf(f, "%10.0f ", row->v[k]);
			if (timed) {
				out_fmt_time(t, sizeof(t), row->v[k] * 1e9 / (double)d->rate);
				fprintf(f, "%10s ", t);
			}
			put_pct(f, o, 7, out_pct(row->v[k], total));
			fputc(' ', f);
		}
		fputc(' ', f);
		sample_row_label(label, sizeof(label), o, row);
		put_label(f, o, used, label);
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
			int by = v == o->by ? col : AN_EE;
			qsort_r(rows[v], n[v], sizeof(struct an_row), cmp_rows, &by);
		}
		if (o->format == OUT_JSON)
			print_sample_json(f, d, r, o, rows, n);
		else if (o->format == OUT_CSV)
			print_sample_csv(f, r, o, rows[o->by], n[o->by]);
		else
			print_sample_table(f, d, r, o, rows[o->by], n[o->by]);
		return 0;
	}
	struct an_row *rows[6] = {r->functions, r->modules, r->thread_rows, r->processes, r->lines, r->addresses};
	uint32_t n[6] = {r->nfunctions, r->nmodules, r->nthread_rows, r->nprocesses, r->nlines, r->naddresses};
	int col = o->sort ? sort_col(o->sort) : (o->by == OUT_BY_FUNCTION ? AN_EE : AN_EI);
	if (col < 0)
		return -1;
	for (int v = 0; v < 6; v++) {
		int by = (v == o->by) ? col : (v == OUT_BY_FUNCTION ? AN_EE : AN_EI);
		if (n[v]) /* the line and address rows are there only for --by line|address */
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
