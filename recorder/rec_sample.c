/*
 * rec_sample.c - from raw perf records to a sampling data set: replays the
 * records in time order, keeping each process image's memory map (fork
 * copies it, exec starts afresh, mmap replaces what it lands on), unwinds
 * every sample's stack with the map in force at that moment, and finally
 * symbolizes every address (function, module, source line) while the
 * binaries are at hand.
 *
 * An address can hold different files over a run (a library closed and
 * another loaded where it was, or where a file was mapped and unmapped:
 * perf has no munmap record, so the mapping made last over an address is
 * the one in force, as perf itself reads it).  The data file names code by
 * address, one table per process, so a mapping that lands where another
 * file was mapped before gets an address space of its own, a "tag": its
 * sampled addresses are stored with the tag in bits 56 and up (above any
 * user address, below the kernel's), and its modules, symbols and lines
 * carry the same tag.  Offsets within a module (a - start + offset) are
 * unchanged, and a process that never reuses an address has no tag.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_perf.h"
#include "recorder.h"
#include "../format/fmt_sample.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"


struct srec {
	uint64_t time;
	uint32_t seq; /* arrival order, to keep the sort stable */
	uint32_t type;
	const uint8_t *p;
	uint16_t size, misc;
};

struct sthread {
	uint32_t tid;
	char name[32];
	uint64_t start, last;
	uint8_t *ev;
	size_t len, cap;
	uint64_t nsamples;
};

#define STAG_SHIFT 56
#define STAG_MAX 127 /* tagged addresses stay below REC_KERNEL_START */

/* One mapping of a process image, from perf's MMAP2 or /proc/PID/maps. */
struct smap {
	uint64_t start, end, pgoff, ino;
	char perms[5];
	uint32_t tag;
	char *path;          /* "" for an anonymous mapping without a name */
};

/* Maps text of the mappings made under one tag (for the final symbolization). */
struct stext {
	char *s;
	size_t len, cap;
};

/* One process image: a pid from fork or exec until the next exec. */
struct simage {
	uint32_t pid, ppid;
	char comm[32];
	char *command;       /* full command line when known */
	struct smap *live;   /* the mappings in force: sorted, disjoint */
	uint32_t nlive, caplive;
	struct smap *hist;   /* every file mapping ever made, sorted by start */
	uint32_t nhist;      /* (room: UTIL_GROW1's) */
	uint64_t histmax;    /* the longest of them (to bound overlap scans) */
	struct stext *texts; /* per tag */
	uint32_t ntags;
	int dirty;           /* code mappings changed since sp was built */
	struct sym_proc *sp;
	struct sthread *threads;
	uint32_t nthreads;
	uint64_t *addrs;     /* every address sampled (for symbols and lines) */
	size_t naddrs, capaddrs;
	int current;         /* the pid's image in force */
	uint64_t born, died; /* its fork or exec, and its exit or next exec (0: not seen) */
	int compat32;        /* a 32-bit program (its samples' registers are) */
	const struct rec_attach *at; /* the process attached to: its thread names */
};

struct sstate {
	struct simage *img;
	uint32_t nimg, capimg;
	const struct rec_perf_opts *o;
	struct rec_sample_stats *st;
};

static int cmp_srec(const void *a, const void *b)
{
	const struct srec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct simage *image_of(struct sstate *s, uint32_t pid)
{
	for (uint32_t i = s->nimg; i-- > 0;)
		if (s->img[i].pid == pid && s->img[i].current)
			return &s->img[i];
	return NULL;
}

static struct simage *new_image(struct sstate *s, uint32_t pid, uint32_t ppid, const char *comm, uint64_t time)
{
	struct simage *old = image_of(s, pid);
	if (old) {
		old->current = 0;
		if (!old->died)
			old->died = time;
	}
	if (s->nimg == s->capimg) {
		s->capimg = s->capimg ? s->capimg * 2 : 8;
		s->img = xrealloc(s->img, s->capimg * sizeof(*s->img));
	}
	struct simage *im = &s->img[s->nimg++];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->ppid = ppid;
	snprintf(im->comm, sizeof(im->comm), "%s", comm ? comm : "");
	im->current = 1;
	im->dirty = 1;
	im->born = time;
	return im;
}

static void text_append(struct stext *t, const char *line, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = t->cap ? t->cap * 2 : 8192;
		while (t->cap < t->len + n + 1)
			t->cap *= 2;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s + t->len, line, n);
	t->len += n;
	t->s[t->len] = 0;
}

