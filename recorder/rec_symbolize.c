/*
 * rec_symbolize.c - naming the addresses a recording holds while the
 * binaries are at hand: a process's modules from its maps text
 * (rec_open_process, for both methods), and for sampling every sampled
 * address's function, source line and inline chain, kernel frames named
 * from /proc/kallsyms.  Both sampling recorders (perf's records,
 * rec_sample.c, and the in-process sampler's spool, rec_inproc.c) and the
 * instrumentation spool (rec_spool.c) come here; nothing here calls them.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_perf.h"
#include "recorder.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"

struct sym_proc *rec_open_process(struct fmt_process *p, const char *maps, size_t len)
{
	struct sym_proc *sp = sym_proc_open(maps ? maps : "", maps ? len : 0);
	if (!sp)
		die("out of memory");
	uint32_t nm;
	const struct fmt_module *mods = sym_proc_modules(sp, &nm);
	p->mods = xcalloc(nm, sizeof(*p->mods));
	for (uint32_t i = 0; i < nm; i++) {
		p->mods[i] = mods[i];
		p->mods[i].path = xstrdup(mods[i].path);
		p->mods[i].build_id = xstrdup(mods[i].build_id);
		p->mods[i].load = p->mods[i].unload = 0; /* mapped all along */
	}
	p->nmods = nm;
	if (!p->exe || !p->exe[0]) {
		free(p->exe);
		p->exe = xstrdup(nm ? mods[0].path : "");
	}
	return sp;
}

/* ------------------------------------------------------------------------
 * Kernel frames (--kernel): names from /proc/kallsyms
 * --------------------------------------------------------------------- */

struct ksym {
	uint64_t addr;
	char *name;
};

static struct ksym *ksyms;
static size_t nksyms;

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void load_kallsyms(void)
{
	static int loaded;
	if (loaded)
		return;
	loaded = 1;
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	char line[512];
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			ksyms = xrealloc(ksyms, cap * sizeof(*ksyms));
		}
		ksyms[nksyms++] = (struct ksym){a, xstrdup(name)};
	}
	fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), cmp_ksym);
}

/* The kernel function holding a; 0 if unknown (addresses hidden). */
static const struct ksym *kernel_symbol(uint64_t a)
{
	load_kallsyms();
	size_t lo = 0, hi = nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ksyms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ksyms[lo - 1] : NULL;
}

static void add_kernel_symbols(struct fmt_process *p, const uint64_t *addrs, size_t naddrs)
{
	uint32_t kmod = ~0u;
	for (size_t i = 0; i < naddrs; i++) {
		if (addrs[i] < REC_KERNEL_START)
			continue;
		if (kmod == ~0u) {
			p->mods = xrealloc(p->mods, (p->nmods + 1) * sizeof(*p->mods));
			p->mods[p->nmods] = (struct fmt_module){.start = REC_KERNEL_START, .end = ~0ull,
							     .path = xstrdup("[kernel.kallsyms]"),
							     .build_id = xstrdup("")};
			kmod = p->nmods++;
		}
		const struct ksym *k = kernel_symbol(addrs[i]);
		if (!k || (p->nsyms && p->syms[p->nsyms - 1].addr == k->addr))
			continue;
		int dup = 0;
		for (uint32_t j = 0; j < p->nsyms && !dup; j++)
			dup = p->syms[j].addr == k->addr;
		if (dup)
			continue;
		size_t next = (size_t)(k - ksyms) + 1;
		struct fmt_symbol *y = &p->syms[p->nsyms++];
		y->addr = k->addr;
		y->size = next < nksyms ? ksyms[next].addr - k->addr : 1;
		y->name = xstrdup(k->name);
		y->module = kmod;
		y->file = xstrdup("");
		y->line = 0;
	}
}

/*
 * The names a just-in-time compiler gives its code, for perf: node
 * --perf-basic-prof, the JVM's perf-map-agent, LuaJIT, .NET write
 * /tmp/perf-<pid>.map, one "START SIZE NAME" line (hex) per function.
 * Read as perf reads it: a regular file (no link followed) of stint's user
 * or root, so that no other user names a recording's code.  Sorted by
 * start; later lines win for one start (code replaced).
 */
struct jit_sym {
	uint64_t start, size;
	char *name;
};

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static struct jit_sym *read_perf_map(uint32_t pid, size_t *n)
{
	*n = 0;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	int fd = pid ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != getuid() && st.st_uid != 0)) {
		close(fd);
		return NULL;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return NULL;
	}
	struct jit_sym *v = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0 && *n < (1u << 24)) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		char *e1, *e2;
		uint64_t start = strtoull(line, &e1, 16), size = e1 != line ? strtoull(e1, &e2, 16) : 0;
		if (e1 == line || *e1 != ' ' || e2 == e1 + 1 || *e2 != ' ' || !size || !e2[1])
			continue;
		UTIL_GROW1(v, *n);
		v[(*n)++] = (struct jit_sym){start, size, xstrdup(e2 + 1)};
	}
	free(line);
	fclose(f);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_jit);
	return v;
}

