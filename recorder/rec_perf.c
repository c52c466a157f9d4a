/*
 * rec_perf.c - sampling with perf_event_open: one event per CPU on the
 * target (inherited by every thread and child it creates), ring buffers
 * drained into memory while the program runs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_perf.h"
#include "recorder.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"

/* data pages per ring: 256 KiB, or 4 MiB when every sample carries a copy
 * of the stack (a few hundred samples of room between two drains) */
#define REC_PERF_PAGES_FP 64
#define REC_PERF_PAGES_DWARF 1024

struct rec_ring {
	int fd;
	unsigned pages;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;
};

/* A process whose command line is read while it runs (rec_perf_titles). */
struct title_watch {
	uint32_t pid;
	uint64_t since;     /* when it was forked or exec'd (monotonic ns) */
	uint64_t next_read; /* not before */
	size_t title;       /* its latest title, p->titles.v[title - 1] (0: none yet) */
};

struct rec_perf {
	struct rec_ring *rings;
	int nrings;
	struct rec_perf_opts opts;
	struct rec_buf out;
	uint64_t lost;
	struct title_watch *watch;
	size_t nwatch, capwatch;
	struct rec_titles titles;
	int stopped_early, detached; /* rec_stop_waiting's, for rec_perf_left_running */
	int left_running;            /* stopped before the program ended */
};

/* Titles are set early (setproctitle after fork): each drain's tick for a
 * process's first two seconds, then once a second. */
#define TITLE_EARLY_NS 2000000000ull
#define TITLE_LATER_NS 1000000000ull

static void watch_add(struct rec_perf *p, uint32_t pid, uint64_t now)
{
	for (size_t i = 0; i < p->nwatch; i++)
		if (p->watch[i].pid == pid) { /* exec'd: a new program, read anew */
			p->watch[i].since = now;
			p->watch[i].next_read = 0;
			p->watch[i].title = 0;
			return;
		}
	if (p->nwatch == p->capwatch) {
		p->capwatch = p->capwatch ? p->capwatch * 2 : 16;
		p->watch = xrealloc(p->watch, p->capwatch * sizeof(*p->watch));
	}
	p->watch[p->nwatch++] = (struct title_watch){pid, now, 0, 0};
}

static void watch_drop(struct rec_perf *p, size_t i)
{
	p->watch[i] = p->watch[--p->nwatch];
}

/* Follow the processes the drained record tmp starts, execs or ends. */
static void watch_record(struct rec_perf *p, const uint8_t *tmp, const struct perf_event_header *h)
{
	uint32_t a32[4];
	if (h->size < sizeof(*h) + 16)
		return;
	memcpy(a32, tmp + sizeof(*h), 16);
	uint64_t now = util_mono_ns();
	if (h->type == PERF_RECORD_FORK && a32[0] != a32[1])
		watch_add(p, a32[0], now);
	else if (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC))
		watch_add(p, a32[0], now);
	else if (h->type == PERF_RECORD_EXIT && a32[0] == a32[2])
		for (size_t i = 0; i < p->nwatch; i++)
			if (p->watch[i].pid == a32[0]) {
				watch_drop(p, i);
				break;
			}
}

/* Read the command lines due; keep each that changed, with when it was read. */
static void read_titles(struct rec_perf *p)
{
	uint64_t now = util_mono_ns();
	for (size_t i = 0; i < p->nwatch;) {
		struct title_watch *w = &p->watch[i];
		if (now < w->next_read) {
			i++;
			continue;
		}
		char path[64];
		size_t n = 0;
		snprintf(path, sizeof(path), "/proc/%u/cmdline", w->pid);
		uint64_t t0 = util_mono_ns();
		char *c = util_read_file(path, &n);
		uint64_t t1 = util_mono_ns();
		if (!c || !n) { /* gone, or a zombie: nothing more to read */
			free(c);
			watch_drop(p, i);
			continue;
		}
		util_args_joined(c, n);
		w->next_read = now + (now - w->since < TITLE_EARLY_NS ? 0 : TITLE_LATER_NS);
		if (w->title && strcmp(p->titles.v[w->title - 1].command, c) == 0) { /* the same: the window grows */
			free(c);
			p->titles.v[w->title - 1].t1 = t1;
			i++;
			continue;
		}
		if (p->titles.n == p->titles.cap) {
			p->titles.cap = p->titles.cap ? p->titles.cap * 2 : 16;
			p->titles.v = xrealloc(p->titles.v, p->titles.cap * sizeof(*p->titles.v));
		}
		p->titles.v[p->titles.n++] = (struct rec_title){w->pid, t0, t1, c};
		w->title = p->titles.n;
		i++;
	}
}

