/*
 * cmd_annotate.c - `stint annotate FUNC`: the source of one function with,
 * for instrumentation, the four values and the calls of each line
 * (analysis/an_lines.h); for sampling, the samples of each line (inclusive: samples with the line anywhere on
 * the stack, once each; exclusive: samples that hit it), or its
 * disassembly with samples per address where the source cannot be found.
 * Inlined functions count as doc/numbers.md (sampling) says: a function that had
 * others inlined into it is at their call sites' lines (inclusive only),
 * and an inlined function can be annotated by its name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "../format/fmt_sample.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../output/output.h"
#include "../symbol/symbol.h"

static const char annotate_usage[] =
	"usage: stint annotate [-i FILE] [--no-compensation] FUNCTION\n"
	"\n"
	"  -i, --input FILE   data file (default stint.data)\n"
	"      --no-compensation  instrumentation: do not subtract the probe cost\n"
	"      --no-pager     accepted as by report (annotate prints, never pages)\n"
	"  FUNCTION           the function's name as the report shows it (or a part of it)\n";

/* The largest source file annotate reads. */
#define ANNOTATE_SOURCE_MAX ((size_t)64 << 20)

/*
 * The disassembly of [lo, hi) of the module file, by objdump run with an
 * argument vector (no shell: the path comes from the data file and may hold
 * anything), its output read through a pipe.  Returns the number of
 * instruction lines, in *insn with their addresses in *at.
 */