static const struct jit_sym *jit_lookup(const struct jit_sym *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n; /* the last starting at or before a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a - v[lo - 1].start < v[lo - 1].size ? &v[lo - 1] : NULL;
}

void rec_symbolize_samples(struct fmt_process *p, const char *maps, size_t maps_len, uint64_t *addrs,
			   size_t naddrs)
{
	size_t njit = 0;
	struct jit_sym *jit = NULL;
	int jit_read = 0;
	struct sym_proc *sp = rec_open_process(p, maps, maps_len);
	util_sort_u64(addrs, naddrs);
	p->syms = xcalloc(naddrs, sizeof(*p->syms));
	p->lines = xcalloc(naddrs, sizeof(*p->lines));
	for (size_t i = 0; i < naddrs; i++) {
		uint64_t a = addrs[i];
		if (i && a == addrs[i - 1])
			continue;
		const char *file;
		uint32_t line;
		if (sym_proc_line(sp, a, &file, &line) == 0) {
			struct fmt_line *l = &p->lines[p->nlines++];
			l->addr = a;
			l->file = xstrdup(file);
			l->line = line;
			/* the functions inlined here stand on the stack too (doc/numbers.md, sampling) */
			struct sym_inline *inl;
			uint32_t ni = sym_proc_inlines(sp, a, &inl);
			if (ni) {
				l->inl = xcalloc(ni, sizeof(*l->inl));
				for (uint32_t k = 0; k < ni; k++)
					l->inl[k] = (struct fmt_inline){inl[k].name, inl[k].file, inl[k].line,
									inl[k].call_file, inl[k].call_line};
				l->ninl = ni;
				free(inl); /* the strings moved to l->inl */
			}
		}
		if (p->nsyms && p->syms[p->nsyms - 1].size &&
		    a < p->syms[p->nsyms - 1].addr + p->syms[p->nsyms - 1].size)
			continue; /* inside the function just added */
		struct sym_info si;
		uint64_t cs, ce;
		if (sym_proc_lookup(sp, a, &si) == 0 && !si.name && si.module >= 0 &&
		    sym_proc_code_range(sp, a, &cs, &ce) == 0) {
			/* no symbol (a stripped program): the function is the
			 * code range of its call-frame information, named by
			 * its file offset as instrumentation names it, so that
			 * its samples make one row, not one per address */
			uint32_t nm;
			const struct fmt_module *mm = &sym_proc_modules(sp, &nm)[si.module];
			si.name = xasprintf("0x%llx", (unsigned long long)(cs - mm->start + mm->offset));
			si.start = cs;
			si.size = ce - cs;
		}
		if (!si.name && a < REC_KERNEL_START) { /* code of no file: a JIT's, named for perf? */
			if (!jit_read) {
				jit = read_perf_map(p->pid, &njit);
				jit_read = 1;
			}
			const struct jit_sym *j = jit_lookup(jit, njit, a);
			if (j) {
				si.name = xstrdup(j->name);
				si.start = j->start;
				si.size = j->size;
			}
		}
		if (si.name && si.start <= a) {
			/* a symbol without a size (hand-written code: ld.so's
			 * _start) holds the addresses libdwfl gave it: the
			 * symbol is made to reach each of them, else a return
			 * address past its first byte had no name */
			int dup = 0;
			for (uint32_t k = 0; k < p->nsyms; k++)
				if (p->syms[k].addr == si.start) {
					if (p->syms[k].addr + p->syms[k].size <= a)
						p->syms[k].size = a - si.start + 1;
					dup = 1;
					break;
				}
			if (!dup) {
				struct fmt_symbol *y = &p->syms[p->nsyms++];
				y->addr = si.start;
				y->size = si.size ? si.size : a - si.start + 1;
				y->name = xstrdup(si.name);
				y->module = si.module >= 0 ? (uint32_t)si.module : ~0u;
				y->file = xstrdup(si.file ? si.file : "");
				y->line = si.line;
			}
		}
		sym_info_free(&si);
	}
	add_kernel_symbols(p, addrs, naddrs);
	fmt_sort_symbols(p);
	sym_proc_close(sp);
	for (size_t i = 0; i < njit; i++)
		free(jit[i].name);
	free(jit);
}