void rec_perf_left_running(const struct rec_perf *p, int *stopped_early, int *detached, int *left_running)
{
	*stopped_early = p->stopped_early;
	*detached = p->detached;
	*left_running = p->left_running;
}

const struct rec_titles *rec_perf_titles(const struct rec_perf *p)
{
	return &p->titles;
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(struct perf_event_attr *a, const struct rec_perf_opts *o, int hardware)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (hardware) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
		a->freq = 1;
		a->sample_freq = o->freq;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
		a->sample_period = 1000000000ull / o->freq; /* ns of CPU time */
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	if (o->callgraph == REC_CG_FP || o->kernel)
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (o->callgraph == REC_CG_DWARF) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = ARCH_PERF_REGS_MASK;
		a->sample_stack_user = o->stack_size;
	}
	a->exclude_kernel = !o->kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !o->kernel;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->mmap_data = 1; /* the read-only first segments, where ELF headers are */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->enable_on_exec = o->attach ? 0 : 1;
	a->wakeup_events = 1;
	a->watermark = 1;
	a->wakeup_watermark = (o->callgraph == REC_CG_DWARF ? REC_PERF_PAGES_DWARF : REC_PERF_PAGES_FP) * 4096 / 4;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

static int ring_map(struct rec_ring *r, unsigned pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m = MAP_FAILED;
	/* perf_event_mlock_kb limits an ordinary user: halve until it fits */
	for (; pages >= 8 && m == MAP_FAILED; pages /= 2)
		m = mmap(NULL, page * (pages + 1), PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED)
		return -1;
	r->pages = pages * 2;
	r->meta = m;
	r->data = (uint8_t *)m + page;
	r->size = page * r->pages;
	return 0;
}

static unsigned so_pages(const struct rec_perf_opts *o)
{
	return o->callgraph == REC_CG_DWARF ? REC_PERF_PAGES_DWARF : REC_PERF_PAGES_FP;
}

/* Whether task tid (a thread given to attach to) is another user's, and we
 * are not root: perf events are refused for it whatever the paranoia. */
static int others_task(pid_t tid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	return tid > 0 && geteuid() != 0 && stat(path, &st) == 0 && st.st_uid != geteuid();
}