static int map_line(const struct smap *m, char *line, size_t size)
{
	int n = snprintf(line, size, "%llx-%llx %s %08llx 00:00 %llu %s\n", (unsigned long long)m->start,
			 (unsigned long long)m->end, m->perms, (unsigned long long)m->pgoff,
			 (unsigned long long)m->ino, m->path);
	return n > 0 && (size_t)n < size ? n : 0;
}

/* A mapping of a file (a module, or data a module may be loaded over later). */
static int is_file(const struct smap *m)
{
	return (m->path[0] == '/' && m->path[1] != '/') || strcmp(m->path, "[vdso]") == 0;
}

/* What the unwinder's view of the process depends on. */
static int is_code_relevant(const struct smap *m)
{
	return is_file(m) || m->perms[2] == 'x';
}

/* The first live mapping ending past addr. */
static uint32_t live_from(const struct simage *im, uint64_t addr)
{
	uint32_t lo = 0, hi = im->nlive;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (im->live[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The tag of a new file mapping: that of the load it continues (ld.so maps
 * a library's span, then its segments over it), else the first under which
 * nothing else was ever mapped over its range (the same file at the same
 * load address again, a library closed and opened again, shares it) and
 * the same file's code was not mapped with another bias.
 */
static uint32_t tag_for(const struct simage *im, const struct smap *m)
{
	for (uint32_t i = live_from(im, m->start); i < im->nlive && im->live[i].start < m->end; i++)
		if (strcmp(im->live[i].path, m->path) == 0 && im->live[i].ino == m->ino)
			return im->live[i].tag;
	uint64_t lo = m->start > im->histmax ? m->start - im->histmax : 0;
	uint32_t first = 0, hi = im->nhist;
	while (first < hi) {
		uint32_t mid = first + (hi - first) / 2;
		if (im->hist[mid].start < lo)
			first = mid + 1;
		else
			hi = mid;
	}
	uint64_t busy[(STAG_MAX + 64) / 64] = {0};
	for (uint32_t i = first; i < im->nhist && im->hist[i].start < m->end; i++) {
		const struct smap *h = &im->hist[i];
		if (h->end <= m->start)
			continue;
		if (strcmp(h->path, m->path) != 0 || h->ino != m->ino || h->start - h->pgoff != m->start - m->pgoff)
			busy[h->tag / 64] |= 1ull << (h->tag % 64);
	}
	/* the same file's code mapped again elsewhere with another bias (V8
	 * maps its builtins out of node's file a second time) is another
	 * module: under one tag the two would make one, with one bias */
	for (uint32_t i = 0; m->perms[2] == 'x' && i < im->nhist; i++) {
		const struct smap *h = &im->hist[i];
		if (h->perms[2] == 'x' && h->ino == m->ino && h->start - h->pgoff != m->start - m->pgoff &&
		    strcmp(h->path, m->path) == 0)
			busy[h->tag / 64] |= 1ull << (h->tag % 64);
	}
	uint32_t t = 0;
	while (t < STAG_MAX && (busy[t / 64] >> (t % 64) & 1))
		t++;
	return t; /* (past STAG_MAX tags the last is shared: names may be wrong again) */
}

/* Mapping m (its path taken over) lands: it replaces whatever it covers. */
static void add_mapping(struct simage *im, struct smap m)
{
	m.tag = is_file(&m) ? tag_for(im, &m) : 0;
	int relevant = is_code_relevant(&m);
	uint32_t i = live_from(im, m.start), j = i;
	struct smap left = {0}, right = {0};
	int has_left = 0, has_right = 0;
	for (; j < im->nlive && im->live[j].start < m.end; j++) {
		struct smap *o = &im->live[j];
		relevant |= is_code_relevant(o);
		if (o->start < m.start) {
			left = *o;
			left.end = m.start;
			left.path = xstrdup(o->path);
			has_left = 1;
		}
		if (o->end > m.end) {
			right = *o;
			right.pgoff += m.end - o->start;
			right.start = m.end;
			right.path = xstrdup(o->path);
			has_right = 1;
		}
		free(o->path);
	}
	uint32_t add = 1 + (uint32_t)has_left + (uint32_t)has_right, removed = j - i;
	if (im->nlive - removed + add > im->caplive) {
		im->caplive = im->caplive ? im->caplive * 2 : 64;
		while (im->caplive < im->nlive - removed + add)
			im->caplive *= 2;
		im->live = xrealloc(im->live, im->caplive * sizeof(*im->live));
	}
	memmove(im->live + i + add, im->live + j, (im->nlive - j) * sizeof(*im->live));
	im->nlive = im->nlive - removed + add;
	if (has_left)
		im->live[i++] = left;
	im->live[i++] = m;
	if (has_right)
		im->live[i] = right;
	if (relevant)
		im->dirty = 1;

	if (m.tag >= im->ntags) {
		im->texts = xrealloc(im->texts, (m.tag + 1) * sizeof(*im->texts));
		memset(im->texts + im->ntags, 0, (m.tag + 1 - im->ntags) * sizeof(*im->texts));
		im->ntags = m.tag + 1;
	}
	char line[4400];
	int n = map_line(&m, line, sizeof(line));
	if (n)
		text_append(&im->texts[m.tag], line, (size_t)n);
	if (!is_file(&m))
		return;
	uint32_t k = 0, hi = im->nhist;
	while (k < hi) {
		uint32_t mid = k + (hi - k) / 2;
		if (im->hist[mid].start <= m.start)
			k = mid + 1;
		else
			hi = mid;
	}
	UTIL_GROW1(im->hist, im->nhist);
	memmove(im->hist + k + 1, im->hist + k, (im->nhist - k) * sizeof(*im->hist));
	im->hist[k] = m;
	im->hist[k].path = xstrdup(m.path);
	im->nhist++;
	if (m.end - m.start > im->histmax)
		im->histmax = m.end - m.start;
}

/* The mappings of a /proc/PID/maps text, in force from now on. */
static void add_maps_text(struct simage *im, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4400];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		unsigned long long a, b, off, ino;
		struct smap m = {0};
		int pos = 0;
		if (sscanf(line, "%llx-%llx %4s %llx %*s %llu %n", &a, &b, m.perms, &off, &ino, &pos) < 5 || !pos ||
		    b <= a)
			continue;
		m.start = a;
		m.end = b;
		m.pgoff = off;
		m.ino = ino;
		m.path = xstrdup(line + pos);
		add_mapping(im, m);
	}
}

/* The tagged form of a sampled address: its mapping's tag at this moment. */
static uint64_t tagged(const struct simage *im, uint64_t a)
{
	if (im->ntags < 2)
		return a;
	uint32_t i = live_from(im, a);
	if (i < im->nlive && im->live[i].start <= a && im->live[i].tag)
		return a | (uint64_t)im->live[i].tag << STAG_SHIFT;
	return a;
}

/* Maps text of the mappings in force, for the unwinder. */
static char *live_text(const struct simage *im, size_t *len)
{
	struct stext t = {0};
	char line[4400];
	for (uint32_t i = 0; i < im->nlive; i++) {
		int n = map_line(&im->live[i], line, sizeof(line));
		if (n)
			text_append(&t, line, (size_t)n);
	}
	*len = t.len;
	return t.s;
}

/* A forked child starts with its parent's mappings and their history. */
static void copy_maps(struct simage *im, const struct simage *parent)
{
	im->live = xmalloc((parent->nlive + 1) * sizeof(*im->live));
	im->nlive = im->caplive = parent->nlive;
	for (uint32_t i = 0; i < parent->nlive; i++) {
		im->live[i] = parent->live[i];
		im->live[i].path = xstrdup(parent->live[i].path);
	}
	/* hist grows by UTIL_GROW1, which takes the room for a power of two:
	 * nhist + 1 elements were written past at the next mapping the child
	 * made (a forked worker mapping a file: PostgreSQL's parallel workers) */
	uint32_t room = 1;
	while (room < parent->nhist)
		room *= 2;
	im->hist = xmalloc(room * sizeof(*im->hist));
	im->nhist = parent->nhist;
	for (uint32_t i = 0; i < parent->nhist; i++) {
		im->hist[i] = parent->hist[i];
		im->hist[i].path = xstrdup(parent->hist[i].path);
	}
	im->histmax = parent->histmax;
	im->texts = xcalloc(parent->ntags + 1, sizeof(*im->texts));
	im->ntags = parent->ntags;
	for (uint32_t k = 0; k < parent->ntags; k++)
		if (parent->texts[k].len)
			text_append(&im->texts[k], parent->texts[k].s, parent->texts[k].len);
	im->dirty = 1;
}

static void free_maps(struct simage *im)
{
	for (uint32_t i = 0; i < im->nlive; i++)
		free(im->live[i].path);
	for (uint32_t i = 0; i < im->nhist; i++)
		free(im->hist[i].path);
	for (uint32_t k = 0; k < im->ntags; k++)
		free(im->texts[k].s);
	free(im->live);
	free(im->hist);
	free(im->texts);
}

static struct sthread *thread_of(struct simage *im, uint32_t tid, uint64_t time)
{
	for (uint32_t i = 0; i < im->nthreads; i++)
		if (im->threads[i].tid == tid)
			return &im->threads[i];
	UTIL_GROW1(im->threads, im->nthreads);
	struct sthread *t = &im->threads[im->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->start = t->last = time;
	snprintf(t->name, sizeof(t->name), "%s", im->comm);
	for (uint32_t i = 0; im->at && i < im->at->nthreads; i++)
		if (im->at->threads[i].tid == tid)
			snprintf(t->name, sizeof(t->name), "%s", im->at->threads[i].name);
	return t;
}

/* The first line of a small /proc file, without its newline, into buf. */
static void proc_line(const char *path, char *buf, size_t n)
{
	size_t len;
	char *c = util_read_file(path, &len);
	buf[0] = 0;
	if (c) {
		snprintf(buf, n, "%s", c);
		buf[strcspn(buf, "\n")] = 0;
		free(c);
	}
}

int rec_attach_snapshot(pid_t pid, struct rec_attach *at)
{
	memset(at, 0, sizeof(*at));
	at->pid = pid;
	char path[96];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	at->maps = util_read_file(path, &at->maps_len);
	if (!at->maps)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	char *c = util_read_file(path, &n);
	if (c && n) {
		util_args_joined(c, n);
		at->command = c;
	} else {
		free(c);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	proc_line(path, at->comm, sizeof(at->comm));
	if (!at->command) /* a kernel thread, or a process without arguments */
		at->command = xasprintf("[%s]", at->comm);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	char *st = util_read_file(path, &n);
	const char *rp = st ? strrchr(st, ')') : NULL;
	int ppid = 0;
	if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1)
		at->ppid = ppid;
	free(st);
	pid_t *tids = NULL;
	int nt = rec_perf_thread_ids(pid, &tids);
	if (nt > 0) {
		at->threads = xcalloc((size_t)nt, sizeof(*at->threads));
		for (int i = 0; i < nt; i++) {
			snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tids[i]);
			at->threads[at->nthreads].tid = (uint32_t)tids[i];
			proc_line(path, at->threads[at->nthreads].name, sizeof(at->threads[0].name));
			at->nthreads++;
		}
	}
	free(tids);
	return 0;
}

void rec_attach_free(struct rec_attach *at)
{
	free(at->maps);
	free(at->command);
	free(at->threads);
	memset(at, 0, sizeof(*at));
}

/* Read /proc/PID/maps of a process that ran before recording began. */
static void image_from_proc(struct simage *im)
{
	char path[64];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%u/maps", im->pid);
	char *m = util_read_file(path, &n);
	if (m) {
		add_maps_text(im, m, n);
		free(m);
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", im->pid);
	char *c = util_read_file(path, &n);
	if (c) {
		util_args_joined(c, n);
		free(im->command);
		im->command = c;
	}
}

static void on_mmap2(struct simage *im, const uint8_t *p, size_t size)
{
	const struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_gen;
		uint32_t prot, flags;
	} *m = (const void *)(p + sizeof(struct perf_event_header));
	const char *name = (const char *)(m + 1);
	size_t room = size - sizeof(struct perf_event_header) - sizeof(*m);
	if (size < sizeof(struct perf_event_header) + sizeof(*m) || !memchr(name, 0, room))
		return;
	if ((name[0] != '/' && strcmp(name, "[vdso]") != 0) || !m->len)
		return;
	struct smap sm = {.start = m->addr, .end = m->addr + m->len, .pgoff = m->pgoff, .ino = m->ino};
	snprintf(sm.perms, sizeof(sm.perms), "%c%c%cp", (m->prot & 1) ? 'r' : '-', (m->prot & 2) ? 'w' : '-',
		 (m->prot & 4) ? 'x' : '-');
	sm.path = xstrdup(name);
	add_mapping(im, sm);
}

static void add_addr(struct simage *im, uint64_t a)
{
	if (im->naddrs == im->capaddrs) {
		im->capaddrs = im->capaddrs ? im->capaddrs * 2 : 4096;
		im->addrs = xrealloc(im->addrs, im->capaddrs * sizeof(*im->addrs));
	}
	im->addrs[im->naddrs++] = a;
}

/* A stack cut short at code without call-frame information: count it
 * under its module, so that record and report can say where. */
static void count_no_cfi(struct rec_sample_stats *st, struct sym_proc *sp, uint64_t pc)
{
	uint32_t nmods;
	const struct fmt_module *mods = sym_proc_modules(sp, &nmods);
	int m = sym_proc_module_of(sp, pc);
	struct stat fst;
	if (m >= 0 && mods[m].path[0] == '/' && stat(mods[m].path, &fst) < 0 && errno == ENOENT) {
		/* a program removed once it ran (a configure test, a test
		 * harness's binary): its code was not without unwind
		 * information, its file was gone when the samples were read */
		st->no_file++;
		return;
	}
	st->no_cfi++;
	/* no file: code made at run time (a JIT's), as the report's [anon] */
	const char *slash = m < 0 ? NULL : strrchr(mods[m].path, '/');
	const char *name = m < 0 ? "[anon]" : slash ? slash + 1 : mods[m].path;
	size_t k, nslots = sizeof(st->no_cfi_at) / sizeof(st->no_cfi_at[0]);
	for (k = 0; k < nslots && st->no_cfi_at[k].n; k++)
		if (strncmp(st->no_cfi_at[k].module, name, sizeof(st->no_cfi_at[k].module) - 1) == 0)
			break;
	if (k == nslots)
		return; /* past the first eight modules: counted in no_cfi only */
	if (!st->no_cfi_at[k].n)
		snprintf(st->no_cfi_at[k].module, sizeof(st->no_cfi_at[k].module), "%s", name);
	st->no_cfi_at[k].n++;
}

static int cmp_no_cfi(const void *a, const void *b)
{
	const struct rec_no_cfi_at *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->module, y->module);
}

void rec_sample_no_cfi_sort(struct rec_sample_stats *st)
{
	size_t n = 0, nslots = sizeof(st->no_cfi_at) / sizeof(st->no_cfi_at[0]);
	while (n < nslots && st->no_cfi_at[n].n)
		n++;
	qsort(st->no_cfi_at, n, sizeof(st->no_cfi_at[0]), cmp_no_cfi);
}

/* The kernel's frame limit of a callchain (kernel.perf_event_max_stack). */
static uint64_t kernel_max_stack(void)
{
	static uint64_t max;
	if (!max) {
		char buf[32] = "";
		int fd = open("/proc/sys/kernel/perf_event_max_stack", O_RDONLY | O_CLOEXEC);
		ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		max = r > 0 ? strtoull(buf, NULL, 10) : 0;
		if (!max)
			max = 127;
	}
	return max;
}

static void on_sample(struct sstate *s, const uint8_t *p, size_t size, uint64_t time)
{
	const uint8_t *q = p + sizeof(struct perf_event_header), *end = p + size;
	uint64_t ip, nr = 0;
	uint32_t pid, tid;
	const uint64_t *chain = NULL;
	memcpy(&ip, q, 8);
	memcpy(&pid, q + 8, 4);
	memcpy(&tid, q + 12, 4);
	q += 32;
	if (s->o->callgraph == REC_CG_FP || s->o->kernel) {
		memcpy(&nr, q, 8);
		chain = (const uint64_t *)(q + 8);
		q += 8 + 8 * nr;
		if (q > end)
			return;
	}
	uint64_t pcs[FMT_SAMPLE_MAX_FRAMES];
	int n = 0, cut = 0;
	/* kernel frames first (innermost), if asked for */
	int in_kernel = 0;
	for (uint64_t i = 0; chain && i < nr && s->o->kernel; i++) {
		if (chain[i] >= (uint64_t)-4095) {
			in_kernel = chain[i] == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (in_kernel && n < FMT_SAMPLE_MAX_FRAMES)
			pcs[n++] = chain[i];
	}
	struct simage *im = image_of(s, pid);
	if (!im) {
		im = new_image(s, pid, 0, "", 0); /* from before the recording */
		image_from_proc(im);
	}
	if (s->o->callgraph == REC_CG_DWARF) {
		uint64_t abi;
		memcpy(&abi, q, 8);
		q += 8;
		uint64_t regs[ARCH_PERF_NREGS] = {0};
		if (abi) {
			memcpy(regs, q, sizeof(regs));
			q += sizeof(regs);
		}
		uint64_t ssize = 0, dyn = 0;
		const uint8_t *stack = NULL;
		if (q + 8 <= end) {
			memcpy(&ssize, q, 8);
			stack = q + 8;
			if (ssize && q + 16 + ssize <= end)
				memcpy(&dyn, q + 8 + ssize, 8);
		}
		if (abi == PERF_SAMPLE_REGS_ABI_32) {
			/* a 32-bit program: its registers and frames are not what
			 * the unwinder reads (every stack came out cut short, with
			 * no reason given); the function on top only */
			im->compat32 = 1;
			s->st->compat32++;
			if (n < FMT_SAMPLE_MAX_FRAMES && ip < REC_KERNEL_START)
				pcs[n++] = ip;
			cut = 1;
		} else if (abi) { /* the user registers: unwind the user part of the stack */
			if (im->dirty || !im->sp) {
				sym_proc_close(im->sp);
				size_t len;
				char *text = live_text(im, &len);
				im->sp = sym_proc_open(text ? text : "", len);
				free(text);
				im->dirty = 0;
			}
			n += sym_proc_unwind(im->sp, (int)tid, regs, stack, dyn, pcs + n,
					     FMT_SAMPLE_MAX_FRAMES - n, &cut);
			s->st->too_deep += (uint64_t)((cut & 1) && n == FMT_SAMPLE_MAX_FRAMES);
			/* the copy ran out: only if the kernel copied all that was
			 * asked (a shorter copy reached the top of the stack, and
			 * the unwinder's read past it is the end of the stack) */
			int ran_out = (cut & 2) && dyn + 8 >= s->o->stack_size;
			s->st->stack_out += (uint64_t)ran_out;
			if ((cut & 4) && !ran_out && n > 0)
				count_no_cfi(s->st, im->sp, pcs[n - 1]);
			cut = (cut & 1) || ran_out;
		} else if (n < FMT_SAMPLE_MAX_FRAMES) {
			/* no user registers: a kernel thread, or the task exiting */
			if (!n || ip < REC_KERNEL_START)
				pcs[n++] = ip;
			cut = 1;
		}
	} else {
		int user = !s->o->kernel;
		uint64_t ips = 0;
		for (uint64_t i = 0; i < nr && n < FMT_SAMPLE_MAX_FRAMES; i++) {
			if (chain[i] >= (uint64_t)-4095) {
				user = chain[i] == (uint64_t)PERF_CONTEXT_USER;
				continue;
			}
			ips++;
			if (user)
				pcs[n++] = chain[i];
		}
		if (!n)
			pcs[n++] = ip;
		/* the kernel keeps perf_event_max_stack frames of a chain (127
		 * unless raised) and drops the rest without a mark */
		if (ips >= kernel_max_stack() || n == FMT_SAMPLE_MAX_FRAMES) {
			cut = 1;
			s->st->too_deep++;
		}
	}
	if (cut)
		s->st->unwind_fail++;
	s->st->samples++;
	struct sthread *t = thread_of(im, tid, time);
	size_t need = fmt_sample_max_size((unsigned)n);
	if (t->len + need > t->cap) {
		t->cap = t->cap ? t->cap * 2 : 65536;
		while (t->cap < t->len + need)
			t->cap *= 2;
		t->ev = xrealloc(t->ev, t->cap);
	}
	for (int i = 0; i < n; i++) {
		pcs[i] = tagged(im, pcs[i]);
		add_addr(im, fmt_caller_pc(pcs[i], i == 0));
	}
	uint8_t *e = fmt_put_sample(t->ev + t->len, time - t->last, pcs, (unsigned)n, cut);
	t->len = (size_t)(e - t->ev);
	t->last = time;
	t->nsamples++;
}

static int cmp_line(const void *a, const void *b)
{
	const struct fmt_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The modules, symbols and lines of tag t's addresses (q) join p's, tagged. */
static void merge_tagged(struct fmt_process *p, struct fmt_process *q, uint32_t t)
{
	uint64_t off = (uint64_t)t << STAG_SHIFT;
	uint32_t base = p->nmods;
	p->mods = xrealloc(p->mods, (p->nmods + q->nmods + 1) * sizeof(*p->mods));
	for (uint32_t i = 0; i < q->nmods; i++) {
		struct fmt_module *m = &p->mods[p->nmods++];
		*m = q->mods[i];
		m->start += off;
		m->end += off;
	}
	p->syms = xrealloc(p->syms, (p->nsyms + q->nsyms + 1) * sizeof(*p->syms));
	for (uint32_t i = 0; i < q->nsyms; i++) {
		struct fmt_symbol *y = &p->syms[p->nsyms++];
		*y = q->syms[i];
		y->addr += off;
		if (y->module != ~0u)
			y->module += base;
	}
	p->lines = xrealloc(p->lines, (p->nlines + q->nlines + 1) * sizeof(*p->lines));
	for (uint32_t i = 0; i < q->nlines; i++) {
		struct fmt_line *l = &p->lines[p->nlines++];
		*l = q->lines[i];
		l->addr += off;
	}
	free(q->mods);
	free(q->syms);
	free(q->lines);
	free(q->exe);
}

/*
 * Functions and source lines of every sampled address of an image: those
 * of each tag with the files mapped under it.
 */
static void symbolize_image(struct simage *im, struct fmt_process *p)
{
	static const struct stext none;
	uint64_t *by = xmalloc((im->naddrs + 1) * sizeof(*by));
	size_t nby = 0;
	for (size_t i = 0; i < im->naddrs; i++) {
		uint64_t a = im->addrs[i];
		if (a < (1ull << STAG_SHIFT) || a >= REC_KERNEL_START)
			by[nby++] = a;
	}
	const struct stext *t0 = im->ntags ? &im->texts[0] : &none;
	struct stext no_vdso = {0};
	if (im->compat32 && t0->len) { /* the [vdso] symbols are read from stint's own, 64-bit one */
		for (const char *l = t0->s, *e = t0->s + t0->len; l < e;) {
			const char *nl = memchr(l, '\n', (size_t)(e - l));
			size_t len = nl ? (size_t)(nl - l) + 1 : (size_t)(e - l);
			if (!memmem(l, len, "[vdso]", 6))
				text_append(&no_vdso, l, len);
			l += len;
		}
		t0 = &no_vdso;
	}
	rec_symbolize_samples(p, t0->s, t0->len, by, nby);
	free(no_vdso.s);
	for (uint32_t t = 1; t < im->ntags; t++) {
		nby = 0;
		for (size_t i = 0; i < im->naddrs; i++) {
			uint64_t a = im->addrs[i];
			if (a < REC_KERNEL_START && a >> STAG_SHIFT == t)
				by[nby++] = a & ((1ull << STAG_SHIFT) - 1);
		}
		if (!nby)
			continue;
		struct fmt_process q = {0};
		rec_symbolize_samples(&q, im->texts[t].s, im->texts[t].len, by, nby);
		merge_tagged(p, &q, t);
	}
	free(by);
	if (im->ntags > 1) {
		fmt_sort_symbols(p);
		qsort(p->lines, p->nlines, sizeof(*p->lines), cmp_line);
	}
}

/* The latest command line read in im's life names it; a read that an exec
 * of the pid overlapped is no one's (the window of neither image holds it). */
static void name_by_title(struct simage *im, const struct rec_titles *titles, uint32_t launched_pid,
			  const char *launched_command)
{
	const struct rec_title *best = NULL;
	for (size_t k = 0; k < titles->n; k++) {
		const struct rec_title *t = &titles->v[k];
		if (t->pid == im->pid && t->t0 >= im->born && (!im->died || t->t1 <= im->died) &&
		    (!best || t->t0 > best->t0))
			best = t;
	}
	if (best) {
		free(im->command);
		im->command = xstrdup(best->command);
	} else if (im->pid == launched_pid && launched_command && !im->command) {
		im->command = xstrdup(launched_command); /* it ended before a read */
	}
}

int rec_sample_build(const struct rec_buf *recs, const struct rec_perf_opts *o, const struct rec_attach *at,
		     const struct rec_titles *titles, uint32_t launched_pid, const char *launched_command,
		     struct fmt_data *d, struct rec_sample_stats *st)
{
	struct sstate s = {.o = o, .st = st};
	/* index the records and sort them by time */
	size_t cap = 1024, n = 0;
	struct srec *v = xmalloc(cap * sizeof(*v));
	for (size_t off = 0; off + sizeof(struct perf_event_header) <= recs->len;) {
		struct perf_event_header h;
		memcpy(&h, recs->data + off, sizeof(h));
		if (h.size < sizeof(h) || off + h.size > recs->len)
			break;
		const uint8_t *p = recs->data + off;
		uint64_t time = 0;
		if (h.type == PERF_RECORD_SAMPLE)
			memcpy(&time, p + sizeof(h) + 16, 8);
		else if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT)
			memcpy(&time, p + sizeof(h) + 16, 8);
		else if (h.size >= sizeof(h) + 24)
			memcpy(&time, p + h.size - 16, 8); /* sample_id: pid/tid, time, cpu */
		if (n == cap) {
			cap *= 2;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n] = (struct srec){time, (uint32_t)n, h.type, p, h.size, h.misc};
		n++;
		off += h.size;
	}
	qsort(v, n, sizeof(*v), cmp_srec);
	if (at) { /* as it was when stint attached; its later mmaps follow as records */
		struct simage *im = new_image(&s, (uint32_t)at->pid, (uint32_t)at->ppid, at->comm, 0);
		if (at->maps)
			add_maps_text(im, at->maps, at->maps_len);
		im->command = xstrdup(at->command ? at->command : at->comm);
		im->at = at;
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = v[i].p + sizeof(struct perf_event_header);
		uint32_t a32[4];
		switch (v[i].type) {
		case PERF_RECORD_COMM: {
			memcpy(a32, p, 8);
			const char *comm = (const char *)(p + 8);
			if (v[i].misc & PERF_RECORD_MISC_COMM_EXEC) {
				struct simage *old = image_of(&s, a32[0]);
				new_image(&s, a32[0], old ? old->ppid : 0, comm, v[i].time);
			} else {
				struct simage *im = image_of(&s, a32[0]);
				if (im) {
					struct sthread *t = thread_of(im, a32[1], v[i].time);
					snprintf(t->name, sizeof(t->name), "%s", comm);
					if (a32[0] == a32[1])
						snprintf(im->comm, sizeof(im->comm), "%s", comm);
				}
			}
			break;
		}
		case PERF_RECORD_FORK: {
			memcpy(a32, p, 16); /* pid, ppid, tid, ptid */
			if (a32[0] != a32[1]) {
				struct simage *parent = image_of(&s, a32[1]);
				char comm[32] = "";
				if (parent)
					snprintf(comm, sizeof(comm), "%s", parent->comm);
				struct simage *im = new_image(&s, a32[0], a32[1], comm, v[i].time);
				parent = image_of(&s, a32[1]); /* new_image may move the array */
				if (parent)
					copy_maps(im, parent);
			}
			break;
		}
		case PERF_RECORD_MMAP2: {
			memcpy(a32, p, 4);
			struct simage *im = image_of(&s, a32[0]);
			if (!im)
				im = new_image(&s, a32[0], 0, "", 0);
			on_mmap2(im, v[i].p, v[i].size);
			break;
		}
		case PERF_RECORD_EXIT: {
			memcpy(a32, p, 16); /* pid, ppid, tid, ptid */
			struct simage *im = a32[0] == a32[2] ? image_of(&s, a32[0]) : NULL;
			if (im && !im->died)
				im->died = v[i].time;
			break;
		}
		case PERF_RECORD_SAMPLE:
			on_sample(&s, v[i].p, v[i].size, v[i].time);
			break;
		}
	}
	if (titles)
		for (uint32_t i = 0; i < s.nimg; i++)
			name_by_title(&s.img[i], titles, launched_pid, launched_command);
	free(v);
	/* images with samples become processes */
	d->procs = xcalloc(s.nimg, sizeof(*d->procs));
	for (uint32_t i = 0; i < s.nimg; i++) {
		struct simage *im = &s.img[i];
		if (im->nthreads) {
			struct fmt_process *p = &d->procs[d->nprocs];
			p->pid = im->pid;
			p->ppid = im->ppid;
			p->command = xstrdup(im->command ? im->command : im->comm);
			p->os = xstrdup("");
			symbolize_image(im, p);
			for (uint32_t k = 0; k < im->nthreads; k++) {
				struct sthread *t = &im->threads[k];
				d->threads = xrealloc(d->threads, (d->nthreads + 1) * sizeof(*d->threads));
				struct fmt_thread *ft = &d->threads[d->nthreads++];
				memset(ft, 0, sizeof(*ft));
				ft->proc = d->nprocs;
				ft->tid = t->tid;
				ft->name = xstrdup(t->name);
				ft->start = t->start;
				ft->nevents = t->nsamples;
				ft->ev_owned = t->ev;
				ft->ev = t->ev;
				ft->ev_len = t->len;
				t->ev = NULL;
			}
			d->nprocs++;
		}
		sym_proc_close(im->sp);
		free_maps(im);
		free(im->command);
		free(im->addrs);
		for (uint32_t k = 0; k < im->nthreads; k++)
			free(im->threads[k].ev);
		free(im->threads);
	}
	free(s.img);
	return 0;
}
