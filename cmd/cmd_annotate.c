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
	"  FUNCTION           the function's name as the report shows it (or a part of it)\n";

struct line_count {
	char *file;
	uint32_t line;
	uint64_t incl, excl, last;
};

struct addr_count {
	uint64_t addr; /* module file offset */
	uint64_t incl, excl, last;
};

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

static int name_matches(const char *name, const char *want, int exact)
{
	if (exact)
		return strcmp(name, want) == 0;
	return strstr(name, want) != NULL;
}

/* One source line of text at s (up to e or the end), for printing. */
static int line_len(const char *s, const char *e)
{
	return (int)(e ? e - s : (long)strlen(s));
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
	cmd_load(input, &d, &r, nocomp, NULL);
	uint32_t found[16];
	uint32_t n = an_find_functions(&r, want, found, 16);
	if (n == 0)
		die("annotate: no function '%s' in '%s'", want, input);
	if (n > 1 && strcmp(r.funcs[found[0]].name, want) != 0) {
		fprintf(stderr, "stint: '%s' matches several functions:\n", want);
		for (uint32_t i = 0; i < n; i++)
			fprintf(stderr, "  %s [%s]\n", r.funcs[found[i]].name, r.mods[r.funcs[found[i]].module].base);
		die("annotate: name the function exactly");
	}
	uint32_t fn = found[0];
	cmd_need_sites(input, &d, "annotate");
	struct an_lines l;
	struct an_lines_opts lo = {.no_compensation = nocomp, .mode = AN_LINES_OF_FUNCTION, .fn = fn};
	if (an_lines_run(&d, &r, &lo, &l) < 0)
		die("out of memory");
	const struct an_func *f = &r.funcs[fn];
	const double den[AN_NVALUES] = {r.session.v[AN_EI], r.session.v[AN_EI], r.session.v[AN_AI],
					r.session.v[AN_AI]};
	printf("# %s [%s] (instrumentation%s)\n", f->name, r.mods[f->module].base,
	       nocomp ? ", no compensation" : "");
	for (uint32_t i = 0; i < r.nfunctions; i++)
		if (r.functions[i].func == fn) {
			const struct an_row *row = &r.functions[i];
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
	const char *file = f->file && *f->file ? f->file : NULL;
	for (uint32_t i = 0; !file && i < l.nlines; i++)
		if (!an_line_row_empty(&l.lines[i]))
			file = l.lines[i].file;
	size_t flen = 0;
	char *src = file ? util_read_regular(file, ANNOTATE_SOURCE_MAX, 0, &flen) : NULL;
	uint32_t lo_line = f->line ? f->line : UINT32_MAX, hi_line = f->line;
	for (uint32_t i = 0; file && i < l.nlines; i++)
		if (!an_line_row_empty(&l.lines[i]) && strcmp(l.lines[i].file, file) == 0) {
			if (l.lines[i].line < lo_line)
				lo_line = l.lines[i].line;
			if (l.lines[i].line > hi_line)
				hi_line = l.lines[i].line;
		}
	if (lo_line == UINT32_MAX)
		lo_line = 1;
	hi_line += 2;
	if (src)
		printf("# %s, lines %u-%u\n", file, lo_line, hi_line);
	else if (file)
		printf("# source '%s' not found: the values per line\n", file);
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
			for (int k = 0; k < AN_NVALUES; k++) {
				char t[32];
				out_fmt_time(t, sizeof(t), x->row.v[k]);
				printf("%10s %6.2f ", t, out_pct(x->row.v[k], den[k]));
			}
			printf("%8" PRIu64 " %6u  %.*s\n", x->row.calls, ln, line_len(s, e), s);
		} else {
			printf("%10s %6s %10s %6s %10s %6s %10s %6s %8s %6u  %.*s\n", "", "", "", "", "", "", "", "", "",
			       ln, line_len(s, e), s);
		}
	}
	if (!src) /* the rows, without their text */
		for (uint32_t i = 0; i < l.nlines; i++) {
			const struct an_line_row *x = &l.lines[i];
			if (an_line_row_empty(x))
				continue;
			for (int k = 0; k < AN_NVALUES; k++) {
				char t[32];
				out_fmt_time(t, sizeof(t), x->row.v[k]);
				printf("%10s %6.2f ", t, out_pct(x->row.v[k], den[k]));
			}
			printf("%8" PRIu64 " %6u  %s\n", x->row.calls, x->line, x->row.name);
		}
	free(src);
	an_lines_free(&l);
	an_result_free(&r);
	fmt_data_free(&d);
	return 0;
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"no-compensation", no_argument, NULL, 4},
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
		else if (c == 'h') {
			fputs(annotate_usage, stdout);
			return 0;
		} else {
			fputs(annotate_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		die("annotate: give one function name");
	}
	const char *want = argv[optind];
	struct fmt_data d;
	cmd_read(input, &d);
	if (d.damage) {
		warn("'%s' is damaged: %s; annotating what precedes the damage", input, d.damage);
		cmd_damaged = 1;
	}
	if (strcmp(d.method, "sampling") != 0) {
		fmt_data_free(&d);
		return annotate_instr(input, want, nocomp);
	}
	/* exact name first; else a unique function containing the text; the
	 * functions are those with symbols and those inlined at sampled code */
	int exact = 0;
	char *chosen = NULL;
	for (int pass = 0; pass < 2 && !chosen; pass++) {
		exact = pass == 0;
		int found = 0;
		for (uint32_t p = 0; p < d.nprocs; p++) {
			const struct fmt_process *pr = &d.procs[p];
			for (uint32_t s = 0, l = 0, k = 0; s < pr->nsyms || l < pr->nlines;) {
				const char *nm;
				if (s < pr->nsyms) {
					nm = pr->syms[s++].name;
				} else if (k < pr->lines[l].ninl) {
					nm = pr->lines[l].inl[k++].name;
				} else {
					l++, k = 0;
					continue;
				}
				if (!name_matches(nm, want, exact))
					continue;
				if (chosen && strcmp(chosen, nm) != 0) {
					if (found == 1)
						fprintf(stderr, "stint: '%s' matches several functions:\n  %s\n", want, chosen);
					fprintf(stderr, "  %s\n", nm);
					found++;
					continue;
				}
				if (!chosen) {
					chosen = xstrdup(nm);
					found = 1;
				}
			}
		}
		if (found > 1)
			die("annotate: name the function exactly");
	}
	if (!chosen)
		die("annotate: no function '%s' in the samples of '%s'", want, input);

	struct line_count *lines = NULL;
	struct addr_count *addrs = NULL;
	size_t nlines = 0, naddrs = 0;
	uint64_t total = 0, incl = 0, excl = 0, sample = 0;
	const char *module = NULL, *decl_file = NULL;
	uint32_t decl_line = 0;
	uint64_t fn_off = 0, fn_size = 0; /* the function in its module file */
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	for (uint32_t t = 0; t < d.nthreads; t++) {
		const struct fmt_thread *th = &d.threads[t];
		const struct fmt_process *p = &d.procs[th->proc];
		const uint8_t *q = th->ev, *end = th->ev + th->ev_len;
		uint64_t dt;
		unsigned n;
		int cut;
		while (fmt_get_sample(&q, end, &dt, pcs, &n, &cut) > 0) {
			sample++;
			total++;
			int counted = 0;
			for (unsigned i = 0; i < n; i++) {
				uint64_t a = fmt_caller_pc(pcs[i], i == 0);
				const struct fmt_symbol *s = fmt_symbol_at(p, a);
				const struct fmt_line *l = fmt_line_at(p, a);
				uint32_t ninl = l ? l->ninl : 0;
				/* the frames at a, outermost first: the function holding
				 * the code (k = -1), then each one inlined there; the
				 * chosen one's line is the next inlined call site, or
				 * the address's own line in the innermost */
				for (int k = -1; k < (int)ninl; k++) {
					const char *nm = k < 0 ? (s ? s->name : NULL) : l->inl[k].name;
					if (!nm || strcmp(nm, chosen) != 0)
						continue;
					int top = i == 0 && k == (int)ninl - 1;
					if (!module) {
						const struct fmt_module *m = NULL;
						for (uint32_t mi = 0; mi < p->nmods; mi++)
							if (a >= p->mods[mi].start && a < p->mods[mi].end)
								m = &p->mods[mi];
						if (m) {
							module = m->path;
							decl_file = k < 0 ? s->file : l->inl[k].file;
							decl_line = k < 0 ? s->line : l->inl[k].line;
							fn_off = (k < 0 ? s->addr : a) - m->start + m->offset;
							fn_size = k < 0 ? s->size : 1;
						}
					}
					if (!counted)
						incl++;
					if (top)
						excl++;
					counted = 1;
					const char *lf = NULL;
					uint32_t ll = 0;
					if (k + 1 < (int)ninl) {
						lf = l->inl[k + 1].call_file;
						ll = l->inl[k + 1].call_line;
					} else if (l) {
						lf = l->file;
						ll = l->line;
					}
					if (lf && ll) {
						size_t j;
						for (j = 0; j < nlines; j++)
							if (lines[j].line == ll && strcmp(lines[j].file, lf) == 0)
								break;
						if (j == nlines) {
							UTIL_GROW1(lines, nlines);
							lines[nlines++] = (struct line_count){(char *)lf, ll, 0, 0, 0};
						}
						if (lines[j].last != sample) {
							lines[j].incl++;
							lines[j].last = sample;
						}
						if (top)
							lines[j].excl++;
					}
					uint64_t off = a;
					for (uint32_t m = 0; m < p->nmods; m++)
						if (a >= p->mods[m].start && a < p->mods[m].end)
							off = a - p->mods[m].start + p->mods[m].offset;
					size_t j;
					for (j = 0; j < naddrs; j++)
						if (addrs[j].addr == off)
							break;
					if (j == naddrs) {
						UTIL_GROW1(addrs, naddrs);
						addrs[naddrs++] = (struct addr_count){off, 0, 0, 0};
					}
					if (addrs[j].last != sample) {
						addrs[j].incl++;
						addrs[j].last = sample;
					}
					if (top)
						addrs[j].excl++;
				}
			}
		}
	}
	free(pcs);
	printf("# %s [%s]\n", chosen, module ? module : "?");
	printf("# %" PRIu64 " of %" PRIu64 " samples inclusive (%.2f%%), %" PRIu64 " exclusive (%.2f%%)\n", incl,
	       total, total ? 100.0 * (double)incl / (double)total : 0.0, excl,
	       total ? 100.0 * (double)excl / (double)total : 0.0);
	/* the source file that holds the function's lines */
	const char *file = decl_file && *decl_file ? decl_file : nlines ? lines[0].file : NULL;
	size_t flen = 0;
	/* a name from the data file: a regular file only, of a sane size
	 * (not /dev/zero, not a FIFO that never ends) */
	char *src = file ? util_read_regular(file, ANNOTATE_SOURCE_MAX, 0, &flen) : NULL;
	if (src) {
		uint32_t lo = decl_line ? decl_line : UINT32_MAX, hi = decl_line;
		for (size_t k = 0; k < nlines; k++)
			if (strcmp(lines[k].file, file) == 0) {
				if (lines[k].line < lo)
					lo = lines[k].line;
				if (lines[k].line > hi)
					hi = lines[k].line;
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
		for (char *s = src, *e; s && *s && ln <= hi; s = e ? e + 1 : NULL, ln++) {
			e = strchr(s, '\n');
			if (ln < lo)
				continue;
			uint64_t li = 0, le = 0;
			for (size_t k = 0; k < nlines; k++)
				if (lines[k].line == ln && strcmp(lines[k].file, file) == 0) {
					li = lines[k].incl;
					le = lines[k].excl;
				}
			if (li || le)
				printf("%10" PRIu64 " %10" PRIu64 " %6u  %.*s\n", li, le, ln,
				       (int)(e ? e - s : (long)strlen(s)), s);
			else
				printf("%10s %10s %6u  %.*s\n", "", "", ln, (int)(e ? e - s : (long)strlen(s)), s);
		}
		free(src);
	} else {
		if (file)
			printf("# source '%s' not found: samples per address, with the disassembly\n\n", file);
		else
			printf("# no source lines known: samples per address, with the disassembly\n\n");
		uint64_t lo = fn_off, hi = fn_off + (fn_size > 1 ? fn_size : 1);
		for (size_t k = 0; k < naddrs; k++) {
			if (addrs[k].addr < lo)
				lo = addrs[k].addr;
			if (addrs[k].addr >= hi)
				hi = addrs[k].addr + 1;
		}
		char **insn = NULL;
		uint64_t *at = NULL;
		size_t ninsn = 0;
		if (module)
			ninsn = disassemble(module, lo, hi + 16, &insn, &at);
		int shown = ninsn > 0;
		/* a sampled address counts for the instruction that contains it
		 * (callers' addresses point into their call instruction) */
		for (size_t i = 0; i < ninsn; i++) {
			uint64_t li = 0, le = 0, next = i + 1 < ninsn ? at[i + 1] : at[i] + 1;
			for (size_t k = 0; k < naddrs; k++)
				if (addrs[k].addr >= at[i] && addrs[k].addr < next) {
					li += addrs[k].incl;
					le += addrs[k].excl;
				}
			if (li || le)
				printf("%10" PRIu64 " %10" PRIu64 "  %s\n", li, le, insn[i]);
			else
				printf("%10s %10s  %s\n", "", "", insn[i]);
			free(insn[i]);
		}
		free(insn);
		free(at);
		if (!shown)
			for (size_t k = 0; k < naddrs; k++)
				printf("%10" PRIu64 " %10" PRIu64 "  0x%" PRIx64 "\n", addrs[k].incl, addrs[k].excl,
				       addrs[k].addr);
	}
	free(lines);
	free(addrs);
	free(chosen);
	fmt_data_free(&d);
	return 0;
}