struct rec_perf *rec_perf_open(pid_t *tids, int ntids, const struct rec_perf_opts *o, int *denied,
			       char *err, size_t errlen)
{
	*denied = 0;
	/* the tests' stand-in for perf_event_paranoid 3 or seccomp (see rt.c) */
	if (getenv(FMT_ENV_DENY_PERF)) {
		*denied = 1;
		snprintf(err, errlen, "perf events are not permitted here (STINT_DENY_PERF is set)");
		return NULL;
	}
	struct rec_perf *p = xcalloc(1, sizeof(*p));
	p->opts = *o;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	p->rings = xcalloc((size_t)(ncpu * ntids), sizeof(*p->rings));
	struct perf_event_attr a;
	int hw = o->event && strcmp(o->event, "cycles") == 0;
	for (int t = 0; t < ntids; t++) {
		for (int c = 0; c < ncpu; c++) {
			fill_attr(&a, o, hw);
			int fd = perf_open(&a, tids[t], c);
			if (fd < 0 && errno == ENODEV)
				continue; /* CPU offline */
			if (fd < 0 && o->callgraph == REC_CG_DWARF && errno == EINVAL && o->stack_size > 8192) {
				p->opts.stack_size = 8192;
				fill_attr(&a, &p->opts, hw);
				fd = perf_open(&a, tids[t], c);
			}
			if (fd < 0) {
				int e = errno;
				if (hw && (e == ENOENT || e == EOPNOTSUPP || e == ENODEV))
					snprintf(err, errlen,
						 "this machine has no hardware 'cycles' event (no PMU): "
						 "leave out -e for the CPU-time clock");
				else if ((e == EACCES || e == EPERM) && others_task(tids[t]))
					snprintf(err, errlen,
						 "cannot sample process %d: it belongs to another user (perf events "
						 "follow one's own processes; root may follow any)", (int)tids[t]);
				else if (e == EACCES || e == EPERM || e == ENOSYS) {
					char *level = util_read_file("/proc/sys/kernel/perf_event_paranoid", &(size_t){0});
					if (level)
						level[strcspn(level, "\n")] = 0;
					*denied = 1, snprintf(err, errlen,
						 "perf events are not permitted here "
						 "(/proc/sys/kernel/perf_event_paranoid is %s): %s",
						 level ? level : "?", strerror(e));
					free(level);
				}
				else
					snprintf(err, errlen, "perf_event_open failed: %s", strerror(e));
				rec_perf_close(p);
				return NULL;
			}
			struct rec_ring *r = &p->rings[p->nrings++];
			r->fd = fd;
			if (ring_map(r, so_pages(&p->opts)) < 0) {
				snprintf(err, errlen, "cannot map the perf ring buffer: %s", strerror(errno));
				rec_perf_close(p);
				return NULL;
			}
		}
	}
	if (!p->nrings) {
		snprintf(err, errlen, "no CPU to sample on");
		rec_perf_close(p);
		return NULL;
	}
	return p;
}

