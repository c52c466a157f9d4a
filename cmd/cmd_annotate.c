/*
 * cmd_annotate.c - `stint annotate FUNC`: the source of one function with
 * the samples of each line (inclusive: samples with the line anywhere on
 * the stack, once each; exclusive: samples that hit it), or its
 * disassembly with samples per address where the source cannot be found.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "../format/fmt_sample.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"

static const char annotate_usage[] =
	"usage: stint annotate [-i FILE] FUNCTION\n"
	"\n"
	"  -i, --input FILE   sampling data file (default stint.data)\n"
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

static int name_matches(const char *name, const char *want, int exact)
{
	if (exact)
		return strcmp(name, want) == 0;
	return strstr(name, want) != NULL;
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {{"input", required_argument, NULL, 'i'},
						  {"help", no_argument, NULL, 'h'},
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		if (c == 'i')
			input = optarg;
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
	char err[1024];
	if (fmt_read(input, &d, err, sizeof(err)) < 0)
		die("%s", err);
	if (d.damage) {
		warn("'%s' is damaged: %s; annotating what precedes the damage", input, d.damage);
		cmd_damaged = 1;
	}
	if (strcmp(d.method, "sampling") != 0)
		die("annotate needs sampling data ('%s' holds %s data): stint record -m sample", input,
		    d.method);
	/* exact name first; else a unique function containing the text */
	int exact = 0;
	char *chosen = NULL;
	for (int pass = 0; pass < 2 && !chosen; pass++) {
		exact = pass == 0;
		int found = 0;
		for (uint32_t p = 0; p < d.nprocs; p++)
			for (uint32_t s = 0; s < d.procs[p].nsyms; s++) {
				const char *nm = d.procs[p].syms[s].name;
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
				uint64_t a = i ? pcs[i] - 1 : pcs[i];
				const struct fmt_symbol *s = fmt_symbol_at(p, a);
				if (!s || strcmp(s->name, chosen) != 0)
					continue;
				if (!module && s->module < p->nmods) {
					const struct fmt_module *m = &p->mods[s->module];
					module = m->path;
					decl_file = s->file;
					decl_line = s->line;
					fn_off = s->addr - m->start + m->offset;
					fn_size = s->size;
				}
				if (!counted)
					incl++;
				if (i == 0)
					excl++;
				counted = 1;
				const struct fmt_line *l = fmt_line_at(p, a);
				if (l) {
					size_t k;
					for (k = 0; k < nlines; k++)
						if (lines[k].line == l->line && strcmp(lines[k].file, l->file) == 0)
							break;
					if (k == nlines) {
						lines = xrealloc(lines, (nlines + 1) * sizeof(*lines));
						lines[nlines++] = (struct line_count){l->file, l->line, 0, 0, 0};
					}
					if (lines[k].last != sample) {
						lines[k].incl++;
						lines[k].last = sample;
					}
					if (i == 0)
						lines[k].excl++;
				}
				uint64_t off = a;
				for (uint32_t m = 0; m < p->nmods; m++)
					if (a >= p->mods[m].start && a < p->mods[m].end)
						off = a - p->mods[m].start + p->mods[m].offset;
				size_t k;
				for (k = 0; k < naddrs; k++)
					if (addrs[k].addr == off)
						break;
				if (k == naddrs) {
					addrs = xrealloc(addrs, (naddrs + 1) * sizeof(*addrs));
					addrs[naddrs++] = (struct addr_count){off, 0, 0, 0};
				}
				if (addrs[k].last != sample) {
					addrs[k].incl++;
					addrs[k].last = sample;
				}
				if (i == 0)
					addrs[k].excl++;
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
	char *src = file ? util_read_file(file, &flen) : NULL;
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
		hi += 2;
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
		char *cmd = module ? xasprintf("objdump -d --no-show-raw-insn -C --start-address=0x%" PRIx64
					      " --stop-address=0x%" PRIx64 " '%s' 2>/dev/null",
					      lo, hi + 16, module)
				   : NULL;
		FILE *pf = cmd ? popen(cmd, "r") : NULL;
		char buf[512];
		char **insn = NULL;
		uint64_t *at = NULL;
		size_t ninsn = 0;
		while (pf && fgets(buf, sizeof(buf), pf)) {
			unsigned long long a;
			char colon;
			if (sscanf(buf, " %llx%c", &a, &colon) != 2 || colon != ':')
				continue;
			buf[strcspn(buf, "\n")] = 0;
			insn = xrealloc(insn, (ninsn + 1) * sizeof(*insn));
			at = xrealloc(at, (ninsn + 1) * sizeof(*at));
			insn[ninsn] = xstrdup(buf);
			at[ninsn++] = a;
		}
		if (pf)
			pclose(pf);
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
		free(cmd);
	}
	free(lines);
	free(addrs);
	free(chosen);
	fmt_data_free(&d);
	return 0;
}
