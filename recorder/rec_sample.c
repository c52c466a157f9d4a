/*
 * rec_sample.c - from raw perf records to a sampling data set: replays the
 * records in time order, keeping each process image's memory map (fork
 * copies it, exec starts afresh, mmap adds to it), unwinds every sample's
 * stack with the map in force at that moment, and finally symbolizes every
 * address (function, module, source line) while the binaries are at hand.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One process image: a pid from fork or exec until the next exec. */
struct simage {
	uint32_t pid, ppid;
	char comm[32];
	char *command;       /* full command line when known */
	char *maps;          /* /proc/PID/maps-style text of its file mappings */
	size_t maps_len, maps_cap;
	int dirty;           /* maps changed since sp was built */
	struct sym_proc *sp;
	struct sthread *threads;
	uint32_t nthreads;
	uint64_t *addrs;     /* every address sampled (for symbols and lines) */
	size_t naddrs, capaddrs;
	int current;         /* the pid's image in force */
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

static struct simage *new_image(struct sstate *s, uint32_t pid, uint32_t ppid, const char *comm)
{
	struct simage *old = image_of(s, pid);
	if (old)
		old->current = 0;
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
	return im;
}

static void maps_append(struct simage *im, const char *line, size_t n)
{
	if (im->maps_len + n + 1 > im->maps_cap) {
		im->maps_cap = im->maps_cap ? im->maps_cap * 2 : 8192;
		while (im->maps_cap < im->maps_len + n + 1)
			im->maps_cap *= 2;
		im->maps = xrealloc(im->maps, im->maps_cap);
	}
	memcpy(im->maps + im->maps_len, line, n);
	im->maps_len += n;
	im->maps[im->maps_len] = 0;
	im->dirty = 1;
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
		while (n && !c[n - 1])
			n--;
		for (size_t k = 0; k < n; k++)
			if (!c[k])
				c[k] = ' ';
		c[n] = 0;
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
		maps_append(im, m, n);
		free(m);
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", im->pid);
	char *c = util_read_file(path, &n);
	if (c) {
		for (size_t k = 0; k + 1 < n; k++)
			if (!c[k])
				c[k] = ' ';
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
	if (name[0] != '/' && strcmp(name, "[vdso]") != 0)
		return;
	char line[4400];
	int n = snprintf(line, sizeof(line), "%llx-%llx %c%c%cp %08llx 00:00 %llu %s\n",
			 (unsigned long long)m->addr, (unsigned long long)(m->addr + m->len),
			 (m->prot & 1) ? 'r' : '-', (m->prot & 2) ? 'w' : '-', (m->prot & 4) ? 'x' : '-',
			 (unsigned long long)m->pgoff, (unsigned long long)m->ino, name);
	if (n > 0 && (size_t)n < sizeof(line))
		maps_append(im, line, (size_t)n);
}

static void add_addr(struct simage *im, uint64_t a)
{
	if (im->naddrs == im->capaddrs) {
		im->capaddrs = im->capaddrs ? im->capaddrs * 2 : 4096;
		im->addrs = xrealloc(im->addrs, im->capaddrs * sizeof(*im->addrs));
	}
	im->addrs[im->naddrs++] = a;
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
		im = new_image(s, pid, 0, "");
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
		if (abi) { /* the user registers: unwind the user part of the stack */
			if (im->dirty || !im->sp) {
				sym_proc_close(im->sp);
				im->sp = sym_proc_open(im->maps ? im->maps : "", im->maps_len);
				im->dirty = 0;
			}
			n += sym_proc_unwind(im->sp, (int)tid, regs, stack, dyn, pcs + n,
					     FMT_SAMPLE_MAX_FRAMES - n, &cut);
			/* the copy ran out: only if the kernel copied all that was
			 * asked (a shorter copy reached the top of the stack, and
			 * the unwinder's read past it is the end of the stack) */
			int ran_out = (cut & 2) && dyn + 8 >= s->o->stack_size;
			s->st->stack_out += (uint64_t)ran_out;
			cut = (cut & 1) || ran_out;
		} else if (n < FMT_SAMPLE_MAX_FRAMES) {
			/* no user registers: a kernel thread, or the task exiting */
			if (!n || ip < REC_KERNEL_START)
				pcs[n++] = ip;
			cut = 1;
		}
	} else {
		int user = !s->o->kernel;
		for (uint64_t i = 0; i < nr && n < FMT_SAMPLE_MAX_FRAMES; i++) {
			if (chain[i] >= (uint64_t)-4095) {
				user = chain[i] == (uint64_t)PERF_CONTEXT_USER;
				continue;
			}
			if (user)
				pcs[n++] = chain[i];
		}
		if (!n)
			pcs[n++] = ip;
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
	uint8_t *e = fmt_put_sample(t->ev + t->len, time - t->last, pcs, (unsigned)n, cut);
	t->len = (size_t)(e - t->ev);
	t->last = time;
	t->nsamples++;
	for (int i = 0; i < n; i++)
		add_addr(im, fmt_caller_pc(pcs[i], i == 0));
}

/* Functions and source lines of every sampled address of an image. */
static void symbolize_image(struct simage *im, struct fmt_process *p)
{
	rec_symbolize_samples(p, im->maps, im->maps_len, im->addrs, im->naddrs);
}

int rec_sample_build(const struct rec_buf *recs, const struct rec_perf_opts *o, const struct rec_attach *at,
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
		struct simage *im = new_image(&s, (uint32_t)at->pid, (uint32_t)at->ppid, at->comm);
		if (at->maps)
			maps_append(im, at->maps, at->maps_len);
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
				new_image(&s, a32[0], old ? old->ppid : 0, comm);
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
				struct simage *im = new_image(&s, a32[0], a32[1], comm);
				parent = image_of(&s, a32[1]); /* new_image may move the array */
				if (parent && parent->maps)
					maps_append(im, parent->maps, parent->maps_len);
			}
			break;
		}
		case PERF_RECORD_MMAP2: {
			memcpy(a32, p, 4);
			struct simage *im = image_of(&s, a32[0]);
			if (!im)
				im = new_image(&s, a32[0], 0, "");
			on_mmap2(im, v[i].p, v[i].size);
			break;
		}
		case PERF_RECORD_SAMPLE:
			on_sample(&s, v[i].p, v[i].size, v[i].time);
			break;
		}
	}
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
		free(im->maps);
		free(im->command);
		free(im->addrs);
		for (uint32_t k = 0; k < im->nthreads; k++)
			free(im->threads[k].ev);
		free(im->threads);
	}
	free(s.img);
	return 0;
}