void rec_perf_enable(struct rec_perf *p)
{
	for (int i = 0; i < p->nrings; i++)
		ioctl(p->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void buf_append(struct rec_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : (1 << 20);
		while (cap < b->len + n)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
}

/*
 * Keep only the part of a sample's stack copy that the kernel filled
 * (dyn_size), so memory grows with the stacks' real depth.
 */
static size_t compact_sample(const struct rec_perf_opts *o, uint8_t *rec, size_t size)
{
	size_t off = sizeof(struct perf_event_header) + 32; /* ip, pid/tid, time, cpu */
	if (o->callgraph == REC_CG_FP || o->kernel) {
		uint64_t nr;
		memcpy(&nr, rec + off, 8);
		off += 8 + 8 * nr;
	}
	if (off + 8 > size)
		return size;
	uint64_t abi;
	memcpy(&abi, rec + off, 8);
	off += 8 + (abi ? 8u * ARCH_PERF_NREGS : 0);
	if (off + 8 > size)
		return size;
	uint64_t ssize, dyn;
	memcpy(&ssize, rec + off, 8);
	if (!ssize || off + 8 + ssize + 8 > size)
		return size;
	memcpy(&dyn, rec + off + 8 + ssize, 8);
	if (dyn > ssize)
		dyn = ssize;
	uint64_t keep = (dyn + 7) & ~7ull;
	memcpy(rec + off, &keep, 8);
	memcpy(rec + off + 8 + keep, &dyn, 8);
	size_t nsize = off + 8 + keep + 8;
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	h.size = (uint16_t)nsize;
	memcpy(rec, &h, sizeof(h));
	return nsize;
}

/* Copy n bytes at ring offset off, in two pieces where they wrap. */
static void ring_copy(const struct rec_ring *r, uint64_t off, void *out, size_t n)
{
	size_t first = r->size - off < n ? (size_t)(r->size - off) : n;
	memcpy(out, r->data + off, first);
	if (first < n)
		memcpy((uint8_t *)out + first, r->data, n - first);
}

/* Copy every complete record out of the rings. */
void rec_perf_drain(struct rec_perf *p)
{
	for (int i = 0; i < p->nrings; i++) {
		struct rec_ring *r = &p->rings[i];
		uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->meta->data_tail;
		while (tail < head) {
			struct perf_event_header h;
			uint64_t off = tail % r->size;
			uint8_t tmp[65536 + 64];
			/* the header and the record may wrap around the ring's end */
			ring_copy(r, off, &h, sizeof(h));
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			ring_copy(r, off, tmp, h.size);
			uint64_t whole = h.size;
			if (h.type == PERF_RECORD_SAMPLE && p->opts.callgraph == REC_CG_DWARF)
				h.size = (uint16_t)compact_sample(&p->opts, tmp, h.size);
			if (h.type == PERF_RECORD_LOST) {
				uint64_t lost;
				memcpy(&lost, tmp + sizeof(h) + 8, 8);
				p->lost += lost;
			} else {
				buf_append(&p->out, tmp, h.size);
				if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_COMM ||
				    h.type == PERF_RECORD_EXIT)
					watch_record(p, tmp, &h);
			}
			tail += whole;
		}
		__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	}
}

static volatile sig_atomic_t rec_perf_stop;
static void on_stop(int sig)
{
	(void)sig;
	rec_perf_stop = 1;
}

/*
 * Drain until the program and its descendants are gone (launch mode), or
 * until Ctrl-C or the duration passes (attach mode).
 */
void rec_perf_run(struct rec_perf *p, pid_t child, int *status, double duration)
{
	struct pollfd *pfd = xcalloc((size_t)p->nrings, sizeof(*pfd));
	for (int i = 0; i < p->nrings; i++) {
		pfd[i].fd = p->rings[i].fd;
		pfd[i].events = POLLIN;
	}
	uint64_t t0 = util_mono_ns();
	struct sigaction *old_sigs = NULL;
	if (p->opts.attach) { /* any signal that would end stint stops the recording first */
		old_sigs = xcalloc((size_t)SIGRTMAX + 1, sizeof(*old_sigs));
		rec_attached_signals(on_stop, old_sigs);
	}
	int main_done = 0, stopped_early = 0, detached = 0;
	watch_add(p, (uint32_t)child, t0);
	for (;;) {
		poll(pfd, (nfds_t)p->nrings, 50);
		rec_perf_drain(p);
		read_titles(p);
		if (p->opts.attach) {
			if (rec_perf_stop || (duration > 0 && (double)(util_mono_ns() - t0) / 1e9 >= duration))
				break;
			if (kill(child, 0) < 0 && errno == ESRCH)
				break;
			continue;
		}
		int st;
		pid_t w;
		while ((w = waitpid(-1, &st, WNOHANG)) > 0)
			if (w == child) {
				*status = st;
				main_done = 1;
			}
		if (w < 0 && errno == ECHILD)
			break;
		/* as rec_wait(): not for daemons, and Ctrl-C ends it */
		if (rec_stop_waiting(child, main_done, &stopped_early, &detached)) {
			p->stopped_early = stopped_early;
			p->detached = detached;
			if (!main_done) {
				*status = (128 + REC_STOP_SIGNAL(stopped_early)) << 8;
				p->left_running = 1;
			}
			break;
		}
	}
	rec_perf_drain(p);
	if (old_sigs) {
		rec_attached_signals_end(old_sigs);
		free(old_sigs);
	}
	free(pfd);
}

struct rec_buf *rec_perf_records(struct rec_perf *p)
{
	return &p->out;
}

uint64_t rec_perf_lost(const struct rec_perf *p)
{
	return p->lost;
}

const struct rec_perf_opts *rec_perf_opts(const struct rec_perf *p)
{
	return &p->opts;
}

void rec_perf_close(struct rec_perf *p)
{
	if (!p)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < p->nrings; i++) {
		if (p->rings[i].meta)
			munmap(p->rings[i].meta, page * (p->rings[i].pages + 1));
		close(p->rings[i].fd);
	}
	free(p->rings);
	free(p->out.data);
	free(p->watch);
	for (size_t i = 0; i < p->titles.n; i++)
		free(p->titles.v[i].command);
	free(p->titles.v);
	free(p);
}

int rec_perf_thread_ids(pid_t pid, pid_t **out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0, cap = 16;
	pid_t *tids = xmalloc((size_t)cap * sizeof(*tids));
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap *= 2;
			tids = xrealloc(tids, (size_t)cap * sizeof(*tids));
		}
		tids[n++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	*out = tids;
	return n;
}