static size_t disassemble(const char *module, uint64_t lo, uint64_t hi, char ***insn, uint64_t **at)
{
	struct stat st;
	if (stat(module, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	char start[40], stop[40];
	snprintf(start, sizeof(start), "--start-address=0x%" PRIx64, lo);
	snprintf(stop, sizeof(stop), "--stop-address=0x%" PRIx64, hi);
	/* a relative name starting with '-' must not read as an option */
	char *file = module[0] == '/' ? xstrdup(module) : xasprintf("./%s", module);
	char *argv[] = {"objdump", "-d", "--no-show-raw-insn", "-C", start, stop, "--", file, NULL};
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		free(file);
		return 0;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	extern char **environ;
	int rc = posix_spawnp(&pid, "objdump", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	free(file);
	size_t n = 0;
	FILE *pf = rc == 0 ? fdopen(pfd[0], "r") : NULL;
	if (!pf)
		close(pfd[0]);
	char buf[512];
	while (pf && fgets(buf, sizeof(buf), pf)) {
		unsigned long long a;
		char colon;
		if (sscanf(buf, " %llx%c", &a, &colon) != 2 || colon != ':')
			continue;
		buf[strcspn(buf, "\n")] = 0;
		UTIL_GROW1(*insn, n);
		UTIL_GROW1(*at, n);
		(*insn)[n] = xstrdup(buf);
		(*at)[n++] = a;
	}
	if (pf)
		fclose(pf);
	if (rc == 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	return n;
}

/*
 * A source file read for printing: control characters but tab and newline
 * (C0, DEL, C1 written in UTF-8) become '?', as the data file's strings do
 * (format/fmt_file.c): the data file names the file, so any file with an
 * escape sequence in it (a comment, a string literal) could otherwise
 * retitle or clear the terminal.  In place; src may be NULL.
 */
static char *annotate_read_source(const char *file, size_t *flen)
{
	char *src = file ? util_read_source(file, ANNOTATE_SOURCE_MAX, flen) : NULL;
	for (size_t i = 0; src && i < *flen; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c == '\r' && i + 1 < *flen && src[i + 1] == '\n')
			src[i] = ' '; /* (a CRLF file's line ends) */
		else if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
			src[i] = '?';
		else if (c == 0xc2 && i + 1 < *flen && (unsigned char)src[i + 1] >= 0x80 &&
			 (unsigned char)src[i + 1] < 0xa0)
			src[i] = src[i + 1] = '?';
	}
	return src;
}

/* Why a source is not shown that the data file's owner could not read. */
static const char not_readable[] = "not shown (the data file is another user's, who cannot read it)";

/* One source line of text at s (up to e or the end), for printing. */
static int line_len(const char *s, const char *e)
{
	return (int)(e ? e - s : (long)strlen(s));
}

/* One line's four values with their percentages (of den[]). */
static void annotate_instr_values(const struct an_row *row, const double *den)
{
	for (int k = 0; k < AN_NVALUES; k++) {
		char t[32];
		out_fmt_time(t, sizeof(t), row->v[k]);
		printf("%10s %6.2f ", t, out_pct(row->v[k], den[k]));
	}
}

/* The function's own totals, from the report's function rows. */
static void annotate_instr_header(const struct an_result *r, uint32_t fn, const double *den, int nocomp)
{
	const struct an_func *f = &r->funcs[fn];
	printf("# %s [%s] (instrumentation%s)\n", f->name, r->mods[f->module].base, nocomp ? ", no compensation" : "");
	for (uint32_t i = 0; i < r->nfunctions; i++)
		if (r->functions[i].func == fn) {
			const struct an_row *row = &r->functions[i];
			char t[AN_NVALUES][32];
			for (int k = 0; k < AN_NVALUES; k++)
				out_fmt_time(t[k], sizeof(t[k]), row->v[k]);
			printf("# %" PRIu64 " calls; EI %s (%.2f%%)  EE %s (%.2f%%)  AI %s (%.2f%%)  AE %s (%.2f%%)\n",
			       row->calls, t[0], out_pct(row->v[0], den[0]), t[1], out_pct(row->v[1], den[1]), t[2],
			       out_pct(row->v[2], den[2]), t[3], out_pct(row->v[3], den[3]));
		}
	printf("# per line: an interval of the function's own code counts for the line of the call that ends\n"
	       "# it (or of its latest call, its first line before any, when it returns); incl adds the calls\n"
	       "# made on the line; %% of the session's incl time\n");
}

/* The source lines to show: from the function's first line (or its first
 * counted one) to two after its last counted one, in file. */
static void annotate_instr_range(const struct an_func *f, const struct an_lines *l, const char *file, uint32_t *lo,
				 uint32_t *hi)
{
	*lo = f->line ? f->line : UINT32_MAX;
	*hi = f->line;
	for (uint32_t i = 0; file && i < l->nlines; i++)
		if (!an_line_row_empty(&l->lines[i]) && strcmp(l->lines[i].file, file) == 0) {
			if (l->lines[i].line < *lo)
				*lo = l->lines[i].line;
			if (l->lines[i].line > *hi)
				*hi = l->lines[i].line;
		}
	if (*lo == UINT32_MAX)
		*lo = 1;
	*hi += 2;
}

/*
 * Instrumentation: the function's source with the four values per line
 * (an_lines.h: the intervals of its own code charged to the line, and the
 * calls made on it), and the calls made on each line.
 */
static int annotate_instr(const char *input, const char *want, int nocomp)
{
	struct fmt_data d;
	struct an_result r;
	cmd_load_any(input, &d, &r, nocomp, NULL);
	uint32_t fn = cmd_pick_function(&r, want, NULL, input, "annotate");
	cmd_load_warn(input, &d, &r); /* (once the function is found: an error is then the one line) */
	cmd_need_sites(input, &d, "annotate");
	struct an_lines l;
	struct an_lines_opts lo = {.no_compensation = nocomp, .mode = AN_LINES_OF_FUNCTION, .fn = fn};
	if (an_lines_run(&d, &r, &lo, &l) < 0)
		die("out of memory");
	const struct an_func *f = &r.funcs[fn];
	const double den[AN_NVALUES] = {r.session.v[AN_EI], r.session.v[AN_EI], r.session.v[AN_AI],
					r.session.v[AN_AI]};
	annotate_instr_header(&r, fn, den, nocomp);
	const char *file = f->file && *f->file ? f->file : NULL;
	for (uint32_t i = 0; !file && i < l.nlines; i++)
		if (!an_line_row_empty(&l.lines[i]))
			file = l.lines[i].file;
	size_t flen = 0;
	errno = 0;
	char *src = annotate_read_source(file, &flen);
	int refused = !src && errno == EACCES;
	uint32_t lo_line, hi_line;
	annotate_instr_range(f, &l, file, &lo_line, &hi_line);
	if (src)
		printf("# %s, lines %u-%u\n", file, lo_line, hi_line);
	else if (file)
		printf("# source '%s' %s: the values per line\n", file, refused ? not_readable : "not found");
	else
		printf("# no source lines known\n");
	printf("\n%10s %6s %10s %6s %10s %6s %10s %6s %8s %6s\n", "Elap.incl", "%", "Elap.excl", "%", "Appl.incl",
	       "%", "Appl.excl", "%", "Calls", "Line");
	uint32_t ln = 1;
	for (char *s = src, *e; s && *s && ln <= hi_line; s = e ? e + 1 : NULL, ln++) {
		e = strchr(s, '\n');
		if (ln < lo_line)
			continue;
		const struct an_line_row *x = NULL;
		for (uint32_t i = 0; i < l.nlines; i++)
			if (l.lines[i].line == ln && strcmp(l.lines[i].file, file) == 0 && !an_line_row_empty(&l.lines[i]))
				x = &l.lines[i];
		if (x) {
			annotate_instr_values(&x->row, den);
			printf("%8" PRIu64 " %6u  %.*s\n", x->row.calls, ln, line_len(s, e), s);
		} else {
			printf("%10s %6s %10s %6s %10s %6s %10s %6s %8s %6u  %.*s\n", "", "", "", "", "", "", "", "", "",
			       ln, line_len(s, e), s);
		}
	}
	/* the rows, without their text: all of them without the source,
	 * else those of no line shown (another file; an inlined function's
	 * calls, whose line is not known), so that the rows add up */
	int first = 1;
	for (uint32_t i = 0; i < l.nlines; i++) {
		const struct an_line_row *x = &l.lines[i];
		if (an_line_row_empty(x) ||
		    (src && x->line >= lo_line && x->line <= hi_line && x->line && strcmp(x->file, file) == 0))
			continue;
		if (src && first)
			printf("\n");
		first = 0;
		annotate_instr_values(&x->row, den);
		if (x->line)
			printf("%8" PRIu64 " %6u  %s\n", x->row.calls, x->line, x->row.name);
		else
			printf("%8" PRIu64 " %6s  %s\n", x->row.calls, "", x->row.name);
	}
	free(src);
	an_lines_free(&l);
	an_result_free(&r);
	fmt_data_free(&d);
	return 0;
}

/*
 * The function annotate shows: the one named want exactly, else the one
 * whose name contains it; dies when none or several do.  Malloc'd.
 */
static char *annotate_pick(const struct fmt_data *d, const char *want, const char *input)
{
	char *chosen = NULL;
	for (int pass = 0; pass < 2 && !chosen; pass++) {
		const char **names;
		size_t n = an_sample_names(d, want, pass == 0, &names);
		int found = n > 0;
		for (size_t i = 1; i < n; i++) {
			if (strcmp(names[i], names[0]) == 0)
				continue;
			if (found == 1) {
				warn("'%s' matches several functions:", want);
				fprintf(stderr, "  %s\n", names[0]);
			}
			fprintf(stderr, "  %s\n", names[i]);
			found++;
		}
		if (found > 1)
			die("annotate: name the function exactly");
		if (n)
			chosen = xstrdup(names[0]);
		free(names);
	}
	if (!chosen)
		die("annotate: no function '%s' in the samples of '%s'", want, input);
	return chosen;
}

/* The source file's lines that hold the function's samples, with two of context. */
static void annotate_source(const struct an_fn_samples *fs, const char *file, const char *src, size_t flen)
{
	uint32_t lo = fs->decl_line ? fs->decl_line : UINT32_MAX, hi = fs->decl_line;
	for (size_t k = 0; k < fs->nlines; k++)
		if (strcmp(fs->lines[k].file, file) == 0) {
			if (fs->lines[k].line < lo)
				lo = fs->lines[k].line;
			if (fs->lines[k].line > hi)
				hi = fs->lines[k].line;
		}
	if (lo == UINT32_MAX)
		lo = 1;
	/* two lines of context after the last sampled one, where the
	 * file has them: the header must not promise lines past its end */
	uint32_t flines = 0;
	for (size_t i = 0; i < flen; i++)
		if (src[i] == '\n' || i + 1 == flen)
			flines++;
	hi = hi + 2 < flines ? hi + 2 : flines;
	if (lo > hi)
		lo = hi;
	printf("# %s, lines %u-%u\n\n%10s %10s %6s\n", file, lo, hi, "Inclusive", "Exclusive", "Line");
	uint32_t ln = 1;
	for (const char *s = src, *e; s && *s && ln <= hi; s = e ? e + 1 : NULL, ln++) {
		e = strchr(s, '\n');
		if (ln < lo)
			continue;
		uint64_t li = 0, le = 0;
		for (size_t k = 0; k < fs->nlines; k++)
			if (fs->lines[k].line == ln && strcmp(fs->lines[k].file, file) == 0) {
				li = fs->lines[k].incl;
				le = fs->lines[k].excl;
			}
		if (li || le)
			printf("%10" PRIu64 " %10" PRIu64 " %6u  %.*s\n", li, le, ln, line_len(s, e), s);
		else
			printf("%10s %10s %6u  %.*s\n", "", "", ln, line_len(s, e), s);
	}
	/* the samples of no line shown, so that the rows add up to the
	 * header's counts: line 0 (code the compiler gave no line, which
	 * clang does often), another file, a line past the file's end */
	int first = 1;
	for (size_t k = 0; k < fs->nlines; k++) {
		const struct an_fn_count *x = &fs->lines[k];
		if (x->line >= lo && x->line <= hi && x->line && strcmp(x->file, file) == 0)
			continue;
		if (first)
			printf("\n");
		first = 0;
		if (!x->line)
			printf("%10" PRIu64 " %10" PRIu64 " %6s  (no line: code the compiler gave line 0)\n", x->incl,
			       x->excl, "");
		else
			printf("%10" PRIu64 " %10" PRIu64 " %6s  %s:%u\n", x->incl, x->excl, "", x->file, x->line);
	}
}

/* No source: the samples per instruction of the function's disassembly
 * (or per address, where objdump cannot give it). */
static void annotate_disassembly(const struct an_fn_samples *fs)
{
	uint64_t lo = fs->offset, hi = fs->offset + (fs->size > 1 ? fs->size : 1);
	for (size_t k = 0; k < fs->naddrs; k++) {
		if (fs->addrs[k].addr < lo)
			lo = fs->addrs[k].addr;
		if (fs->addrs[k].addr >= hi)
			hi = fs->addrs[k].addr + 1;
	}
	char **insn = NULL;
	uint64_t *at = NULL;
	size_t ninsn = 0;
	if (fs->module)
		ninsn = disassemble(fs->module, lo, hi + 16, &insn, &at);
	/* a sampled address counts for the instruction that contains it
	 * (callers' addresses point into their call instruction) */
	for (size_t i = 0; i < ninsn; i++) {
		uint64_t li = 0, le = 0, next = i + 1 < ninsn ? at[i + 1] : at[i] + 1;
		for (size_t k = 0; k < fs->naddrs; k++)
			if (fs->addrs[k].addr >= at[i] && fs->addrs[k].addr < next) {
				li += fs->addrs[k].incl;
				le += fs->addrs[k].excl;
			}
		if (li || le)
			printf("%10" PRIu64 " %10" PRIu64 "  %s\n", li, le, insn[i]);
		else
			printf("%10s %10s  %s\n", "", "", insn[i]);
		free(insn[i]);
	}
	free(insn);
	free(at);
	if (!ninsn)
		for (size_t k = 0; k < fs->naddrs; k++)
			printf("%10" PRIu64 " %10" PRIu64 "  0x%" PRIx64 "\n", fs->addrs[k].incl, fs->addrs[k].excl,
			       fs->addrs[k].addr);
}

/* Two files as told apart: their names, or their paths where the names are
 * one (op and v2/op). */
static void shown_apart(const char *x, const char *y, const char **a, const char **b)
{
	*a = util_file_name(x);
	*b = util_file_name(y);
	if (strcmp(*a, *b) == 0) {
		*a = x;
		*b = y;
	}
}

/* Sampling: the function's samples per source line, or per instruction. */
static int annotate_sampling(const struct fmt_data *d, const char *want, const char *input)
{
	char *module, *file_wanted;
	char *name = cmd_split_function(want, &module, &file_wanted);
	char *chosen = annotate_pick(d, name, input);
	if (d->damage) { /* (once the function is found: an error is then the one line) */
		warn("'%s' is damaged: %s; annotating what precedes the damage", input, d->damage);
		cmd_damaged = 1;
	}
	struct an_fn_samples fs;
	an_sample_function(d, chosen, module, file_wanted, &fs);
	if (!fs.module && module)
		die("annotate: no function '%s' in module '%s' in the samples of '%s'", chosen, module, input);
	if (!fs.module && file_wanted)
		die("annotate: no function '%s' of source file '%s' in the samples of '%s'", chosen, file_wanted, input);
	const char *a, *b;
	if (fs.other_file) { /* (two static functions of one name in one module) */
		shown_apart(fs.decl_file, fs.other_file, &a, &b);
		die("annotate: '%s' is a function of several source files (%s, %s): name one, as '%s:%s'", chosen, a,
		    b, b, chosen);
	}
	if (fs.other) { /* (one name, two functions: a static function in a program and its library) */
		shown_apart(fs.module, fs.other, &a, &b);
		die("annotate: '%s' is a function of several modules (%s, %s): name one, as '%s [%s]'", chosen, a, b,
		    chosen, b);
	}
	printf("# %s [%s]\n", chosen, fs.module ? fs.module : "?");
	printf("# %" PRIu64 " of %" PRIu64 " samples inclusive (%.2f%%), %" PRIu64 " exclusive (%.2f%%)\n", fs.incl,
	       fs.total, fs.total ? 100.0 * (double)fs.incl / (double)fs.total : 0.0, fs.excl,
	       fs.total ? 100.0 * (double)fs.excl / (double)fs.total : 0.0);
	/* the source file that holds the function's lines */
	const char *file = fs.decl_file && *fs.decl_file ? fs.decl_file : fs.nlines ? fs.lines[0].file : NULL;
	size_t flen = 0;
	/* a name from the data file: a regular file only, of a sane size
	 * (not /dev/zero, not a FIFO that never ends) */
	errno = 0;
	char *src = annotate_read_source(file, &flen);
	if (src) {
		annotate_source(&fs, file, src, flen);
	} else {
		if (file)
			printf("# source '%s' %s: samples per address, with the disassembly\n\n", file,
			       errno == EACCES ? not_readable : "not found");
		else
			printf("# no source lines known: samples per address, with the disassembly\n\n");
		annotate_disassembly(&fs);
	}
	free(src);
	an_fn_samples_free(&fs);
	free(chosen);
	free(name);
	free(module);
	free(file_wanted);
	return 0;
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"no-compensation", no_argument, NULL, 4},
						  {"no-pager", no_argument, NULL, 5},
						  {"help", no_argument, NULL, 'h'},
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	int c, nocomp = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		if (c == 'i')
			input = optarg;
		else if (c == 4)
			nocomp = 1;
		else if (c == 5)
			continue; /* (annotate never pages: accepted as by report) */
		else if (c == 'h') {
			fputs(annotate_usage, stdout);
			return 0;
		} else {
			cmd_bad_option("annotate", argv, "i:h", longopts);
		}
	}
	if (optind != argc - 1) {
		die("annotate: give one function name");
	}
	const char *want = argv[optind];
	struct fmt_data d;
	cmd_read(input, &d);
	if (strcmp(d.method, "sampling") != 0) {
		fmt_data_free(&d);
		return annotate_instr(input, want, nocomp);
	}
	int rc = annotate_sampling(&d, want, input);
	fmt_data_free(&d);
	return rc;
}
