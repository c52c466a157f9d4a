/*
 * rt.c - the probes of -finstrument-functions and the per-thread spool
 * buffers of libstint-rt.so.
 *
 * glibc defines __cyg_profile_func_enter/exit as no-ops; this library is
 * preloaded by `stint record`, so the program's calls bind to the versions
 * here instead, and the program needs no relinking.  Each probe reads the
 * clock, notices whether the thread left the CPU since the previous probe
 * (one load from a perf_event user page), and appends a record of 2..3
 * bytes to the thread's buffer, a file mapping that survives a crash or
 * SIGKILL.  Nothing on that path locks, allocates or enters the kernel.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "rt_exec.h"
#include "rt_file.h"
#include "rt_fork.h"
#include "rt_int.h"
#include "rt_patch.h"
#include "rt_select.h"

struct rt_global rt_g;
#ifndef RT_ATTACH_LIB
__thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
#endif

static pthread_key_t rt_thread_key;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

/* ------------------------------------------------------------------------
 * Clock and OS-event detection
 * --------------------------------------------------------------------- */

__attribute__((noinline)) static uint64_t rt_clock_mono(void)
{
	struct timespec ts;
	struct rt_thread *t = &rt_self;
	RT_VEC_KEEP(t, clock_gettime(CLOCK_MONOTONIC, &ts));
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rt_clock(void)
{
	if (RT_LIKELY(rt_g.use_tsc))
		return arch_cycles();
	return rt_clock_mono();
}

uint64_t rt_now(void)
{
	return rt_clock();
}

__attribute__((noinline)) static uint64_t rt_rusage_switches(void)
{
	struct rusage ru;
	struct rt_thread *t = &rt_self;
	if (rt_g.no_syscalls) /* (a seccomp filter: no switch is seen any more) */
		return t->last_switches;
	int r;
	RT_VEC_KEEP(t, r = getrusage(RUSAGE_THREAD, &ru));
	if (r < 0)
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

/* ------------------------------------------------------------------------
 * The environment, also before libc has set environ
 * --------------------------------------------------------------------- */

/*
 * An instrumented function in the program's .preinit_array runs before
 * every constructor, libc's included, so environ is still NULL at its first
 * probe.  The environment the process started with is then read from the
 * kernel's copy, /proc/self/environ (nothing can have changed it yet).
 * Returns NULL where neither is available yet: the caller tries again later.
 */
static char *rt_env_copy;   /* /proc/self/environ, NUL-separated */
static size_t rt_env_len;
static int rt_env_failed;

static int rt_env_ready(void)
{
	if (environ || rt_env_copy)
		return 1;
	if (rt_env_failed)
		return 0;
	int fd = rt_file_open("/proc/self/environ", O_RDONLY | O_CLOEXEC, 0);
	size_t cap = 65536;
	char *buf = fd >= 0 ? rt_mem_grow(NULL, 0, cap) : NULL;
	while (buf) {
		if (rt_env_len + 1 >= cap) {
			char *nb = rt_mem_grow(buf, cap, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + rt_env_len, cap - 1 - rt_env_len);
		if (r <= 0)
			break;
		rt_env_len += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (!buf || !rt_env_len) {
		rt_env_failed = 1; /* no /proc: wait for libc's environ */
		return 0;
	}
	buf[rt_env_len] = 0;
	rt_env_copy = buf;
	return 1;
}

const char *rt_env_given; /* attaching: stint's settings, not the process's environment */

static const char *rt_getenv(const char *name)
{
	if (rt_env_given) {
		size_t l = strlen(name);
		for (const char *p = rt_env_given; *p; p = strchrnul(p, '\n') + (strchr(p, '\n') ? 1 : 0))
			if (strncmp(p, name, l) == 0 && p[l] == '=') {
				static char v[4096]; /* (only the attaching thread reads it) */
				snprintf(v, sizeof(v), "%.*s", (int)(strchrnul(p + l + 1, '\n') - (p + l + 1)), p + l + 1);
				return v;
			}
		return NULL;
	}
	if (environ || !rt_env_ready())
		return getenv(name);
	size_t l = strlen(name);
	for (size_t i = 0; i < rt_env_len; i += strlen(rt_env_copy + i) + 1)
		if (strncmp(rt_env_copy + i, name, l) == 0 && rt_env_copy[i + l] == '=')
			return rt_env_copy + i + l + 1;
	return NULL;
}

/* The thread's context-switch count, as the detector in use sees it. */
static inline uint64_t rt_switches(struct rt_thread *t)
{
	if (RT_LIKELY(t->lock != NULL))
		return *t->lock;
	if (rt_g.os_mode == RT_OS_RUSAGE)
		return rt_rusage_switches();
	return 0;
}

/*
 * The time of an event and the switch count that goes with it.  Read as
 * counter, clock, counter, until both counter reads agree: a switch that
 * lands between the clock read and a single counter read would flag the
 * interval before the event (which ran on the CPU) and leave the off-CPU
 * time in the interval after it unflagged.  With the two reads agreeing,
 * the clock was read while the thread held the CPU with exactly that
 * count, so the off-CPU time lies in the interval the count flags.  The
 * compiler keeps the order: the TSC read and the loads are volatile.
 */
static inline __attribute__((always_inline)) uint64_t rt_stamp(struct rt_thread *t, uint64_t *sw)
{
	uint64_t s0 = rt_switches(t), now, s1;
	for (;;) {
		now = rt_clock();
		s1 = rt_switches(t);
		if (RT_LIKELY(s1 == s0))
			break;
		s0 = s1;
	}
	*sw = s1;
	return now;
}


/*
 * Close the interval up to now with a record of subtype sub: a TICK (a
 * timestamp only) or, for the profiler's own time, an OVERHEAD record, which compensation removes whole and which, without it, stays
 * where it happened (doc/numbers.md: no time is dropped silently).  For the work
 * done inside the program outside a probe record: a chunk switch, noting
 * new functions, starting a thread, calibrating, reading the modules.
 */
static void rt_mark(struct rt_thread *t, unsigned sub)
{
	if (t->state != RT_ACTIVE || t->pos >= t->end_limit + FMT_MAX_RECORD - 16)
		return;
	uint64_t sw;
	uint64_t now = rt_stamp(t, &sw);
	int os = sw != t->last_switches;
	t->last_switches = sw;
	if (now < t->last_t)
		now = t->last_t;
	t->pos = fmt_put_ext(t->pos, sub, os, now - t->last_t, NULL, 0);
	t->last_t = now;
}

static void rt_mark_overhead(struct rt_thread *t)
{
	rt_mark(t, FMT_X_OVERHEAD);
}

/*
 * A perf event opened on the thread itself has its user page's lock word
 * advanced by the kernel at every schedule in and out; nothing else moves
 * it.  So one load per probe tells whether the thread left the CPU since
 * the previous probe (tests/unit/test_switch_counter.c keeps this checked).
 */
static volatile uint32_t *rt_open_switch_page(void)
{
	/* STINT_DENY_PERF: the tests' stand-in for perf_event_paranoid 3 or a
	 * seccomp filter, which root cannot otherwise see here */
	if (rt_getenv("STINT_DENY_PERF"))
		return NULL;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	struct rlimit old;
	if (fd < 0 && errno == EMFILE && rt_file_room_begin(&old)) { /* rt_file_open */
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		rt_file_room_end(&old);
	}
	if (fd < 0)
		return NULL;
	void *page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the event alive */
	if (page == MAP_FAILED)
		return NULL;
	return &((struct perf_event_mmap_page *)page)->lock;
}

/* Let go of a page rt_open_switch_page mapped (lock: its lock word). */
void rt_close_switch_page(volatile uint32_t *lock)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	munmap((void *)((uintptr_t)lock & ~(uintptr_t)(page - 1)), page);
}

/* ------------------------------------------------------------------------
 * Spool files
 * --------------------------------------------------------------------- */

/* The bytes of "<spool>/<key><suffix>" with its terminator. */
static size_t rt_path_size(const char *suffix)
{
	return strlen(rt_g.spool) + 1 + strlen(rt_g.key) + strlen(suffix) + 1;
}

/* "<spool>/<key><suffix>" into buf of n bytes (empty when it does not
 * fit), without printf: this also runs at a thread's start, on whatever
 * stack its first probe found. */
static void rt_path(char *buf, size_t n, const char *suffix)
{
	if (rt_path_size(suffix) > n) {
		if (n)
			buf[0] = 0;
		return;
	}
	char *p = rt_file_format_str(buf, rt_g.spool);
	p = rt_file_format_str(p, "/");
	rt_file_format_str(rt_file_format_str(p, rt_g.key), suffix);
}

/* A path of the process on the caller's stack, made to measure (alloca),
 * not of PATH_MAX: these run inside the program's dlopen, fork, exec or
 * setuid, on a stack it sized. */
#define RT_PATH_ON_STACK(suffix)                                 \
	({                                                       \
		size_t rt_path_n_ = rt_path_size(suffix);        \
		char *rt_path_p_ = alloca(rt_path_n_);           \
		rt_path(rt_path_p_, rt_path_n_, suffix);         \
		rt_path_p_;                                      \
	})

/* Write a whole small file of the process (rt_file.h). */
void rt_write_file(const char *suffix, const void *data, size_t len)
{
	if (rt_g.no_syscalls)
		return;
	rt_file_write(RT_PATH_ON_STACK(suffix), data, len);
}

static void rt_copy_proc_file(const char *proc, const char *suffix)
{
	if (rt_g.no_syscalls)
		return;
	rt_file_copy(proc, RT_PATH_ON_STACK(suffix));
}

void rt_save_maps(void)
{
	rt_copy_proc_file("/proc/self/maps", ".maps");
}

/*
 * After dlopen or dlclose changed the modules: a snapshot of the maps,
 * "<key>.maps.<n>", whose first line "@<ticks>" says from when it holds (a
 * library may be unloaded and another loaded at its address: the recorder
 * orders the snapshots in time, so that each event is named by the module
 * mapped at its time).  <key>.maps stays the process's first snapshot.
 */
static void rt_save_maps_epoch(uint64_t when)
{
	/* in the time of the calling thread's events (rt_thread.dropped) */
	struct rt_thread *t = &rt_self;
	if (t->state == RT_ACTIVE && when >= t->dropped)
		when -= t->dropped;
	static unsigned seq;
	unsigned n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	char suffix[32], head[40];
	snprintf(suffix, sizeof(suffix), ".maps.%u", n);
	snprintf(head, sizeof(head), "@%llu\n", (unsigned long long)when);
	rt_file_copy_head("/proc/self/maps", RT_PATH_ON_STACK(suffix), head);
}

static void rt_save_info(void)
{
	char buf[512];
	const char *os = rt_g.os_mode == RT_OS_PERF ? "perf" : rt_g.os_mode == RT_OS_RUSAGE ? "rusage" : "off";
	int n = snprintf(buf, sizeof(buf),
			 "pid %d\nppid %d\nclock %s\nos %s\nplt %d\ncost %llu\ncalib_tail %llu\nlib_cost %llu\n"
			 "cost_path %s\ncost_inner %llu\ncost_samples %u\ncost_min %llu\ncost_max %llu\n",
			 (int)getpid(), (int)getppid(), rt_g.use_tsc ? "tsc" : "monotonic", os, rt_g.plt,
			 (unsigned long long)rt_g.calib_ticks, (unsigned long long)rt_g.calib_tail,
			 (unsigned long long)rt_g.calib_lib, rt_g.calib_patched ? "patched" : "hooks",
			 (unsigned long long)rt_g.calib_inner, rt_g.recal.samples, (unsigned long long)rt_g.recal.min,
			 (unsigned long long)rt_g.recal.max);
	rt_write_file(".info", buf, (size_t)n);
}

static void rt_new_key(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(rt_g.key, sizeof(rt_g.key), "p%d-%lld%09ld", (int)getpid(), (long long)ts.tv_sec,
		 ts.tv_nsec);
}

/*
 * The runtime keeps no file descriptor open between calls: programs close
 * every descriptor they did not open (daemons, closefrom) or dup2 over
 * them, and a probe must never write into a file of the program's.
 */
/* A new buffer file for the thread, its name in t->path:
 * "<spool>/<key>.t<tid>.buf" (rt_file_create_thread: another name if an
 * earlier thread of the process had the same id). */
static int rt_create_thread_file(struct rt_thread *t)
{
	char suffix[32];
	rt_file_format_int(rt_file_format_str(suffix, ".t"), (unsigned)t->tid);
	rt_path(t->path, RT_PATH_MAX, suffix);
	return rt_file_create_thread(t->path, RT_PATH_MAX, ".buf", O_RDWR);
}

/* t->path (made by rt_thread_start) with the extension ext, 3 letters. */
static const char *rt_thread_file(struct rt_thread *t, const char *ext)
{
	size_t n = strlen(t->path);
	if (n >= 3)
		memcpy(t->path + n - 3, ext, 3);
	return t->path;
}

/* The nearest of the next tail sample, the end of the pages faulted in
 * and the chunk's end. */
static uint8_t *rt_next_limit(const struct rt_thread *t)
{
	uint8_t *l = t->sample_at < t->end_limit ? t->sample_at : t->end_limit;
	return t->pop_at < l ? t->pop_at : l;
}

/* The probes' limit: 0 while work waits (rt_after), else rt_next_limit.
 * Called with busy set. */
static void rt_set_limit(struct rt_thread *t)
{
	if (t->nnotes || t->npend)
		t->limit = 0;
	else
		t->limit = rt_next_limit(t);
}

/*
 * Where the next tail sample is due (rt_after_lean): 896..1151 bytes of
 * records on, the step varied by the clock's low bits so that it does not
 * keep falling on the same probe of a program's repeating pattern.  The
 * probes test one limit, the nearer of that and the chunk's end.
 */
static void rt_next_sample(struct rt_thread *t, uint64_t now)
{
	t->sample_at = t->pos + RT_SAMPLE_GAP + (now & 255);
	rt_set_limit(t);
}

/*
 * A fault in a spool mapping reads only its page: the kernel's read-around
 * (128 KiB or more about the page, in large folios) zero-filled pages of
 * the sparse notes area and of chunks no record reaches, for each thread;
 * 2,000 threads started at once spent most of their start in that memset.
 */
static void rt_no_readaround(void *m, uint64_t size)
{
	madvise(m, size, MADV_RANDOM);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Fault a mapped region of a spool file in, writable, in one call rather
 * than one write fault per page while the program runs (MAP_POPULATE maps
 * shared file pages read-only); older kernels fall back to MAP_POPULATE's
 * behaviour.  0, or -1 with errno (EFAULT: past the file's end). */
static int rt_populate(void *m, uint64_t size)
{
	if (madvise(m, size, MADV_POPULATE_WRITE) == 0)
		return 0;
	int err = errno;
	madvise(m, size, MADV_WILLNEED);
	errno = err;
	return -1;
}

/*
 * Whether the program's file size limit (RLIMIT_FSIZE, ulimit -f) lets its
 * files grow to end bytes; else errno is EFBIG.  Growing a file past it
 * raises SIGXFSZ, which ends the program: the runtime's buffer files stop
 * growing there instead (FMT_SPOOL_FILELIMIT).
 */
static int rt_file_may_grow(uint64_t end)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || end <= rl.rlim_cur)
		return 1;
	errno = EFBIG;
	return 0;
}

/* size bytes of the spool file fd at off, allocated on disk, mapped, and
 * its first pop bytes faulted in; MAP_FAILED when the disk is full (or
 * the file may not grow so far: errno EFBIG). */
static void *rt_map_region(int fd, uint64_t off, uint64_t size, uint64_t pop)
{
	if (!rt_file_may_grow(off + size))
		return MAP_FAILED;
	int err = posix_fallocate(fd, (off_t)off, (off_t)size);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)(off + size)) < 0 ? errno : 0;
	void *m = err ? MAP_FAILED : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m != MAP_FAILED) {
		rt_no_readaround(m, size);
		rt_populate(m, pop < size ? pop : size);
	}
	return m;
}

/*
 * A thread's first chunk (256 KiB) is faulted in RT_POP_FIRST bytes at
 * first, then in steps that double what is there as the records reach
 * the end of it (rt_populate_more, on the probes' slow path, its time the
 * profiler's own): faulting in the whole of it cost a thread 0.33 ms on an
 * ext4 disk, more than the program's making and joining it, and most
 * threads of a program that makes many write a few records.  The pages
 * are allocated on disk with the chunk (rt_map_region), so a record that
 * runs past the pages faulted in takes a page fault, never SIGBUS.  Later
 * chunks are faulted in whole.
 */
#define RT_POP_FIRST (32u << 10)

/* m, a mapping of chunk number t->chunk whose first pop bytes are faulted
 * in, is where the thread writes now. */
static void rt_use_chunk(struct rt_thread *t, uint8_t *m, uint64_t pop)
{
	uint64_t size = fmt_spool_chunk_size(t->chunk);
	t->chunk_base = m;
	t->pos = m;
	t->end_limit = m + size - FMT_MAX_RECORD;
	/* (at or past end_limit: nothing left to fault in that a limit
	 * short of the chunk's end would wait for) */
	t->pop_at = pop < size - FMT_MAX_RECORD ? m + pop : m + size;
	rt_next_sample(t, 0);
}

/* rt_populate on the probes' slow path: the program's vector registers
 * kept around the call out (tests/layers/check_probe_paths.py lists it). */
__attribute__((noinline, cold)) static void rt_populate_kept(struct rt_thread *t, void *m, uint64_t size)
{
	int r;
	RT_VEC_KEEP(t, r = rt_populate(m, size));
	(void)r; /* (not faulted in: faulted as written) */
}

/* The chunk's pages faulted in up to want at least, each step doubling
 * them, or all of the rest where system calls are not allowed any more
 * (the pages then fault in as they are written). */
static void rt_populate_to(struct rt_thread *t, const uint8_t *want)
{
	if (!t->chunk_base)
		return;
	uint8_t *end = t->chunk_base + fmt_spool_chunk_size(t->chunk);
	while (t->pop_at < want && t->pop_at < end) {
		uint8_t *to = t->pop_at + (t->pop_at - t->chunk_base);
		if (to > end - FMT_MAX_RECORD || rt_g.no_syscalls)
			to = end;
		if (!rt_g.no_syscalls)
			rt_populate_kept(t, t->pop_at, (uint64_t)(to - t->pop_at));
		t->pop_at = to;
	}
}

/* The records reached the end of the pages faulted in. */
static void rt_populate_more(struct rt_thread *t)
{
	rt_populate_to(t, t->pos + 1);
	rt_mark_overhead(t); /* the profiler's time */
}

/* A thread that cannot record (no descriptor free, no right to the spool,
 * a seccomp sandbox), or a whole process (a fork child that cannot begin),
 * counted where the recorder reads it. */
static void rt_count_unrecorded(int process)
{
	if (rt_g.count_hdr)
		__atomic_add_fetch(process ? &rt_g.count_hdr->unrecorded_procs : &rt_g.count_hdr->unrecorded, 1,
				   __ATOMIC_RELAXED);
}

/* A program exec'd where the spool is out of reach (rt_exec.c), a process
 * not recorded: delta +1, or -1 when the exec failed after all. */
static void rt_count_exec_unrecorded(int delta)
{
	if (rt_g.count_hdr && rt_g.enabled)
		__atomic_add_fetch(&rt_g.count_hdr->unrecorded_procs, (uint32_t)delta, __ATOMIC_RELAXED);
}

/* A thread that cannot begin recording: in a fork child whose first
 * thread it is (forked after a setuid or a chroot, below a file size
 * limit), the process is the one not recorded. */
static void rt_count_unstarted(void)
{
	int process = rt_g.count_inherited && !rt_g.proc_counted;
	rt_g.proc_counted |= process;
	rt_count_unrecorded(process);
}

/* Why a spool file could not be opened, as the thread's spool flag. */
static uint32_t rt_open_failure(int err)
{
	if (err == EMFILE || err == ENFILE)
		return FMT_SPOOL_NOFILES;
	/* (ENOENT, ENOTDIR: the spool's path is not in view any more, as after
	 * a chroot without /proc) */
	if (err == EACCES || err == EPERM || err == ENOENT || err == ENOTDIR)
		return FMT_SPOOL_NOACCESS;
	return FMT_SPOOL_NOSPACE;
}

/*
 * The next chunk without opening the file: the current chunk's mapping
 * (*old, old_size bytes, just before it in the file) grown over it with
 * mremap, its first part let go.  For a program that can no longer open
 * the spool (it gave up root's rights with setuid, or holds every
 * descriptor it may): the recorder allocates each thread's next chunk
 * ahead of it, and MADV_POPULATE_WRITE says whether that is done (EFAULT
 * for a page past the file's end, where a write would raise SIGBUS), so
 * it is waited for, up to half a second (the recorder passes every 2 ms,
 * but on a loaded machine its turn may come late: 50 ms lost threads of
 * 16 writing at once).
 */
static void *rt_map_chunk_grown(uint8_t **old, uint64_t old_size, uint64_t size)
{
	for (int tries = 0; *old && tries < 500; tries++) {
		uint8_t *m = mremap(*old, old_size, old_size + size, MREMAP_MAYMOVE);
		if (m == MAP_FAILED)
			return MAP_FAILED;
		if (madvise(m + old_size, size, MADV_POPULATE_WRITE) == 0) {
			munmap(m, old_size);
			*old = NULL;
			return m + old_size;
		}
		int err = errno;
		/* back to the old size, where it is now */
		*old = mremap(m, old_size + size, old_size, 0);
		if (*old == MAP_FAILED) {
			munmap(m, old_size + size);
			*old = NULL;
		}
		if (err != EFAULT)
			return MAP_FAILED;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	return MAP_FAILED;
}

/* Map chunk number t->chunk of the buffer file; 0 on success, else the
 * spool flag that says why not.  *old (old_size bytes) is the chunk before
 * it when there is one: let go on success (*old then NULL), else still
 * mapped at *old (or NULL), for the caller to let go. */
static uint32_t rt_map_chunk(struct rt_thread *t, uint8_t **old, uint64_t old_size)
{
	uint64_t size = fmt_spool_chunk_size(t->chunk), pop = size;
	void *m;
	int fd = rt_file_open(rt_thread_file(t, "buf"), O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		uint32_t why = rt_open_failure(errno);
		m = rt_map_chunk_grown(old, old_size, size);
		if (m == MAP_FAILED)
			return why;
	} else {
		pop = t->chunk || rt_g.no_syscalls ? size : RT_POP_FIRST;
		m = rt_map_region(fd, t->chunk_off, size, pop);
		int err = errno;
		close(fd);
		if (m == MAP_FAILED)
			return err == EFBIG ? FMT_SPOOL_FILELIMIT : FMT_SPOOL_NOSPACE;
		if (*old)
			munmap(*old, old_size);
		*old = NULL;
	}
	rt_use_chunk(t, m, pop);
	return 0;
}

/*
 * Spare buffer files, for the threads a program starts after it gave up
 * root's rights (setuid to another user, as daemons do before they start
 * their worker threads) or shut itself in with chroot: from then on it can
 * no longer open the spool (a directory of root's, mode 0700, reached
 * through /proc/<stint>/fd).
 * Made just before the program's first such call (rt_before_setuid below),
 * each a file of its own with its header and first chunk mapped; a thread
 * whose buffer file cannot be made takes one (later chunks come by
 * rt_map_chunk_grown).  The recorder reads a spare that was taken as any
 * thread's buffer and skips one that was not (no header magic).
 */
#define RT_SPARES 16

static struct rt_spare {
	struct fmt_spool_hdr *hdr; /* RT_HDR_MAP bytes */
	uint8_t *chunk;            /* chunk 0 */
} rt_spares[RT_SPARES];
static unsigned rt_nspares, rt_spares_taken, rt_spares_made;

__attribute__((unused)) static void rt_make_spares(void)
{
	if (!rt_g.enabled || rt_g.no_syscalls || __atomic_exchange_n(&rt_spares_made, 1, __ATOMIC_ACQ_REL))
		return;
	int mark = rt_own_begin(0); /* files made in the program's setuid() call */
	uint64_t size = fmt_spool_chunk_size(0);
	unsigned n = 0;
	for (unsigned k = 0; k < RT_SPARES; k++) {
		char suffix[32];
		rt_file_format_str(rt_file_format_int(rt_file_format_str(suffix, ".s"), k), ".buf");
		const char *path = RT_PATH_ON_STACK(suffix);
		int fd = rt_file_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			break;
		void *h = MAP_FAILED, *c = MAP_FAILED;
		if (rt_file_may_grow(FMT_SPOOL_DATA_OFF + size) && posix_fallocate(fd, 0, FMT_SPOOL_HDR_SIZE) == 0 &&
		    posix_fallocate(fd, FMT_SPOOL_DATA_OFF, (off_t)size) == 0) {
			h = mmap(NULL, RT_HDR_MAP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, FMT_SPOOL_DATA_OFF);
			if (h != MAP_FAILED)
				rt_no_readaround(h, RT_HDR_MAP);
			if (c != MAP_FAILED)
				rt_no_readaround(c, size);
		}
		close(fd);
		if (h == MAP_FAILED || c == MAP_FAILED) {
			if (h != MAP_FAILED)
				munmap(h, RT_HDR_MAP);
			if (c != MAP_FAILED)
				munmap(c, size);
			unlink(path);
			break;
		}
		rt_spares[n].hdr = h;
		rt_spares[n].chunk = c;
		n++;
	}
	__atomic_store_n(&rt_nspares, n, __ATOMIC_RELEASE);
	rt_own_end(mark);
}

/* A spare for thread t, mapped as rt_thread_start maps a new buffer; 0 when
 * none is left. */
static int rt_take_spare(struct rt_thread *t)
{
	if (rt_g.no_spares)
		return 0;
	unsigned k = __atomic_fetch_add(&rt_spares_taken, 1, __ATOMIC_ACQ_REL);
	if (k >= __atomic_load_n(&rt_nspares, __ATOMIC_ACQUIRE))
		return 0;
	struct rt_spare *sp = &rt_spares[k];
	rt_populate(sp->chunk, fmt_spool_chunk_size(0));
	t->hdr = sp->hdr;
	t->note_pages = 0;
	t->chunk = 0;
	t->chunk_off = FMT_SPOOL_DATA_OFF;
	rt_use_chunk(t, sp->chunk, fmt_spool_chunk_size(0));
	sp->hdr = NULL;
	sp->chunk = NULL;
	return 1;
}

/* A fork child's spares are its parent's files: let go, never used. */
static void rt_drop_spares(void)
{
	unsigned n = __atomic_load_n(&rt_nspares, __ATOMIC_ACQUIRE);
	for (unsigned k = 0; k < n; k++) {
		if (rt_spares[k].hdr)
			munmap(rt_spares[k].hdr, RT_HDR_MAP);
		if (rt_spares[k].chunk)
			munmap(rt_spares[k].chunk, fmt_spool_chunk_size(0));
		rt_spares[k].hdr = NULL;
		rt_spares[k].chunk = NULL;
	}
	rt_nspares = rt_spares_taken = rt_spares_made = 0;
}

/*
 * The header's table of used bytes per chunk has FMT_SPOOL_MAX_CHUNKS
 * entries (7.5 GiB of events); a thread goes on past it, with no limit but
 * the disk: its later chunks are found by decoding (FMT_SPOOL_UNTABLED).
 * STINT_TEST_TABLE makes the table shorter, for the tests.
 */
static unsigned rt_table_chunks = FMT_SPOOL_MAX_CHUNKS;

/* Entries of a thread's notes area (fmt_spool.h) before its .fns file
 * takes the rest; STINT_TEST_NOTES makes it smaller, for the tests. */
static uint32_t rt_notes_max = FMT_SPOOL_NOTES_MAX;

/* The recorder, from STINT_RECORDER: when it is gone, nothing more is
 * written (rt_file.h, rt_file_recorder_gone); 0 when not known */
static int rt_recorder_pid;
static unsigned long long rt_recorder_start;

static void rt_note_chunk_used(struct rt_thread *t)
{
	if (t->chunk < rt_table_chunks) {
		t->hdr->used[t->chunk] = (uint32_t)(t->pos - t->chunk_base);
		t->hdr->nused = t->chunk + 1;
	} else {
		t->hdr->flags |= FMT_SPOOL_UNTABLED;
	}
}

static void rt_stop_thread(struct rt_thread *t, uint32_t flag)
{
	if (t->hdr)
		t->hdr->flags |= flag;
	RT_GUARD(t->gate, t->gate & ~RT_GATE_LEAN);
	t->state = RT_DONE;
}

/*
 * The chunk is full: close it with a PAD record and map the next one,
 * populated at once (one system call instead of a page fault every 4 KiB
 * of events).  The time this takes is the profiler's: the new chunk
 * starts with an OVERHEAD record covering it (the thread's clock goes on).
 */
static int rt_next_chunk_work(struct rt_thread *t);

__attribute__((noinline, cold)) static int rt_next_chunk(struct rt_thread *t)
{
	int r;
	RT_VEC_KEEP(t, r = rt_next_chunk_work(t));
	return r;
}

static int rt_next_chunk_work(struct rt_thread *t)
{
	uint64_t size = fmt_spool_chunk_size(t->chunk);
	rt_note_chunk_used(t);
	t->hdr->tail_sum = t->tail_sum;
	t->hdr->tail_n = t->tail_n;
	fmt_put_ext(t->pos, FMT_X_PAD, 0, 0, NULL, 0);
	if (rt_g.no_syscalls) { /* (the chunk stays mapped) */
		if (t->reserve_next >= t->nreserve) {
			rt_stop_thread(t, FMT_SPOOL_SECCOMP);
			return -1;
		}
		/* the next chunk, mapped ahead (rt_seccomp) */
		t->chunk_off += size;
		t->chunk++;
		rt_use_chunk(t, t->reserve[t->reserve_next++], fmt_spool_chunk_size(t->chunk)); /* (faulted in whole) */
		rt_mark_overhead(t);
		return 0;
	}
	if (rt_file_recorder_gone(rt_recorder_pid, rt_recorder_start)) {
		/* stint record was killed: keep what was recorded, add nothing;
		 * the program runs on */
		munmap(t->chunk_base, size);
		t->chunk_base = NULL;
		rt_g.enabled = 0;
		rt_stop_thread(t, FMT_SPOOL_ORPHANED);
		return -1;
	}
	t->chunk_off += size;
	t->chunk++;
	uint8_t *old = t->chunk_base;
	t->chunk_base = NULL;
	uint32_t why = rt_map_chunk(t, &old, size);
	if (why) {
		if (old)
			munmap(old, size);
		/* a recorder being killed closes its descriptors, and with them
		 * the spool's path through /proc/<it>/fd, before /proc shows it
		 * ended: a chunk that could not be had then is its death, not a
		 * full disk (rt_map_chunk waited for it a little) */
		if (rt_file_recorder_gone(rt_recorder_pid, rt_recorder_start)) {
			rt_g.enabled = 0;
			why = FMT_SPOOL_ORPHANED;
		}
		rt_stop_thread(t, why);
		return -1;
	}
	rt_mark_overhead(t);
	t->recal_due = 1; /* once the slow path is done (rt_after_lean, rt_recalibrate) */
	return 0;
}

static void rt_thread_end(void *arg);

static void rt_init_work(void);

static void rt_init_once(void)
{
	rt_init_work();
	__atomic_store_n(&rt_g.init_done, 1, __ATOMIC_RELEASE);
}

static void rt_init_work(void)
{
	const char *spool = rt_getenv("STINT_SPOOL");
	if (!rt_file_abs(rt_g.spool, sizeof(rt_g.spool), spool))
		return;
	/* (a /proc/<recorder>/fd/N path, absolute and short) */
	const char *cache = rt_getenv(FMT_ENV_KEPT_CACHE);
	if (cache && cache[0] == '/' && strlen(cache) < sizeof(rt_g.cache))
		strcpy(rt_g.cache, cache);
	const char *clk = rt_getenv("STINT_CLOCK");
	rt_g.use_tsc = !(clk && strcmp(clk, "monotonic") == 0);
	const char *os = rt_getenv("STINT_OS");
	rt_g.os_mode = !os || strcmp(os, "perf") == 0 ? RT_OS_PERF
		       : strcmp(os, "rusage") == 0   ? RT_OS_RUSAGE
						     : RT_OS_OFF;
	const char *plt = rt_getenv("STINT_PLT");
	rt_g.plt = !(plt && strcmp(plt, "0") == 0);
	const char *notes = rt_getenv("STINT_TEST_NOTES");
	if (notes && atoi(notes) >= 0 && atoi(notes) < (int)FMT_SPOOL_NOTES_MAX)
		rt_notes_max = (uint32_t)atoi(notes);
	const char *table = rt_getenv("STINT_TEST_TABLE");
	if (table && atoi(table) > 0 && atoi(table) < FMT_SPOOL_MAX_CHUNKS)
		rt_table_chunks = (unsigned)atoi(table);
	rt_file_recorder_parse(rt_getenv("STINT_RECORDER"), &rt_recorder_pid, &rt_recorder_start);
	const char *cost = rt_getenv("STINT_COST");
	if (cost)
		rt_g.calib_ticks = strtoull(cost, NULL, 10);
	pthread_key_create(&rt_thread_key, rt_thread_end);
	rt_new_key();
	/* started after stint record was killed: write nothing */
	rt_g.enabled = !rt_file_recorder_gone(rt_recorder_pid, rt_recorder_start);
}

static int rt_note_fn(struct rt_thread *t, uint64_t fn);

/* (raw system calls: reached from a probe before the thread has the state
 * in which RT_VEC_KEEP keeps the vector registers around a call out) */
/* name in the scope of the loaded object path (its own and its
 * dependencies'), if it is not ours */
static void *rt_fn_in_scope_of(const char *path, const char *name, const void *ours)
{
	if (!path || !path[0])
		return NULL; /* (the main program's scope is the global one: ours again) */
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	void *f = dlsym(h, name);
	dlclose(h);
	return f && f != ours ? f : NULL;
}

struct rt_fn_search {
	const char *name;
	const void *ours;
	uintptr_t self; /* our own load address */
	void *found;
};

static int rt_fn_search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct rt_fn_search *s = arg;
	if (info->dlpi_addr != s->self)
		s->found = rt_fn_in_scope_of(info->dlpi_name, s->name, s->ours);
	return s->found != NULL;
}

uint32_t rt_scope_gen;

void *rt_next_fn(const char *name, const void *ours, const void *caller)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f && f != ours)
		return f;
	Dl_info di, self;
	if (caller && dladdr(caller, &di) && (f = rt_fn_in_scope_of(di.dli_fname, name, ours)))
		return f;
	/* (the caller reached us through a probe's stub of ours: any loaded
	 * object's scope that has it) */
	struct rt_fn_search s = {name, ours, 0, NULL};
	if (dladdr((void *)rt_next_fn, &self))
		s.self = (uintptr_t)self.dli_fbase;
	dl_iterate_phdr(rt_fn_search_object, &s);
	return s.found;
}

void *rt_next_fn_or_die(const char *name, const void *ours, const void *caller)
{
	void *f = rt_next_fn(name, ours, caller);
	if (!f) {
		static const char m1[] = "stint: cannot find the function '";
		static const char m2[] = "' that stint's runtime stands in for\n";
		ssize_t w = write(2, m1, sizeof(m1) - 1);
		w = write(2, name, strlen(name));
		w = write(2, m2, sizeof(m2) - 1);
		(void)w;
		abort();
	}
	return f;
}

void *rt_thread_block(void **slot, size_t size)
{
	if (rt_g.no_syscalls)
		return NULL;
	long m = arch_syscall6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)m > -4096ul)
		return NULL;
	void *none = NULL;
	if (!__atomic_compare_exchange_n(slot, &none, (void *)m, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		arch_syscall6(SYS_munmap, m, (long)size, 0, 0, 0, 0);
		return none;
	}
	return (void *)m;
}

int rt_thread_arrays_map(struct rt_thread *t, struct rt_thread_arrays *a)
{
	if (!a && !(a = rt_thread_block((void **)&t->arrays, sizeof(*a))))
		return 0;
	t->arrays = a;
	t->vec_area = a->vec_area;
	t->c = &a->c;
	t->stack = a->stack;
	t->notes = a->notes;
	t->pend = a->pend;
	t->rets = a->rets;
	t->path = a->path;
	return 1;
}

/* t without its arrays, which are returned (for the caller to unmap). */
static struct rt_thread_arrays *rt_thread_arrays_forget(struct rt_thread *t)
{
	struct rt_thread_arrays *a = t->arrays;
	t->arrays = NULL;
	t->vec_area = NULL;
	t->c = NULL;
	t->stack = NULL;
	t->notes = NULL;
	t->pend = NULL;
	t->rets = NULL;
	t->path = NULL;
	return a;
}

/* What a thread that recorded keeps mapped beyond its buffer, let go when
 * it ends: its arrays (kept while library calls are in flight, whose
 * returns still find them), its set of addresses told, its switch page. */
static void rt_thread_unmap(struct rt_thread *t)
{
	if (rt_g.no_syscalls)
		return;
	if (t->arrays && !t->nrets && !t->vec_busy)
		munmap(rt_thread_arrays_forget(t), sizeof(struct rt_thread_arrays));
	if (t->seen) {
		munmap(t->seen, (size_t)t->seen_cap * sizeof(uint64_t));
		t->seen = NULL;
	}
	if (t->fns_map) { /* (what it holds is in the file) */
		munmap(t->fns_map, RT_FNS_WINDOW);
		t->fns_map = t->fns_at = NULL;
	}
	if (t->spill) {
		munmap(t->spill, (size_t)t->spill_cap * sizeof(struct rt_frame));
		t->spill = NULL;
		t->nspill = t->spill_cap = 0;
	}
	if (t->lock) {
		rt_close_switch_page(t->lock);
		t->lock = NULL;
	}
}

/* Attached to a running process: the frames the thread had open then are
 * entered implicitly, as a fork child's (rt_attach_frames; none otherwise) */
__attribute__((weak)) uint32_t rt_attach_frames(pid_t tid, uint64_t *open, uint32_t max)
{
	(void)tid;
	(void)open;
	(void)max;
	return 0;
}

/* The frames open in a new recording (a fork or vfork child's, the threads'
 * at attach), outermost first: entered implicitly, no call counted.  open
 * may be t->stack's own memory: the frames are put there last to first,
 * each over addresses already read. */
static void rt_inherit_frames(struct rt_thread *t, const uint64_t *open, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t b[8];
		fmt_put_u64(b, open[i]);
		t->pos = fmt_put_ext(t->pos, FMT_X_INHERIT, 0, 0, b, 8);
		rt_note_fn(t, open[i]);
	}
	for (uint32_t i = n; i-- > 0;)
		t->stack[i] = (struct rt_frame){open[i], RT_SP_NONE_AT(i)};
	t->depth = n;
}

static void rt_inherit_attached(struct rt_thread *t)
{
	/* (read into the shadow stack itself: no 4 KiB on the program's stack) */
	uint64_t *open = (uint64_t *)(void *)t->stack;
	rt_inherit_frames(t, open, rt_attach_frames(t->tid, open, RT_STACK));
}

/*
 * The program's floating-point and vector registers: xmm0-15, the upper
 * halves of ymm0-15, the upper 256 bits of zmm0-15, zmm16-31, the opmask
 * registers, MXCSR and x87.  The runtime's own code never touches them (it
 * is built with -mgeneral-regs-only), so the trampolines of patched
 * functions save the general registers only; but the probes' slow paths
 * call the C library, whose string functions use xmm and ymm16-31 and end
 * with vzeroupper.  A function patched at load (or -pg -mfentry,
 * -fpatchable-function-entry) whose caller keeps a value in a vector
 * register across the call (GCC's -fipa-ra), or that takes or returns
 * one, would lose it.  So every slow path that calls outside the runtime
 * runs inside RT_VEC_KEEP (rt_int.h): XSAVE and XRSTOR of the components
 * the processor says are in use (XGETBV 1), in the thread's state.
 * tests/layers/check_probe_paths.py checks from the built library that no
 * call out of the runtime is reachable from a probe except through it.
 */
static uint32_t rt_vec_mask;  /* of ARCH_VEC_COMPONENTS, the ones XCR0 enables */
static uint32_t rt_vec_bytes; /* the XSAVE area up to the last of them */
static int rt_vec_inuse_known; /* XGETBV with ECX=1 (XINUSE) is there */
static int rt_vec_ready;

static void rt_vec_init(void)
{
	uint32_t mask, bytes;
	arch_vec_probe(&mask, &bytes, &rt_vec_inuse_known);
	if (bytes > RT_VEC_AREA) { /* a processor newer than this runtime */
		mask &= ARCH_VEC_SSE_ONLY;
		bytes = ARCH_VEC_SSE_BYTES;
	}
	rt_vec_bytes = bytes;
	rt_vec_mask = mask;
	__atomic_store_n(&rt_vec_ready, 1, __ATOMIC_RELEASE);
}

int rt_vec_hold(struct rt_thread *t)
{
	if (t->vec_busy)
		return 0;
	/* (a thread not recording yet: a selection decided before its start) */
	if (RT_UNLIKELY(!t->arrays) && !rt_thread_arrays_map(t, NULL))
		return 0;
	if (!__atomic_load_n(&rt_vec_ready, __ATOMIC_ACQUIRE))
		rt_vec_init(); /* the same result in every thread */
	if (!arch_vec_live(rt_vec_mask, rt_vec_inuse_known))
		return 0;
	t->vec_busy = 1;
	arch_vec_save(t->vec_area, rt_vec_mask);
	return 1;
}

void rt_vec_release(struct rt_thread *t)
{
	arch_vec_restore(t->vec_area, rt_vec_mask);
	t->vec_busy = 0;
}

static int rt_thread_start_work(struct rt_thread *t);

__attribute__((noinline)) int rt_thread_start(struct rt_thread *t)
{
	if (t->state == RT_DONE) /* (also a clone child's on our thread pointer: it writes nothing) */
		return 0;
	if (!t->arrays && !rt_thread_arrays_map(t, NULL)) {
		/* no memory, or a thread started inside a seccomp sandbox */
		if (rt_g.enabled && rt_g.no_syscalls)
			rt_count_unrecorded(0);
		t->state = RT_DONE;
		RT_GUARD(t->gate, 0);
		return 0;
	}
	int ok;
	RT_VEC_KEEP(t, ok = rt_thread_start_work(t));
	if (!ok && t->state == RT_DONE && !t->hdr && !t->nrets && !rt_g.no_syscalls) {
		/* it never will: its arrays go (a raw call, no vector register kept here) */
		arch_syscall6(SYS_munmap, (long)rt_thread_arrays_forget(t), (long)sizeof(struct rt_thread_arrays), 0,
			      0, 0, 0);
	}
	return ok;
}

/* Who the buffer file's thread is, in its header (mapped, allocated); the
 * magic last, so that the recorder, which reads the header while the
 * program runs, finds the rest there when it finds the magic. */
static void rt_hdr_identity(struct rt_thread *t, uint64_t t0)
{
	t->hdr->version = FMT_SPOOL_VERSION;
	t->hdr->hdr_size = FMT_SPOOL_HDR_SIZE;
	t->hdr->pid = (int32_t)getpid();
	t->hdr->tid = (int32_t)t->tid;
	prctl(PR_GET_NAME, t->hdr->name, 0, 0, 0);
	t->hdr->calib_ticks = rt_g.calib_ticks;
	t->hdr->start_time = t0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(t->hdr->magic, FMT_SPOOL_MAGIC, 8);
}

/*
 * Start recording the calling thread: create its buffer file and map the
 * header page and the first chunk.  Returns 1 when the thread records.
 */
static int rt_thread_start_work(struct rt_thread *t)
{
	if (t->state == RT_DONE)
		return 0;
	if (!rt_env_ready()) /* before libc's start-up, without /proc: later */
		return 0;
	pthread_once(&rt_once, rt_init_once);
	if (rt_g.enabled && (rt_g.no_syscalls || rt_g.no_clock)) { /* inside a seccomp sandbox, or no clock */
		rt_count_unrecorded(0);
		t->state = RT_DONE;
		return 0;
	}
	if (rt_g.enabled && rt_file_recorder_gone(rt_recorder_pid, rt_recorder_start))
		rt_g.enabled = 0; /* stint record was killed: no new spool files */
	if (!rt_g.enabled) {
		t->state = RT_DONE;
		return 0;
	}
	RT_GUARD(t->gate, RT_GATE_BUSY);
	/* the thread's clock starts now: setting up is the first overhead */
	uint64_t t0 = rt_clock();
	t->tid = (pid_t)syscall(SYS_gettid);
	int fd = rt_create_thread_file(t);
	if (fd < 0) {
		/* no descriptor free, or no right to the spool any more (setuid) */
		int err = errno;
		if (rt_take_spare(t))
			goto mapped;
		if (rt_open_failure(err) != FMT_SPOOL_NOSPACE)
			rt_count_unstarted();
		goto fail;
	}
	if (!rt_file_may_grow(FMT_SPOOL_DATA_OFF + fmt_spool_chunk_size(0))) {
		/* the program lowered its file size limit below a first chunk */
		close(fd);
		unlink(rt_thread_file(t, "buf"));
		rt_count_unstarted();
		goto fail;
	}
	/* the header page allocated, or no recording: on a full disk a page
	 * left a hole (ftruncate) took the program's SIGBUS at the first
	 * store into it (only where the file system cannot allocate ahead) */
	int ferr = posix_fallocate(fd, 0, FMT_SPOOL_HDR_SIZE);
	if (ferr == EOPNOTSUPP || ferr == EINVAL)
		ferr = ftruncate(fd, FMT_SPOOL_HDR_SIZE) < 0 ? errno : 0;
	if (ferr) {
		close(fd);
		goto fail;
	}
	/* the notes area's pages are made writable one by one (rt_note_write):
	 * the file is sparse there, and a write fault in a hole would raise
	 * SIGBUS on a full disk where MADV_POPULATE_WRITE returns an error */
	t->hdr = mmap(NULL, RT_HDR_MAP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (t->hdr != MAP_FAILED)
		rt_no_readaround(t->hdr, RT_HDR_MAP);
	t->note_pages = 0;
	if ((!rt_g.count_hdr || rt_g.count_inherited) && t->hdr != MAP_FAILED) {
		void *m = mmap(NULL, FMT_SPOOL_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			rt_no_readaround(m, FMT_SPOOL_HDR_SIZE);
			if (rt_g.count_hdr) /* the parent's, until now */
				munmap(rt_g.count_hdr, FMT_SPOOL_HDR_SIZE);
			rt_g.count_hdr = m;
			rt_g.count_inherited = 0;
		}
	}
	close(fd);
	if (t->hdr == MAP_FAILED) {
		t->hdr = NULL;
		goto fail;
	}
	t->chunk = 0;
	t->chunk_off = FMT_SPOOL_DATA_OFF;
	uint8_t *none = NULL;
	uint32_t why = rt_map_chunk(t, &none, 0);
	if (why) {
		/* a thread that could not start (the disk full) is named in its
		 * header: the recorder says which, and the report lists it */
		t->hdr->flags |= why;
		rt_hdr_identity(t, t0);
		goto fail;
	}
mapped:
	memset(t->c, 0, sizeof(*t->c));
	t->depth = 0;
	t->lock = NULL;
	if (!t->seen) {
		void *m = mmap(NULL, RT_SEEN * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		t->seen = m == MAP_FAILED ? NULL : m;
		t->seen_cap = RT_SEEN;
	} else {
		memset(t->seen, 0, (size_t)t->seen_cap * sizeof(uint64_t));
	}
	t->seen_n = 0;
	if (rt_g.os_mode == RT_OS_PERF) {
		t->lock = rt_open_switch_page();
		if (!t->lock) /* not permitted: this thread falls back */
			rt_g.os_mode = RT_OS_RUSAGE;
	}
	rt_stamp(t, &t->last_switches);
	rt_hdr_identity(t, t0);
	t->tail_sum = t->tail_n = 0;
	t->last_t = t0;
	pthread_setspecific(rt_thread_key, t);
	t->state = RT_ACTIVE;
	rt_mark_overhead(t);
	rt_inherit_attached(t);
	/* with a selection, every probe takes rt_probe() (rt_select.c decides) */
	RT_GUARD(t->gate, rt_g.use_tsc && t->lock != NULL && !rt_sel_on ? RT_GATE_LEAN : 0);
	return 1;
fail:
	t->state = RT_DONE;
	RT_GUARD(t->gate, 0);
	return 0;
}

/* ------------------------------------------------------------------------
 * Recording
 * --------------------------------------------------------------------- */

/*
 * Tell the recorder about a function address (or a call site's, with
 * FMT_SPOOL_SITE_BIT) the first time this thread names it, so it need not
 * decode the events to find what to symbolize.  Only reached on the slow
 * path of the address cache.  The set of addresses already told is looked
 * up at once, by the probe: only a new one is queued for rt_after() to
 * write (a Lua run misses the address cache 12 M times, almost always for
 * an address told long before).
 */
static void rt_note_write(struct rt_thread *t, uint64_t fn);
static int rt_fns_window(struct rt_thread *t);

static inline uint32_t rt_seen_slot(uint64_t a, uint32_t cap)
{
	return (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/*
 * The set at twice its slots, once three quarters are taken: a large C++
 * program names hundreds of thousands of functions and call sites (g++'s
 * cc1plus compiling a small file: 1.2 million notes with a set of fixed
 * size, every address evicted from the address caches told again).  Raw
 * system calls: reached from a probe's slow path.
 */
__attribute__((noinline, cold)) static void rt_seen_grow(struct rt_thread *t)
{
	uint32_t cap = t->seen_cap * 2;
	if (cap > RT_SEEN_MAX || rt_g.no_syscalls)
		return;
	long m = arch_syscall6(SYS_mmap, 0, (long)cap * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)m > -4096ul)
		return;
	uint64_t *n = (uint64_t *)m;
	for (uint32_t i = 0; i < t->seen_cap; i++) {
		uint64_t a = t->seen[i];
		if (!a)
			continue;
		uint32_t s = rt_seen_slot(a, cap);
		while (n[s])
			s = (s + 1) & (cap - 1);
		n[s] = a;
	}
	arch_syscall6(SYS_munmap, (long)t->seen, (long)t->seen_cap * 8, 0, 0, 0, 0);
	t->seen = n;
	t->seen_cap = cap;
}

/* 1 when a is not in the set of addresses told (added to it now) */
static inline int rt_seen_new(struct rt_thread *t, uint64_t a)
{
	if (!t->seen)
		return 1;
	uint32_t mask = t->seen_cap - 1, s = rt_seen_slot(a, t->seen_cap);
	for (int probe = 0; probe < 16; probe++, s = (s + 1) & mask) {
		if (t->seen[s] == a)
			return 0;
		if (!t->seen[s]) {
			t->seen[s] = a;
			if (++t->seen_n > t->seen_cap / 4 * 3)
				rt_seen_grow(t);
			return 1;
		}
	}
	return 1; /* a full neighbourhood: told again, harmless */
}

/* Queue a for rt_after() if new.  A full queue takes nothing, and leaves a
 * out of the set: a later miss queues it. */
static inline void rt_note(struct rt_thread *t, uint64_t a)
{
	if (t->nnotes < RT_NOTES && rt_seen_new(t, a)) {
		t->notes[t->nnotes++] = a;
		t->limit = 0; /* have rt_after() write it */
	}
}

/* Tell a now, if new; 1 when it was written. */
__attribute__((noinline, cold)) static int rt_note_fn(struct rt_thread *t, uint64_t a)
{
	if (!rt_seen_new(t, a))
		return 0;
	RT_VEC_KEEP(t, rt_note_write(t, a));
	return 1;
}

static void rt_notes_write_all(struct rt_thread *t)
{
	for (uint32_t i = 0; i < t->nnotes; i++)
		rt_note_write(t, t->notes[i]);
}

/* The queued notes written: a call out, with the vector registers kept. */
__attribute__((noinline, cold)) static void rt_notes_write(struct rt_thread *t)
{
	RT_VEC_KEEP(t, rt_notes_write_all(t));
}

static void rt_note_write(struct rt_thread *t, uint64_t fn)
{
	uint32_t n = t->hdr->notes_n;
	if (n < rt_notes_max) {
		uint64_t *area = (uint64_t *)((uint8_t *)t->hdr + FMT_SPOOL_NOTES_OFF);
		uint32_t page = (uint32_t)(n * sizeof(uint64_t) / FMT_SPOOL_HDR_SIZE);
		if (page < t->note_pages ||
		    (!rt_g.no_syscalls && madvise((uint8_t *)area + (size_t)page * FMT_SPOOL_HDR_SIZE, FMT_SPOOL_HDR_SIZE,
			    MADV_POPULATE_WRITE) == 0)) {
			if (page + 1 > t->note_pages)
				t->note_pages = page + 1;
			area[n] = fn;
			__atomic_store_n(&t->hdr->notes_n, n + 1, __ATOMIC_RELEASE); /* after the note */
			return;
		}
	}
	if (rt_g.no_syscalls)
		return; /* (its name is lost: the report shows its address) */
	if ((!t->fns_map || t->fns_at == t->fns_map + RT_FNS_WINDOW / sizeof(uint64_t)) && !rt_fns_window(t))
		return;
	*t->fns_at++ = fn;
}

/*
 * The next RT_FNS_WINDOW bytes of the thread's .fns file, mapped shared: a
 * name written there is in the file even if the program is then killed,
 * and the descriptor is closed at once (the program may close or reuse any
 * descriptor, never our mapping).  An open per window, not per name: g++'s
 * cc1plus names hundreds of thousands past the notes area, and an open and
 * a close of a path through /proc each took seconds in all.  The file is
 * made on the first name the notes area has no room for (most threads
 * never need it; a file less is a third of a short thread's start), under
 * the thread's own name (rt_create_thread_file).  Unused space stays zero:
 * the reader skips zeros.
 */
static int rt_fns_window(struct rt_thread *t)
{
	if (t->fns_map)
		munmap(t->fns_map, RT_FNS_WINDOW);
	t->fns_map = t->fns_at = NULL;
	int fd = rt_file_open(rt_thread_file(t, "fns"), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	off_t off = (off_t)t->fns_windows * RT_FNS_WINDOW;
	void *m = MAP_FAILED;
	if (rt_file_may_grow((uint64_t)off + RT_FNS_WINDOW) && ftruncate(fd, off + RT_FNS_WINDOW) == 0)
		m = mmap(NULL, RT_FNS_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	rt_no_readaround(m, RT_FNS_WINDOW);
	/* its blocks now: a write fault in a hole of a full disk is SIGBUS,
	 * where this returns an error */
	if (madvise(m, RT_FNS_WINDOW, MADV_POPULATE_WRITE) != 0) {
		munmap(m, RT_FNS_WINDOW);
		return 0;
	}
	t->fns_windows++;
	t->fns_map = t->fns_at = m;
	return 1;
}

/*
 * Append one entry or exit whose interval lasted delta ticks, os set when
 * the thread left the CPU in it.  An exit names no function when it closes
 * the frame the runtime knows to be innermost; otherwise (longjmp skipped
 * exits, or the stack is deeper than RT_STACK) it names its function and
 * the reader closes frames up to it.
 */
/*
 * An entry whose (function, call site) pair is not in the pair cache:
 * written in full, and a new function or call site told to the recorder
 * (which symbolizes both).
 */
__attribute__((noinline, cold)) static void rt_enter_miss(struct rt_thread *t, uint64_t fn, uint64_t site,
							   uint64_t delta, int os)
{
	uint8_t b[FMT_MAX_ENTER];
	unsigned kind, n;
	if (t->c->fn[fmt_cache_slot(fn)] != fn)
		rt_note(t, fn);
	if (t->c->site[fmt_cache_slot(site)] != site)
		rt_note(t, site | FMT_SPOOL_SITE_BIT);
	n = fmt_enter_payload(b, t->c, fn, site, &kind);
	t->pos = fmt_put_common(t->pos, kind, os, delta, b, n);
}

/*
 * The frame at depth k, if it is known: its slot, unless a deeper frame
 * (k + RT_STACK, ...) took it since, then the copy rt_stack_push_deep kept;
 * NULL when neither holds it.  A longjmp or a catch after an excursion
 * more than RT_STACK deeper found the excursion's frames in the slots of
 * main and the catching function, and closed them.
 */
static const struct rt_frame *rt_frame_at(const struct rt_thread *t, uint32_t k)
{
	const struct rt_frame *s = &t->stack[k & (RT_STACK - 1)];
	if (!t->deep || (s->sp & RT_SP_LAP_MASK) == RT_SP_LAP(k))
		return s;
	if (k < t->nspill && (t->spill[k].sp & RT_SP_LAP_MASK) == RT_SP_LAP(k))
		return &t->spill[k];
	return NULL;
}

/* Room for spill[k]; 0 when none could be mapped (then frames past it are
 * not known: rt_close_left stops there). */
static int rt_spill_grow(struct rt_thread *t, uint32_t k);

/* (a system call: the program's vector registers kept) */
__attribute__((noinline, cold)) static int rt_spill_grow_kept(struct rt_thread *t, uint32_t k)
{
	int r;
	RT_VEC_KEEP(t, r = rt_spill_grow(t, k));
	return r;
}

static inline int rt_spill_room(struct rt_thread *t, uint32_t k)
{
	return RT_LIKELY(k < t->spill_cap) ? 1 : rt_spill_grow_kept(t, k);
}

__attribute__((noinline, cold)) static int rt_spill_grow(struct rt_thread *t, uint32_t k)
{
	uint32_t cap = t->spill_cap ? t->spill_cap : 4096;
	while (cap <= k && cap < (1u << 26))
		cap *= 2;
	if (cap <= k)
		return 0;
	void *m = mmap(NULL, (size_t)cap * sizeof(struct rt_frame), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	if (t->spill) {
		memcpy(m, t->spill, (size_t)t->nspill * sizeof(struct rt_frame));
		munmap(t->spill, (size_t)t->spill_cap * sizeof(struct rt_frame));
	}
	t->spill = m;
	t->spill_cap = cap;
	return 1;
}

/* A frame entered at depth d >= RT_STACK: the frame of the slot's previous
 * lap (depth d - RT_STACK), still open, is kept in spill first. */
static void rt_stack_push_deep(struct rt_thread *t, uint32_t d, uint64_t fn, uint64_t sp)
{
	struct rt_frame *s = &t->stack[d & (RT_STACK - 1)];
	uint32_t k = d - RT_STACK;
	t->deep = 1;
	if ((s->sp & RT_SP_LAP_MASK) == RT_SP_LAP(k) && rt_spill_room(t, k)) {
		t->spill[k] = *s;
		if (k >= t->nspill)
			t->nspill = k + 1;
	}
	*s = (struct rt_frame){fn, RT_SP_IS_NONE(sp) ? RT_SP_NONE_AT(d) : (sp & ~(uint64_t)RT_SP_LAP_MASK) | RT_SP_LAP(d)};
}

/* The stack pointer of the frame at depth k, just pushed. */
static void rt_stack_set_sp(struct rt_thread *t, uint32_t k, uint64_t sp)
{
	struct rt_frame *s = &t->stack[k & (RT_STACK - 1)];
	s->sp = k < RT_STACK ? sp : RT_SP_IS_NONE(sp) ? RT_SP_NONE_AT(k) : (sp & ~(uint64_t)RT_SP_LAP_MASK) | RT_SP_LAP(k);
}

static inline __attribute__((always_inline)) void rt_put(struct rt_thread *t, int is_exit, uint64_t fn,
							 uint64_t site, uint64_t delta, int os)
{
	if (!is_exit) {
		unsigned slot = fmt_pair_slot(fn, site);
		if (RT_LIKELY(t->c->pair[slot][0] == fn && t->c->pair[slot][1] == site)) {
			uint8_t s = (uint8_t)slot;
			t->pos = fmt_put_common(t->pos, FMT_K_ENTER, os, delta, &s, 1);
		} else {
			rt_enter_miss(t, fn, site, delta, os);
		}
		/* past RT_STACK the slots wrap: an exit then finds another
		 * function there and names its own (EXIT_FN), which is exact */
		if (RT_LIKELY(t->depth < RT_STACK))
			t->stack[t->depth] = (struct rt_frame){fn, RT_SP_NONE_AT(0)};
		else
			rt_stack_push_deep(t, t->depth, fn, RT_SP_NONE);
		t->depth++;
	} else {
		uint32_t d = t->depth;
		if (RT_LIKELY(d > 0 && t->stack[(d - 1) & (RT_STACK - 1)].fn == fn)) {
			t->depth = d - 1;
			t->pos = fmt_put_common(t->pos, FMT_K_EXIT, os, delta, NULL, 0);
		} else {
			uint8_t b[8];
			fmt_put_u64(b, fn);
			t->pos = fmt_put_ext(t->pos, FMT_X_EXIT_FN, os, delta, b, 8);
			rt_note(t, fn);
			if (d > RT_STACK && !t->nspill) {
				t->depth = d - 1;
			} else {
				/* the reader does the same search; a frame not known
				 * (its slot taken, no copy) ends it as one exit */
				uint32_t i = d;
				while (i-- > 0) {
					const struct rt_frame *f = rt_frame_at(t, i);
					if (!f) {
						i = d - 1;
						break;
					}
					if (f->fn == fn)
						break;
				}
				if (i < d)
					t->depth = i;
			}
		}
	}
}

/* Append one entry or exit at time now, when the switch count was sw. */
static inline __attribute__((always_inline)) void rt_emit(struct rt_thread *t, int is_exit,
								  uint64_t fn, uint64_t site, uint64_t now, uint64_t sw)
{
	int os = sw != t->last_switches;
	t->last_switches = sw;
	if (RT_UNLIKELY(now < t->last_t)) /* a signal handler's events came first */
		now = t->last_t;
	uint64_t delta = now - t->last_t;
	t->last_t = now;
	rt_put(t, is_exit, fn, site, delta, os);
}

/*
 * What a probe may need after its record, kept off the hot path (which
 * then needs no call and no saved registers): telling the recorder about
 * new function addresses, the next chunk, handlers' queued events.
 */
static void rt_flush(struct rt_thread *t);

/*
 * The probes' slow path.  Most of its visits only look up a new call
 * site's address among those already told, or move the next sample: the
 * program's vector registers are kept (RT_VEC_KEEP) only around what calls
 * out of the runtime, the chunk switch and a note's write, since keeping
 * them costs an XSAVE and an XRSTOR (a tenth of a Lua run's time when this
 * kept them on every visit).
 */
__attribute__((noinline, cold)) static void rt_after(struct rt_thread *t)
{
	uint32_t was = t->gate & RT_GATE_BUSY;
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	for (;;) {
		/* no pending work is left once the loop ends (rt_flush and
		 * the notes are done below): the limit is the chunk's end or
		 * the next sample, reset here when a probe of the general
		 * path (which takes no sample) crossed it */
		if (t->pos >= t->sample_at)
			t->sample_at = t->pos + RT_SAMPLE_GAP;
		if (t->state == RT_ACTIVE && t->pos >= t->pop_at && t->pos < t->end_limit)
			rt_populate_more(t);
		t->limit = rt_next_limit(t);
		if (t->state == RT_ACTIVE && t->pos >= t->end_limit)
			rt_next_chunk(t); /* first: the chunk may have no room left */
		if (t->nnotes) { /* new addresses only (rt_note) */
			rt_notes_write(t);
			t->nnotes = 0;
			rt_mark_overhead(t); /* the writes are the profiler's time */
		}
		if (t->npend)
			rt_flush(t);
		else
			break;
	}
	RT_GUARD(t->gate, (t->gate & ~RT_GATE_BUSY) | was);
}

/*
 * A signal handler's probe found the thread inside a probe: its event waits
 * in a small queue, with its own time, and the interrupted probe appends it
 * after its own record (whose time is earlier).  Slots are claimed with an
 * atomic add, so handlers nested in handlers queue in order too.
 */
__attribute__((noinline, cold)) static void rt_defer(struct rt_thread *t, int is_exit, uint64_t fn,
						    uint64_t site, uint64_t now, uint64_t sw)
{
	uint32_t i = __atomic_fetch_add(&t->npend, 1, __ATOMIC_RELAXED);
	if (i >= RT_PEND) {
		__atomic_fetch_add(&t->lost, 1, __ATOMIC_RELAXED);
		return;
	}
	t->pend[i].fn = fn;
	t->pend[i].site = site;
	t->pend[i].now = now;
	t->pend[i].sw = sw;
	t->pend[i].is_exit = is_exit;
	t->limit = 0; /* the interrupted probe then flushes the queue */
}

__attribute__((noinline, cold)) static void rt_flush(struct rt_thread *t)
{
	uint32_t i = 0;
	for (;;) {
		uint32_t n = __atomic_load_n(&t->npend, __ATOMIC_RELAXED);
		for (; i < n && i < RT_PEND; i++)
			if (t->state == RT_ACTIVE) {
				rt_emit(t, t->pend[i].is_exit, t->pend[i].fn, t->pend[i].site, t->pend[i].now, t->pend[i].sw);
				if (t->pos >= t->end_limit)
					rt_next_chunk(t);
			}
		if (__atomic_compare_exchange_n(&t->npend, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	uint32_t lost = __atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED);
	if (lost && t->state == RT_ACTIVE) {
		uint8_t b[10];
		unsigned nb = (unsigned)(fmt_put_varint(b, lost) - b);
		t->pos = fmt_put_ext(t->pos, FMT_X_LOST, 0, 0, b, nb);
	}
}

static void rt_recalibrate(struct rt_thread *t);

/*
 * One probe: an entry or exit of fn on thread t, now.  Events of signal
 * handlers that arrive while busy is set are queued and appended right
 * after this record, which is older.
 */
void rt_probe_at(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site, uint64_t now, uint64_t sw)
{
	if (RT_UNLIKELY(rt_busy(t))) {
		rt_defer(t, is_exit, fn, site, now, sw);
		return;
	}
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	rt_emit(t, is_exit, fn, site, now, sw); /* callers checked that t is active */
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	if (RT_UNLIKELY(t->pos >= t->limit)) {
		rt_after(t);
		/* a chunk switch on this path too (a selection, the rusage or
		 * monotonic-clock modes): the cost measured again, as the lean
		 * path does (rt_after_lean) */
		if (RT_UNLIKELY(t->recal_due))
			rt_recalibrate(t);
	}
}

/*
 * An entry held back by --min-duration (rt_select.c), written at its own,
 * earlier time: what rt_after() would do now (tell the recorder about new
 * functions, with an OVERHEAD record stamped now) waits for the next
 * probe, or the held entries still to come would land after a record
 * stamped later than they are.  Only a chunk switch, or a full notes list,
 * cannot wait.
 */
void rt_probe_held(struct rt_thread *t, uint64_t fn, uint64_t site, uint64_t at, uint64_t sw)
{
	if (RT_UNLIKELY(rt_busy(t))) {
		rt_defer(t, 0, fn, site, at, sw);
		return;
	}
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	rt_emit(t, 0, fn, site, at, sw);
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	if (RT_UNLIKELY(t->pos >= t->end_limit || t->nnotes >= RT_NOTES - 1))
		rt_after(t);
}

/* (with a record-time selection, rt_select.c decides first) */
void rt_probe(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site)
{
	if (RT_UNLIKELY(rt_sel_on) && rt_sel_skip(fn))
		return;
	uint64_t sw;
	uint64_t now = rt_stamp(t, &sw);
	if (RT_UNLIKELY(rt_sel_on) && rt_sel_event(t, is_exit, fn, site, now, sw))
		return;
	rt_probe_at(t, is_exit, fn, site, now, sw);
}

/* The probes' way when the lean one does not apply. */
__attribute__((noinline, cold)) static void rt_probe_slow(struct rt_thread *t, int is_exit, uint64_t fn,
							   uint64_t site)
{
	if (t->state != RT_ACTIVE && !rt_thread_start(t))
		return;
	rt_probe(t, is_exit, fn, site);
}

/* rt_probe_slow, and an entry written at depth d (if it was) gets its stack
 * pointer too */
__attribute__((noinline, cold)) static void rt_probe_slow_sp(struct rt_thread *t, int is_exit, uint64_t fn,
							      uint64_t site, uint64_t sp)
{
	uint32_t d = t->depth;
	rt_probe_slow(t, is_exit, fn, site);
	if (!is_exit && !RT_SP_IS_NONE(sp) && t->depth == d + 1 && t->stack[d & (RT_STACK - 1)].fn == fn)
		rt_stack_set_sp(t, d, sp);
}

/*
 * The calibration measures the probes in a tight loop, with their code and
 * data in the caches and their branches learnt; in a real program they
 * cost more (a Lua interpreter: 20-50 ticks more per event).  So the lean
 * probe whose record crosses t->sample_at (one in ~400, on the limit test
 * the probe makes anyway) also times its own tail, from its clock read to
 * here; the calibration's probes do the same, and the recorder adds the
 * difference of the two averages to the calibrated cost.  A tail in which
 * the thread was switched out or interrupted at length is not counted.
 * Then the rest of the probe's work after its record (rt_after).
 */
__attribute__((noinline, cold)) static void rt_after_lean(struct rt_thread *t)
{
	uint64_t end = arch_cycles();
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	if (t->pos >= t->sample_at) {
		/* the probe's clock read and switch count, as it left them
		 * (passing them would cost the hot path a saved register) */
		uint64_t now = t->last_t;
		if (*t->lock == (uint32_t)t->last_switches && end >= now && end - now < RT_SAMPLE_MAX) {
			t->tail_sum += end - now;
			t->tail_n++;
		}
		rt_next_sample(t, end);
	}
	if (t->pos >= t->limit)
		rt_after(t);
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	if (RT_UNLIKELY(t->recal_due)) /* a chunk switch: not busy any more */
		rt_recalibrate(t);
}

/*
 * A lean probe whose record is not of the common shape (a new function,
 * an exit that is not of the innermost frame, an interval outside
 * 16..2047 ticks, a context switch since the previous probe): the general
 * writer.  Reached by a tail call, so the hot path still saves no register.
 */
static inline __attribute__((always_inline)) void rt_put_lean_body(struct rt_thread *t, int is_exit,
								       uint64_t fn, uint64_t site, uint64_t delta,
								       uint64_t sw, uint64_t sp)
{
	/* the probe has set last_t to its time already */
	if (RT_UNLIKELY((int64_t)delta < 0)) { /* a signal handler's events came first */
		t->last_t -= delta;
		delta = 0;
	}
	int os = sw != t->last_switches;
	t->last_switches = sw;
	rt_put(t, is_exit, fn, site, delta, os);
	if (!is_exit) /* rt_put pushed it */
		rt_stack_set_sp(t, t->depth - 1, sp);
	RT_GUARD(t->gate, RT_GATE_LEAN);
	if (RT_UNLIKELY(t->pos >= t->limit))
		rt_after_lean(t);
}

/* (an exit; six arguments at most, for the probe's tail call) */
__attribute__((noinline)) static void rt_put_lean(struct rt_thread *t, int is_exit, uint64_t fn,
						  uint64_t site, uint64_t delta, uint64_t sw)
{
	rt_put_lean_body(t, is_exit, fn, site, delta, sw, RT_SP_NONE);
}

/* (an entry) */
__attribute__((noinline)) static void rt_put_lean_sp(struct rt_thread *t, uint64_t fn, uint64_t site,
						     uint64_t delta, uint64_t sw, uint64_t sp)
{
	rt_put_lean_body(t, 0, fn, site, delta, sw, sp);
}

/*
 * The hot path: no call but tail ones, so the compiler saves no register,
 * and as few stores as can be (one store port on many x86 cores).  Common
 * records: an ENTER of a cached address or an EXIT of the innermost frame,
 * after an interval of 16..2047 ticks (each interval holds at least one
 * probe's cost, so shorter ones are rare) in which the thread stayed on
 * the CPU: a header and one delta byte (fmt_put_common's layout), and for
 * an ENTER the slot, written with a single store.  The store's bytes past
 * the record are zeros over the zeros of the unwritten buffer (the chunk's
 * end is FMT_MAX_RECORD further); a store is whole or not at all when the
 * program is killed, so a record is never seen cut short.
 *
 * Busy is set before the clock is read: a signal handler's probe after
 * that is queued and appended after this record, with its later time; one
 * landing between the gate test and its store records first and leaves a
 * time that this probe's clock read then follows (rt_emit clamps a time
 * that goes back, e.g. on a CPU whose TSC lags, through the general path:
 * the delta is then out of range).
 */
static inline __attribute__((always_inline)) void rt_probe_fast(int is_exit, uint64_t fn, uint64_t site,
								    uint64_t sp)
{
	struct rt_thread *t = &rt_self;
	if (RT_UNLIKELY(t->gate != RT_GATE_LEAN)) {
		rt_probe_slow_sp(t, is_exit, fn, site, sp);
		return;
	}
	RT_GUARD(t->gate, RT_GATE_LEAN | RT_GATE_BUSY);
	volatile uint32_t *lock = t->lock;
	uint32_t sw = *lock, again; /* counter, clock, counter: rt_stamp() */
	uint64_t now;
	while (RT_UNLIKELY((now = arch_cycles(), again = *lock) != sw))
		sw = again;
	uint64_t delta = now - t->last_t;
	t->last_t = now;
	uint8_t *p;
	uint32_t d;
	/* header (os clear, MORE set, the delta's low 4 bits) and delta byte */
	uint32_t rec = FMT_MORE_BIT | (uint32_t)(delta & 0xf) | (uint32_t)((delta << 4) & 0x7f00);
	if (!is_exit) {
		unsigned slot = fmt_pair_slot(fn, site);
		const uint64_t *pair = t->c->pair[slot];
		if (RT_UNLIKELY(sw != t->last_switches || delta - 16 >= 2048 - 16 || pair[0] != fn || pair[1] != site)) {
			rt_put_lean_sp(t, fn, site, delta, sw, sp);
			return;
		}
		/* loaded after the tests: fewer registers live across them */
		p = t->pos;
		d = t->depth;
		if (RT_UNLIKELY(d >= RT_STACK)) { /* its slot's lap (rt_stack_push_deep) */
			rt_put_lean_sp(t, fn, site, delta, sw, sp);
			return;
		}
		rec |= (FMT_K_ENTER << 6) | slot << 16;
		memcpy(p, &rec, 4);
		p += 3;
		t->stack[d] = (struct rt_frame){fn, sp};
		d++;
	} else {
		d = t->depth;
		if (RT_UNLIKELY(sw != t->last_switches || delta - 16 >= 2048 - 16 || d == 0 ||
				t->stack[(d - 1) & (RT_STACK - 1)].fn != fn)) {
			rt_put_lean(t, 1, fn, 0, delta, sw);
			return;
		}
		p = t->pos;
		rec |= FMT_K_EXIT << 6;
		uint16_t r2 = (uint16_t)rec;
		memcpy(p, &r2, 2);
		p += 2;
		d--;
	}
	t->pos = p;
	RT_GUARD(t->depth_gate, (uint64_t)RT_GATE_LEAN << 32 | d);
	/* p, not t->pos: a handler's record after the guard checked the limit itself */
	if (RT_UNLIKELY(p >= t->limit))
		rt_after_lean(t);
}

/* The two hooks start on a cache line of their own: their cost moved by 4 %
 * on fib(36) with where the rest of the file put them (the same
 * instructions, 16 bytes apart), which made the benchmark's figure follow
 * unrelated changes. */
#define RT_HOT_ALIGN __attribute__((aligned(64)))

/* site: the return address of the call that entered fn (gcc passes
 * __builtin_return_address(0) of fn), recorded with the entry; the
 * caller's stack pointer at the call (this function's canonical frame
 * address) is where fn's frame was, for a longjmp past it (rt_close_left) */
RT_API RT_HOT_ALIGN void __cyg_profile_func_enter(void *fn, void *site)
{
	rt_probe_fast(0, (uint64_t)fn, (uint64_t)site, (uint64_t)(uintptr_t)__builtin_dwarf_cfa());
}

RT_API RT_HOT_ALIGN void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	rt_probe_fast(1, (uint64_t)fn, 0, 0);
}

/* The patcher's and the library-call probes' entries: their frames are
 * closed by their own shadow stacks, not by rt_close_left. */
void rt_probe_enter(void *fn, void *site)
{
	rt_probe_fast(0, (uint64_t)fn, (uint64_t)site, RT_SP_NONE_AT(0)); /* (written as it is below RT_STACK) */
}

void rt_probe_exit(void *fn, void *site) __attribute__((alias("__cyg_profile_func_exit")));

void rt_close_left(struct rt_thread *t, uint64_t to, uint64_t same_stack)
{
	if (t->state != RT_ACTIVE || rt_busy(t) || RT_UNLIKELY(rt_sel_on))
		return; /* in a handler that interrupted a probe; a selection holds its own frames */
	while (t->depth) {
		const struct rt_frame *f = rt_frame_at(t, t->depth - 1);
		if (!f || RT_SP_IS_NONE(f->sp))
			break; /* (not known, or not a compiler hook's frame) */
		uint64_t sp = f->sp & ~(uint64_t)RT_SP_LAP_MASK;
		if (sp >= to || to - sp >= same_stack)
			break;
		uint32_t d = t->depth;
		rt_probe(t, 1, f->fn, 0);
		if (t->depth != d - 1)
			break; /* not recorded (the thread's recording ended) */
	}
}

/* ------------------------------------------------------------------------
 * Thread and process life cycle
 * --------------------------------------------------------------------- */

static void rt_end_recording(struct rt_thread *t, uint32_t flag);

/* What the thread still holds back: the selection's held entries, new
 * functions' addresses, queued handler events. */
static void rt_settle(struct rt_thread *t)
{
	rt_sel_thread_end(t);
	if (t->nnotes) /* held entries wrote new functions (rt_probe_held) */
		rt_after(t);
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	if (t->npend)
		rt_flush(t);
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
}

static void rt_finish_thread(struct rt_thread *t)
{
	if (t->state != RT_ACTIVE)
		return;
	if (rt_busy(t)) {
		/* a probe of this thread never finished: a signal handler that
		 * interrupted it left with siglongjmp, or called exit().  What
		 * it was changing may be half done (a chunk being switched),
		 * so nothing more is written: the recorder reads the buffer as
		 * a killed thread's, its later events counted as lost.  Writing
		 * here crashed such a program at exit, before its output was
		 * flushed. */
		t->hdr->flags |= FMT_SPOOL_LEFTPROBE;
		t->state = RT_DONE;
		return;
	}
	rt_settle(t);
	rt_end_recording(t, FMT_SPOOL_ENDED);
}

/* The recording's last record, at this time, and the header's last word
 * (flag: why it ends).  The state may already say RT_DONE. */
static void rt_end_recording(struct rt_thread *t, uint32_t flag)
{
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	uint64_t sw;
	uint64_t now = rt_stamp(t, &sw);
	int os = sw != t->last_switches;
	if (t->pos < t->end_limit + FMT_MAX_RECORD - 16)
		t->pos = fmt_put_ext(t->pos, FMT_X_END, os, now - t->last_t, NULL, 0);
	t->last_t = now;
	if (!rt_g.no_syscalls)
		prctl(PR_GET_NAME, t->hdr->name, 0, 0, 0);
	rt_note_chunk_used(t);
	t->hdr->tail_sum = t->tail_sum;
	t->hdr->tail_n = t->tail_n;
	rt_stop_thread(t, flag);
	if (!rt_g.no_syscalls) {
		munmap(t->chunk_base, fmt_spool_chunk_size(t->chunk));
		munmap(t->hdr, RT_HDR_MAP);
	}
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
}

/*
 * The thread-specific-data destructor of the runtime's key.  Keys' destructors
 * run in creation order, ours (made at start-up) first, and in rounds while
 * any value is set again, PTHREAD_DESTRUCTOR_ITERATIONS at most.  Setting
 * our value again until the last round lets the program's destructors (and
 * their calls) run while the thread still records.
 */
static __thread unsigned rt_tsd_round __attribute__((tls_model("initial-exec")));

static void rt_thread_end(void *arg)
{
	struct rt_thread *t = arg;
	if (++rt_tsd_round < PTHREAD_DESTRUCTOR_ITERATIONS && t->state == RT_ACTIVE &&
	    pthread_setspecific(rt_thread_key, t) == 0)
		return;
	rt_finish_thread(t);
	rt_patch_thread_unmap();
	rt_sel_thread_unmap();
	rt_thread_unmap(t);
}

/*
 * Probe cost, measured in this process: calls of an instrumented empty
 * function (rt_calib.c) against the same function without probes, on the
 * real thread state; the buffer is wiped afterwards.  Each interval between
 * two probes holds one probe's worth of overhead, so half the difference
 * per call is what the analysis subtracts from each interval.  The buffer
 * lines are flushed first, as in a real run each new line is a cache miss.
 * Batches in which the thread was switched out are measured again, and the
 * median of the rest resists interrupts.  With stub (a library-call stub
 * of rt_plt.c) the loop calls an instrumented function that calls through
 * it: 4 events a call, 2 of them a library call's, whose cost is then
 * what is left after the 2 function events' known cost.
 */
uint64_t rt_calib_loop(int probed, int n, void (*stub)(void));

enum { RT_CALIB_FN = 1, RT_CALIB_PATCHED = 2, RT_CALIB_LIB = 3 };

static struct fmt_decoder rt_calib_dec; /* (calibrating runs once in a
					 * process, before other threads record) */
static struct fmt_caches rt_calib_c0;   /* the writer's caches before the records */

/*
 * Where a probe's cost falls: of the calibration's records [p, end), the
 * mean delta (1/1024 ticks) of an exit that follows an entry, the interval
 * of an empty call.  It holds the entry probe's part after its clock read
 * and the exit probe's part before its own: not half of the pair's cost
 * (the patched path's trampolines do most of their work there), and
 * compensation subtracts it from the intervals between a function's entry
 * and its exit, the rest of the pair's cost from those between an exit and
 * the next entry.  0 when too few were seen.  The records are decoded from
 * the writer's caches as they were before them (rt_calib_c0).
 */
static uint64_t rt_calib_inner(const uint8_t *p, const uint8_t *end)
{
	struct fmt_decoder *d = &rt_calib_dec;
	fmt_decoder_init(d, p, (size_t)(end - p));
	d->c = rt_calib_c0;
	struct fmt_rec r;
	uint64_t sum = 0, n = 0;
	int after_entry = 0;
	while (fmt_decode(d, &r) > 0 && r.kind != FMT_K_EXT) {
		if (r.kind == FMT_K_EXIT && after_entry) {
			sum += r.delta;
			n++;
		}
		after_entry = r.kind != FMT_K_EXIT;
	}
	return n >= 64 ? (sum << 10) / n : 0;
}

/* The median of n values (sorted in place: insertion sort, n is small). */
static uint64_t rt_median(uint64_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			uint64_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[n / 2];
}

/* The median cost per event of batches of calls (1/1024 ticks); with
 * inner_out, also the median rt_calib_inner of the batches. */
static uint64_t rt_calibrate_loop(struct rt_thread *t, int probed, void (*stub)(void), uint64_t *inner_out,
				   int batches)
{
	enum { BATCHES = 9, CALLS = 2000 };
	uint64_t cost[BATCHES], inner[BATCHES];
	if (batches > BATCHES)
		batches = BATCHES;
	unsigned events = stub ? 4 : 2;
	uint32_t depth0 = t->depth;
	/* the batches' records on pages faulted in already: a fault, or the
	 * probes' slow path faulting pages in, must not be timed */
	rt_populate_to(t, t->pos + CALLS * events * 4 + FMT_MAX_RECORD);
	rt_set_limit(t);
	for (int b = 0, tries = 0; b < batches; tries++) {
		uint64_t sw0 = rt_switches(t);
		uint64_t plain = rt_calib_loop(probed == RT_CALIB_FN && !stub ? 3 : 0, CALLS, stub);
		uint8_t *p0 = t->pos;
		if (inner_out)
			rt_calib_c0 = *t->c;
		/* in a real run the buffer lines are cold: each new one is a miss */
		for (uint8_t *p = p0; p < p0 + CALLS * events * 4 && p < t->end_limit; p += 64)
			arch_flush_line(p);
		arch_memory_fence();
		uint64_t with = rt_calib_loop(probed, CALLS, stub);
		cost[b] = with > plain ? ((with - plain) << 10) / (events * CALLS) : 0;
		if (t->state != RT_ACTIVE)
			return 0;
		inner[b] = inner_out ? rt_calib_inner(p0, t->pos) : 0;
		memset(p0, 0, (size_t)(t->pos - p0));
		t->pos = p0;
		rt_next_sample(t, t->last_t);
		t->depth = depth0;
		/* a batch the thread was switched out in measured someone else */
		if (rt_switches(t) != sw0 && tries < 4 * batches)
			continue;
		b++;
	}
	if (inner_out)
		*inner_out = rt_median(inner, batches);
	return rt_median(cost, batches);
}

/*
 * Calibrate the probes' costs (what: RT_CALIB_*); the records written
 * meanwhile are wiped.  RT_CALIB_PATCHED replaces the function events'
 * cost with that of the probes of functions patched at load, for a
 * program whose functions take that path (rt_patch_program_probed).
 */
/* What a calibration changes in the thread and puts back: its records are
 * wiped, the caches and the clock go on as if they had never been written
 * (the time it took is then the profiler's, in the next OVERHEAD record). */
struct rt_calib_saved {
	uint8_t *pos;
	uint64_t last_t, last_switches;
	struct fmt_caches *c; /* a copy, where the caller keeps it */
};

static void rt_calib_save(const struct rt_thread *t, struct rt_calib_saved *s, struct fmt_caches *c)
{
	s->pos = t->pos;
	s->last_t = t->last_t;
	s->last_switches = t->last_switches;
	*c = *t->c;
	s->c = c;
}

static void rt_calib_restore(struct rt_thread *t, const struct rt_calib_saved *s)
{
	*t->c = *s->c;
	t->pos = s->pos;
	rt_next_sample(t, t->last_t);
	t->last_t = s->last_t;
	t->last_switches = s->last_switches;
}

/* The start-up cost of function events (what: RT_CALIB_FN or
 * RT_CALIB_PATCHED), c, with the part of a pair of probes inside the call
 * and the calibration's probe tail. */
static void rt_calib_set(struct rt_thread *t, int what, uint64_t c, uint64_t inner, uint64_t tail)
{
	rt_g.calib_ticks = c;
	/* Only the patched path's split is used (inner is 0 for the
	 * compiler's hooks): its entry restores the registers after its clock
	 * read and its exit saves them before, so most of a pair's cost (about
	 * 2/3) lies inside the call.  The compiler's hooks measure close to
	 * half, and in a real program the work overlapping their probes moves
	 * the split by more than that difference: a measured split there
	 * clamped more intervals at zero (a parent of tiny calls +2 -> +16 %,
	 * bench-compensation.sh). */
	rt_g.calib_inner = inner < 2 * c ? inner : 2 * c;
	rt_g.calib_patched = what == RT_CALIB_PATCHED;
	rt_g.calib_tail = tail;
	t->hdr->calib_ticks = c;
}

static void rt_calibrate(struct rt_thread *t, int what)
{
	struct rt_calib_saved saved;
	struct fmt_caches cache0; /* 6 KiB: called at start-up, on a full stack */
	rt_calib_save(t, &saved, &cache0);
	t->tail_sum = t->tail_n = 0;
	if (what != RT_CALIB_LIB) {
		/* (where the cost falls is measured for the patched path only) */
		uint64_t inner = 0;
		uint64_t c = rt_calibrate_loop(t, what, NULL, what == RT_CALIB_PATCHED ? &inner : NULL, 9);
		/* (the calibration's tails, to compare with the run's: rt_after_lean) */
		if (c || what == RT_CALIB_FN)
			rt_calib_set(t, what, c, inner, t->tail_n >= 16 ? (t->tail_sum << 10) / t->tail_n : 0);
	} else {
		void (*stub)(void) = rt_plt_calib_stub();
		uint64_t both = stub ? rt_calibrate_loop(t, RT_CALIB_FN, stub, NULL, 9) : 0;
		/* both = (function + library event costs) / 2 */
		rt_g.calib_lib = 2 * both > rt_g.calib_ticks ? 2 * both - rt_g.calib_ticks : 0;
	}
	t->tail_sum = t->tail_n = 0;
	if (t->state == RT_ACTIVE) /* its time goes into the constructor's overhead */
		rt_calib_restore(t, &saved);
}

/*
 * The probes' cost moves with the machine's state: on a shared 2-CPU VM
 * the start-up calibration of the same binary gave 13 to 23 ns per event
 * from one run to the next, while the batches within one run agreed
 * within a few percent.  A cost measured once, at start-up, then misses
 * for the whole run.  So it is measured again during the run: one batch
 * of each kind calibrated at start-up, at each chunk switch of each thread
 * (every 256 KiB to 8 MiB of events), and when the process ends through
 * its destructor the .info file says the median of the start-up's and all
 * of them (RT_RECAL_KEEP, spread evenly over the run).  A process killed,
 * or ended by _exit or exec, keeps the start-up's.  The time a
 * batch takes is the profiler's own: an OVERHEAD record covers it.
 */
static struct fmt_caches rt_recal_cache0; /* under rt_g.recal.lock */

static void rt_recal_keep(struct rt_recal *r, uint64_t fn, uint64_t lib)
{
	if (r->skip) {
		r->skip--;
		return;
	}
	if (r->n == RT_RECAL_KEEP) { /* keep every second: still evenly spread */
		for (uint32_t i = 0; i < RT_RECAL_KEEP / 2; i++) {
			r->fn[i] = r->fn[2 * i];
			r->lib[i] = r->lib[2 * i];
		}
		r->n = RT_RECAL_KEEP / 2;
		r->step = r->step ? 2 * r->step : 2;
	}
	r->fn[r->n] = fn;
	r->lib[r->n] = lib;
	r->n++;
	r->skip = r->step ? r->step - 1 : 0;
}

static void rt_recalibrate_work(struct rt_thread *t);

/* (the calibration clears its records with memset: the vector registers
 * are kept) */
__attribute__((noinline, cold)) static void rt_recalibrate(struct rt_thread *t)
{
	t->recal_due = 0;
	RT_VEC_KEEP(t, rt_recalibrate_work(t));
}

static void rt_recalibrate_work(struct rt_thread *t)
{
	struct rt_recal *r = &rt_g.recal;
	if (!rt_g.calib_ticks || rt_g.no_syscalls || t->state != RT_ACTIVE || (t->gate & RT_GATE_BUSY) || t->depth >= RT_STACK)
		return;
	/* one thread at a time (the caches' copy is shared); the others skip */
	if (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE))
		return;
	/* a signal handler's events would land among the calibration's
	 * records, which are wiped: its signals wait until the batch is done */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	struct rt_calib_saved saved;
	rt_calib_save(t, &saved, &rt_recal_cache0);
	uint64_t tail_sum0 = t->tail_sum, tail_n0 = t->tail_n;
	int kind = rt_g.calib_patched ? RT_CALIB_PATCHED : RT_CALIB_FN;
	uint64_t fn = rt_calibrate_loop(t, kind, NULL, NULL, 1), lib = 0;
	void (*stub)(void) = rt_g.calib_lib && t->state == RT_ACTIVE ? rt_plt_calib_stub() : NULL;
	if (stub && fn) {
		/* (the library yardstick has the compiler's probes around it) */
		uint64_t hooks = kind == RT_CALIB_FN ? fn : rt_calibrate_loop(t, RT_CALIB_FN, NULL, NULL, 1);
		uint64_t both = rt_calibrate_loop(t, RT_CALIB_FN, stub, NULL, 1);
		lib = 2 * both > hooks ? 2 * both - hooks : 0;
	}
	if (fn) {
		rt_recal_keep(r, fn, lib);
		/* its probes' tails, the run's yardstick of the tails the
		 * recorder compares the program's with (rec_spool.c) */
		r->tail_sum += t->tail_sum - tail_sum0;
		r->tail_n += t->tail_n - tail_n0;
	}
	if (t->state == RT_ACTIVE) {
		rt_calib_restore(t, &saved);
		t->tail_sum = tail_sum0;
		t->tail_n = tail_n0;
	}
	__atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
	if (t->state == RT_ACTIVE) {
		RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
		rt_mark_overhead(t);
		RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The run's costs into rt_g and the .info file (see above), at the end of
 * a process that recalibrated at least 3 times. */
static void rt_recal_finish(void)
{
	struct rt_recal *r = &rt_g.recal;
	if (!rt_g.enabled || !rt_g.calib_ticks || r->n < 3)
		return;
	if (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE))
		return;
	uint64_t fn[RT_RECAL_KEEP + 1], lib[RT_RECAL_KEEP + 1];
	uint32_t n = r->n, nl = 0;
	for (uint32_t i = 0; i < n; i++) {
		fn[i] = r->fn[i];
		if (r->lib[i])
			lib[nl++] = r->lib[i];
	}
	fn[n++] = r->fn0;
	if (rt_g.calib_lib)
		lib[nl++] = rt_g.calib_lib;
	uint64_t c = rt_median(fn, (int)n);
	if (c) {
		/* the patched path's split keeps its start-up proportion */
		rt_g.calib_inner = r->fn0 ? r->inner0 * c / r->fn0 : rt_g.calib_inner;
		rt_g.calib_ticks = c;
		if (r->tail_n >= 16)
			rt_g.calib_tail = (r->tail_sum << 10) / r->tail_n;
		r->samples = n;
		r->min = fn[0]; /* (sorted by rt_median) */
		r->max = fn[n - 1];
	}
	if (nl && rt_g.calib_lib)
		rt_g.calib_lib = rt_median(lib, (int)nl);
	r->n = 0; /* once */
	__atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
	rt_save_info();
}

/*
 * The fork and vfork children's set-up copies the frames open and the
 * library calls in flight before it clears the thread's state: 24 KiB, on a
 * new stack of its own (rt_fork.h), not on the program's, which may be a
 * thread's of 16 KiB (PTHREAD_STACK_MIN) or a coroutine's.  Without system
 * calls (seccomp) it only counts the child, on the program's stack.
 */
static void rt_atfork_child_work(void);
static void rt_vfork_child_work(void);

ARCH_CALL_ON_STACK_ASM;

static void rt_child_setup(void (*work)(void))
{
	if (rt_g.enabled && !rt_g.no_syscalls)
		rt_fork_child_setup(work);
	else
		work();
}

static void rt_atfork_child(void)
{
	rt_child_setup(rt_atfork_child_work);
}

void rt_vfork_child(void)
{
	rt_child_setup(rt_vfork_child_work);
}

/*
 * fork() holds every signal back from our prepare handler (registered
 * first, it runs last, just before the system call) until the child's
 * set-up is done: a handler of the program's that ran in the child before
 * that probed on the parent's state, whose perf page the child does not
 * have, and crashed a child that runs fine without stint (a signal sent to
 * it as soon as it exists, or to its whole process group).  The signals
 * come as fork() returns, in both processes, before the program's own
 * atfork handlers run in the child.  The mask before is kept in
 * rt_fork_mask with the bit of SIGKILL set, which no mask has, saying it
 * was changed: without system calls (seccomp) it is not.
 */
static __thread uint64_t rt_fork_mask __attribute__((tls_model("initial-exec")));
#define RT_SIGNALS_HELD (1ull << (SIGKILL - 1))

uint64_t rt_signals_hold(void)
{
	uint64_t all = ~0ull, old = 0;
	if (!rt_g.no_syscalls && arch_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8, 0, 0) == 0)
		return old | RT_SIGNALS_HELD;
	return 0;
}

void rt_signals_release(uint64_t held)
{
	if (!(held & RT_SIGNALS_HELD))
		return;
	uint64_t old = held & ~RT_SIGNALS_HELD;
	arch_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
}

static void rt_atfork_prepare(void)
{
	rt_fork_mask = rt_signals_hold();
}

static void rt_atfork_release(void)
{
	uint64_t held = rt_fork_mask;
	rt_fork_mask = 0;
	rt_signals_release(held);
}

static void rt_atfork_child_then_release(void)
{
	rt_atfork_child();
	rt_atfork_release();
}

static void rt_atfork_child_work(void)
{
	struct rt_thread *t = &rt_self;
	if (!rt_g.enabled)
		return;
	if (rt_g.no_syscalls || rt_g.no_clock) { /* in a seccomp sandbox, or no clock: not recorded, counted */
		rt_count_unrecorded(1);
		rt_g.enabled = 0;
		t->state = RT_DONE;
		return;
	}
	/* the frames open at the fork; of a deeper stack the innermost
	 * RT_STACK (the slots wrap), whose callers the child never sees close */
	uint64_t open[RT_STACK], open_sp[RT_STACK];
	uint32_t full = t->state == RT_ACTIVE ? t->depth : 0;
	uint32_t depth = full > RT_STACK ? RT_STACK : full;
	for (uint32_t i = 0; i < depth; i++) {
		const struct rt_frame *f = rt_frame_at(t, full - depth + i);
		open[i] = f ? f->fn : t->stack[(full - depth + i) & (RT_STACK - 1)].fn;
		/* (the child's stack is a copy at the same addresses: a longjmp
		 * there closes its inherited frames as the parent's would) */
		open_sp[i] = f && !RT_SP_IS_NONE(f->sp) ? f->sp & ~(uint64_t)RT_SP_LAP_MASK : RT_SP_NONE_AT(0);
	}
	/* The parent's mappings are shared with it: let go without writing. */
	if (t->state == RT_ACTIVE) {
		munmap(t->chunk_base, fmt_spool_chunk_size(t->chunk));
		munmap(t->hdr, RT_HDR_MAP);
	}
	if (t->fns_map)
		munmap(t->fns_map, RT_FNS_WINDOW);
	/* the parent's count stays this process's until it records a thread
	 * of its own: a child that cannot (forked after a setuid) is counted */
	rt_g.count_inherited = rt_g.count_hdr != NULL;
	rt_g.proc_counted = 0;
	rt_drop_spares();
	uint64_t *seen = t->seen;
	uint32_t seen_cap = t->seen_cap;
	/* library calls in flight (fork itself) still return through us */
	uint32_t nrets = t->nrets;
	struct rt_ret rets[RT_RETS];
	if (nrets)
		memcpy(rets, t->rets, nrets * sizeof(rets[0]));
	struct rt_thread_arrays *arrays = t->arrays; /* (this process's copy) */
	memset(t, 0, sizeof(*t));
	if (arrays) {
		memset(arrays, 0, sizeof(*arrays));
		rt_thread_arrays_map(t, arrays);
	}
	t->seen = seen;
	t->seen_cap = seen_cap;
	t->nrets = arrays ? nrets : 0;
	if (t->nrets)
		memcpy(t->rets, rets, nrets * sizeof(rets[0]));
	/* the child's run has its own calibrations (and no other thread) */
	rt_g.recal.lock = 0;
	rt_g.recal.n = rt_g.recal.step = rt_g.recal.skip = rt_g.recal.samples = 0;
	rt_g.recal.tail_sum = rt_g.recal.tail_n = 0;
	if (rt_file_recorder_gone(rt_recorder_pid, rt_recorder_start)) {
		rt_g.enabled = 0; /* stint record was killed: no new spool files */
		t->state = RT_DONE;
		return;
	}
	rt_new_key();
	rt_save_info();
	rt_copy_proc_file("/proc/self/cmdline", ".cmdline");
	rt_save_maps();
	rt_plt_fork_child(); /* the hooked-functions list is per process */
	if (!rt_thread_start(t))
		return;
	rt_inherit_frames(t, open, depth);
	for (uint32_t i = 0; i < depth; i++)
		t->stack[i].sp = open_sp[i];
}

/*
 * The child of a vfork (rt_plt.c): it runs on its parent's memory, so it
 * leaves the parent's mappings alone (rt_plt.c keeps a copy of the parent's
 * state and of rt_g, and puts them back when the parent resumes) and
 * records into a process entry of its own, with the frames open at the
 * vfork inherited as a fork child's are.
 */
static void rt_vfork_child_work(void)
{
	struct rt_thread *t = &rt_self;
	if (!rt_g.enabled)
		return;
	if (rt_g.no_syscalls) { /* in a seccomp sandbox: not recorded, counted */
		rt_count_unrecorded(1);
		t->state = RT_DONE; /* (the parent's state is put back when it resumes) */
		RT_GUARD(t->gate, 0);
		return;
	}
	rt_sel_vfork(1);
	rt_g.count_hdr = NULL; /* the parent's (its rt_g is put back when it resumes) */
	rt_g.no_spares = 1;    /* those are the parent's files too */
	uint64_t open[RT_STACK];
	uint32_t full = t->state == RT_ACTIVE ? t->depth : 0;
	uint32_t depth = full > RT_STACK ? RT_STACK : full;
	for (uint32_t i = 0; i < depth; i++) {
		const struct rt_frame *f = rt_frame_at(t, full - depth + i);
		open[i] = f ? f->fn : t->stack[(full - depth + i) & (RT_STACK - 1)].fn;
	}
	uint32_t nrets = t->nrets;
	struct rt_ret rets[RT_RETS];
	if (nrets)
		memcpy(rets, t->rets, nrets * sizeof(rets[0]));
	memset(t, 0, sizeof(*t)); /* seen too: the parent's set stays as it is */
	/* arrays of its own: the parent's are in the memory it shares with us,
	 * and its address caches must stay as its records left them (rt_plt.c
	 * lets ours go when the parent resumes) */
	if (!rt_thread_arrays_map(t, NULL)) {
		t->state = RT_DONE;
		return;
	}
	t->nrets = nrets;
	if (nrets)
		memcpy(t->rets, rets, nrets * sizeof(rets[0]));
	rt_new_key();
	rt_save_info();
	rt_copy_proc_file("/proc/self/cmdline", ".cmdline");
	rt_save_maps();
	rt_plt_save_names();
	if (!rt_thread_start(t))
		return;
	rt_inherit_frames(t, open, depth);
}

#ifndef RT_ATTACH_LIB
/*
 * clone() without CLONE_VM, and syscall(SYS_clone, SIGCHLD, ...) and the
 * like, make a process as fork does but run no pthread_atfork handler: the
 * child kept the parent's thread state, whose perf page the kernel does not
 * copy (VM_DONTCOPY), and its first probe faulted (googletest's
 * "threadsafe" death tests clone a child that execs), killing a child that
 * runs fine without stint.  The child now starts with what a fork child
 * does (rt_fork.h), then runs on.
 */

static void rt_fork_started(void)
{
	rt_patch_fork_child(); /* (no atfork handler ran: the patcher's locks too) */
	rt_atfork_child();
}

/*
 * A program that restricts its system calls (seccomp: a sandbox) could be
 * killed by its filter for a system call of the runtime's (SIGSYS): the
 * filter is not known, so from then on the runtime makes none.  Each
 * thread records on into the buffer chunk it has and stops, flagged, when
 * it is full; threads and processes started later are counted, not
 * recorded; the names of functions first called later are kept while the
 * notes area has pages made writable.  The calling thread gets its next
 * RT_RESERVE chunks mapped ahead (7.5 to 32 MiB of events) and 64 more
 * pages of notes.
 */
static void rt_reserve_chunks(struct rt_thread *t)
{
	const char *path = rt_thread_file(t, "buf");
	int fd = rt_file_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	uint64_t off = t->chunk_off + fmt_spool_chunk_size(t->chunk);
	for (unsigned k = t->nreserve; k < RT_RESERVE; k++) {
		uint64_t size = fmt_spool_chunk_size(t->chunk + 1 + k);
		void *m = rt_map_region(fd, off, size, size);
		if (m == MAP_FAILED)
			break;
		t->reserve[t->nreserve++] = m;
		off += size;
	}
	close(fd);
}

static void rt_seccomp(int after, long r)
{
	static int set;
	if (!after) {
		struct rt_thread *t = &rt_self;
		if (!rt_g.enabled || rt_g.no_syscalls)
			return;
		if (t->state == RT_ACTIVE && t->hdr) {
			RT_GUARD(t->gate, t->gate | RT_GATE_BUSY); /* (t->path: a handler's probes wait) */
			rt_reserve_chunks(t);
			RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
			uint32_t first = t->note_pages, last = first + 64;
			uint32_t pages = (uint32_t)((FMT_SPOOL_DATA_OFF - FMT_SPOOL_NOTES_OFF) / FMT_SPOOL_HDR_SIZE);
			if (last > pages)
				last = pages;
			if (last > first &&
			    madvise((uint8_t *)t->hdr + FMT_SPOOL_NOTES_OFF + (size_t)first * FMT_SPOOL_HDR_SIZE,
				    (size_t)(last - first) * FMT_SPOOL_HDR_SIZE, MADV_POPULATE_WRITE) == 0)
				t->note_pages = last;
		}
		rt_g.no_syscalls = set = 1;
	} else if (r < 0 && set) { /* refused: nothing restricted */
		rt_g.no_syscalls = set = 0;
	}
}

/*
 * clone(CLONE_VM) without CLONE_SETTLS: the child runs on our memory with
 * this thread's thread pointer, so its probes would find this thread's
 * recording state and write into its buffer while this thread does (the
 * records interleaved, the shadow stacks of library calls and patched
 * functions mixed up: the program crashed).  Nothing tells the two apart
 * at a probe, so neither records while the child may run: before the
 * clone this thread's recording pauses (its probes, and the child's, find
 * it not active and do nothing); after it, with CLONE_VFORK (the child has
 * left our memory: exec or exit) or when the clone failed, it resumes,
 * and otherwise it ends here, flagged, the child counted as not recorded.
 */
static void rt_share_tls(int after, long r, int vfork)
{
	struct rt_thread *t = &rt_self;
	if (!after) {
		if (t->state == RT_ACTIVE)
			rt_settle(t);
		t->shared_state = t->state;
		t->shared_gate = t->gate;
		RT_GUARD(t->gate, 0);
		t->state = RT_DONE;
		return;
	}
	if (r >= 0 && rt_g.enabled && !rt_g.no_syscalls)
		rt_count_unrecorded(0); /* the child, on the thread's storage */
	if (r < 0 || vfork) {
		t->state = t->shared_state;
		RT_GUARD(t->gate, t->shared_gate);
	} else if (t->shared_state == RT_ACTIVE) {
		rt_end_recording(t, FMT_SPOOL_SHAREDTLS);
	}
}

/*
 * Seccomp's strict mode turns off the thread's time-stamp counter (and
 * allows no system call but read, write, exit and sigreturn), as does
 * prctl(PR_SET_TSC, PR_TSC_SIGSEGV): every probe's clock read (rdtsc, or
 * clock_gettime's, through the vDSO) would then kill the program with
 * SIGSEGV.  The thread's recording ends just before, flagged; threads
 * started later, which inherit it, do not record.  (Refused, the call
 * leaves the recording ended.)
 */
static void rt_clock_off(void)
{
	struct rt_thread *t = &rt_self;
	rt_g.no_clock = 1;
	if (t->state == RT_ACTIVE) {
		rt_settle(t);
		rt_end_recording(t, FMT_SPOOL_NOCLOCK);
	}
	t->state = RT_DONE;
	RT_GUARD(t->gate, 0);
}

static void rt_restrict(int after, long r, int strict)
{
	if (strict && !after)
		rt_clock_off();
	else if (!strict)
		rt_seccomp(after, r);
}

static void rt_seccomp_syscall(int after, long r, long mode)
{
	rt_restrict(after, r, mode == 0 /* SECCOMP_SET_MODE_STRICT */);
}

RT_FORK_WRAPPERS(RT_API, rt_fork_started, rt_seccomp_syscall, rt_share_tls)


/*
 * The calls by which a program run as root gives up root's rights: just
 * before the first that leaves another user in charge, the spare buffers
 * are made (rt_make_spares), for the threads it starts after; chroot too.
 */
static void rt_before_setuid(uid_t a, uid_t b, uid_t c)
{
	if (geteuid() == 0 && ((a && a != (uid_t)-1) || (b && b != (uid_t)-1) || (c && c != (uid_t)-1)))
		rt_make_spares();
}

typedef int (*rt_setid1)(uid_t);
typedef int (*rt_setid2)(uid_t, uid_t);
typedef int (*rt_setid3)(uid_t, uid_t, uid_t);

/* real: the C library's function of that name (ENOSYS when there is none) */
#define RT_REAL(real, name)                                                            \
	do {                                                                           \
		if (!real)                                                             \
			real = (__typeof__(real))dlsym(RTLD_NEXT, name);               \
		if (!real) {                                                           \
			errno = ENOSYS;                                                \
			return -1;                                                     \
		}                                                                      \
	} while (0)

RT_API int setuid(uid_t u)
{
	static rt_setid1 real;
	RT_REAL(real, "setuid");
	rt_before_setuid(u, (uid_t)-1, (uid_t)-1);
	return real(u);
}

RT_API int seteuid(uid_t e)
{
	static rt_setid1 real;
	RT_REAL(real, "seteuid");
	rt_before_setuid(e, (uid_t)-1, (uid_t)-1);
	return real(e);
}

RT_API int setreuid(uid_t r, uid_t e)
{
	static rt_setid2 real;
	RT_REAL(real, "setreuid");
	rt_before_setuid(r, e, (uid_t)-1);
	return real(r, e);
}

RT_API int setresuid(uid_t r, uid_t e, uid_t sv)
{
	static rt_setid3 real;
	RT_REAL(real, "setresuid");
	rt_before_setuid(r, e, sv);
	return real(r, e, sv);
}

/* chroot: the spool's path (/proc/<stint>/fd/N) is then outside the
 * program's view of the file system: the spares are made first. */
RT_API int chroot(const char *path)
{
	static int (*real)(const char *);
	RT_REAL(real, "chroot");
	rt_make_spares();
	return real(path);
}

RT_API int prctl(int option, ...)
{
	static int (*real)(int, ...);
	RT_REAL(real, "prctl");
	va_list ap;
	va_start(ap, option);
	unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
	unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
	va_end(ap);
	int restricts = option == PR_SET_SECCOMP;
	int strict = (restricts && a == SECCOMP_MODE_STRICT) || (option == PR_SET_TSC && a == PR_TSC_SIGSEGV);
	if (restricts || strict)
		rt_restrict(0, 0, strict);
	int r = real(option, a, b, c, d);
	if (restricts || strict)
		rt_restrict(1, r, strict);
	return r;
}
#endif

/*
 * A fatal signal: stamp the time, so the frames left open are closed when
 * the program died and not at its last probe, then die as the signal
 * wants.  Installed only where the signal had its default action; a handler
 * the program sets later replaces this one, and the program is told the
 * default action is there (sigaction, signal: below).
 *
 * The faults, and the signals whose default action ends the process that
 * another process sends (kill, Ctrl-C, a closed pipe's SIGPIPE): the call a
 * program was interrupted in (a sleep, a read, a wait) lasted until then,
 * and without the stamp it ended at its entry (sleep 5 stopped with SIGINT
 * after 1.5 s: its nanosleep 0 ns).  The thread the kernel chose to take
 * the signal stamps its own time only: the others' last intervals end at
 * their last probes.
 *
 * The signal is sent again with the default action and unblocked here, not
 * left to a returning instruction: a trap (int3: SIGTRAP after the
 * instruction) or a seccomp SIGSYS would otherwise let the program run on,
 * and a program that blocks the signal would keep it pending.  Except a
 * fault (rt_fault_again): the handler returns and the instruction faults
 * again, so that the core's first frame is the program's.
 */
static const int rt_fatal_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGABRT,   SIGTRAP, SIGSYS,
				       SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE, SIGALRM,   SIGTERM, SIGUSR1,
				       SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

static void rt_note_process_end(uint64_t end);

/*
 * A fault an instruction raised (si_code > 0: the kernel's, not kill's or
 * raise's, which are <= 0): SIGSEGV, SIGBUS, SIGILL, SIGFPE.  Sent again
 * and unblocked in the handler, the signal killed the process inside it: a
 * core's stack began with pthread_sigmask, rt_fatal and "<signal handler
 * called>" before the program's faulting function, and gdb's "bt" and
 * "frame 0" showed stint's code.  Such a fault is sent again and left
 * pending instead (blocked while the handler runs): it is delivered as the
 * handler returns, in the program's context, the faulting instruction
 * first.  Returning alone (the instruction faults again) swallowed a fault
 * a crash reporter sends itself with a kernel's code (rt_tgsigqueueinfo,
 * SEGV_MAPERR): the program ran on.  Not a machine check that is only
 * reported (BUS_MCEERR_AO).
 */
static int rt_fault_again(int sig, const siginfo_t *si)
{
	if (!si || si->si_code <= 0)
		return 0;
#ifdef BUS_MCEERR_AO
	if (sig == SIGBUS && si->si_code == BUS_MCEERR_AO)
		return 0;
#endif
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

static void rt_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	struct rt_thread *t = &rt_self;
	if (t->state == RT_ACTIVE && !rt_busy(t)) {
		rt_sel_thread_end(t);
		if (t->nnotes)
			rt_after(t);
		RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
		if (t->npend)
			rt_flush(t);
		uint64_t sw;
		uint64_t now = rt_stamp(t, &sw);
		int os = sw != t->last_switches;
		if (now >= t->last_t && t->pos < t->end_limit + FMT_MAX_RECORD - 16)
			t->pos = fmt_put_ext(t->pos, FMT_X_TICK, os, now - t->last_t, NULL, 0);
		t->last_t = now;
		RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	}
	rt_note_process_end(rt_clock());
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	if (rt_fault_again(sig, si)) {
		syscall(SYS_tgkill, (int)getpid(), (int)syscall(SYS_gettid), sig);
		return;
	}
	/* to this thread, as the fault was: blocked while the handler runs,
	 * it is delivered (and kills) when unblocked just below */
	syscall(SYS_tgkill, (int)getpid(), (int)syscall(SYS_gettid), sig);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	/* reached only if a debugger took the signal away: then return, as
	 * without stint (a fault's instruction runs again) */
}

typedef int (*rt_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static rt_sigaction_fn rt_real_sigaction; /* the C library's: set before any handler is */
static void rt_find_signal_fns(void);

static void rt_catch_fatal(void)
{
	rt_real_sigaction = (rt_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	rt_find_signal_fns();
	if (!rt_real_sigaction)
		return;
	for (size_t i = 0; i < sizeof(rt_fatal_signals) / sizeof(rt_fatal_signals[0]); i++) {
		struct sigaction old, sa;
		if (rt_real_sigaction(rt_fatal_signals[i], NULL, &old) < 0 || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = rt_fatal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		rt_real_sigaction(rt_fatal_signals[i], &sa, NULL);
	}
}

/* What the program asks of a signal's action: the default action where
 * the runtime's stamp stands in for it. */
static void rt_hide_stamp(struct sigaction *old)
{
	if (old && (old->sa_flags & SA_SIGINFO) && old->sa_sigaction == rt_fatal) {
		memset(old, 0, sizeof(*old));
		old->sa_handler = SIG_DFL;
	}
}

RT_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	rt_sigaction_fn real = rt_real_sigaction;
	if (!real)
		real = (rt_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int r = real(sig, act, old);
	if (r == 0)
		rt_hide_stamp(old);
	return r;
}

/* signal() and its old names: the C library's set the action through its
 * own sigaction, not the one above.  Looked up by the constructor: a
 * handler may call signal() (System V style, to set itself again), and
 * dlsym is not for signal handlers. */
typedef sighandler_t (*rt_signal_fn)(int, sighandler_t);
enum { RT_SIG_SIGNAL, RT_SIG_SIGSET, RT_SIG_BSD, RT_SIG_SYSV, RT_SIG_SYSV2, RT_SIG_N };
/* (__sysv_signal: what signal() is in a program built without _DEFAULT_SOURCE) */
static const char *const rt_signal_names[RT_SIG_N] = {"signal", "sigset", "bsd_signal", "sysv_signal",
						      "__sysv_signal"};
static rt_signal_fn rt_real_signal[RT_SIG_N];

static void rt_find_signal_fns(void)
{
	for (int i = 0; i < RT_SIG_N; i++)
		if (!rt_real_signal[i])
			rt_real_signal[i] = (rt_signal_fn)dlsym(RTLD_NEXT, rt_signal_names[i]);
}

static sighandler_t rt_signal_like(int which, int sig, sighandler_t h)
{
	if (!rt_real_signal[which])
		rt_find_signal_fns();
	if (!rt_real_signal[which]) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	sighandler_t r = rt_real_signal[which](sig, h);
	return (uintptr_t)r == (uintptr_t)rt_fatal ? SIG_DFL : r;
}

RT_API sighandler_t signal(int sig, sighandler_t h)
{
	return rt_signal_like(RT_SIG_SIGNAL, sig, h);
}

RT_API sighandler_t sigset(int sig, sighandler_t h)
{
	return rt_signal_like(RT_SIG_SIGSET, sig, h);
}

RT_API sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return rt_signal_like(RT_SIG_BSD, sig, h);
}

RT_API sighandler_t sysv_signal(int sig, sighandler_t h)
{
	return rt_signal_like(RT_SIG_SYSV, sig, h);
}

RT_API sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return rt_signal_like(RT_SIG_SYSV2, sig, h);
}

/*
 * The start-up calibration is made once per recording, not in every
 * process: the first process that measures a kind of event leaves the cost
 * in "<spool>/calib", and the processes started after it (a shell script's
 * every command, a compiler driver's passes) take it from there instead of
 * spending a third of their start-up (about 5 ms here) on the same batches.
 * What is measured is the runtime's own probes around its own yardstick
 * functions, the same in every process on the machine; each process still
 * measures again during its run (rt_recalibrate), as the first one does.
 */
struct rt_calib_shared {
	char magic[8];  /* RT_CALIB_MAGIC */
	uint32_t have;  /* 1 << RT_CALIB_*: the kinds measured */
	uint32_t zero;
	uint64_t fn, fn_tail, lib, patched, patched_inner, patched_tail; /* 1/1024 ticks */
};
#define RT_CALIB_MAGIC "stcalib1"
#define RT_CALIB_MAX (1ull << 30) /* a million ticks an event: not a cost */

/* "<spool>/calib" on the caller's stack. */
#define RT_CALIB_PATH_ON_STACK()                                          \
	({                                                                \
		size_t rt_cal_n_ = strlen(rt_g.spool) + sizeof("/calib"); \
		char *rt_cal_p_ = alloca(rt_cal_n_);                      \
		rt_file_format_str(rt_file_format_str(rt_cal_p_, rt_g.spool), "/calib"); \
		rt_cal_p_;                                                \
	})

static void rt_calib_shared_read(struct rt_calib_shared *s)
{
	memset(s, 0, sizeof(*s));
	int fd = rt_file_open(RT_CALIB_PATH_ON_STACK(), O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	struct rt_calib_shared f;
	ssize_t n = read(fd, &f, sizeof(f));
	close(fd);
	if (n != (ssize_t)sizeof(f) || memcmp(f.magic, RT_CALIB_MAGIC, 8) != 0 || f.zero ||
	    f.have & ~((1u << RT_CALIB_FN) | (1u << RT_CALIB_PATCHED) | (1u << RT_CALIB_LIB)) ||
	    f.fn > RT_CALIB_MAX || f.fn_tail > RT_CALIB_MAX || f.lib > RT_CALIB_MAX || f.patched > RT_CALIB_MAX ||
	    f.patched_inner > 2 * RT_CALIB_MAX || f.patched_tail > RT_CALIB_MAX)
		return;
	/* (a kind without its cost is no use: measured again) */
	if (!f.fn)
		f.have &= ~(1u << RT_CALIB_FN);
	if (!f.patched)
		f.have &= ~(1u << RT_CALIB_PATCHED);
	*s = f;
}

/* The start-up cost of what (RT_CALIB_*): from s if an earlier process of
 * the recording measured it, else measured now and added to s (*added). */
static void rt_calibrate_once(struct rt_thread *t, int what, struct rt_calib_shared *s, int *added)
{
	unsigned bit = 1u << what;
	if (s->have & bit) {
		if (what == RT_CALIB_LIB) {
			rt_g.calib_lib = s->lib;
			return;
		}
		if (what == RT_CALIB_FN)
			rt_calib_set(t, what, s->fn, 0, s->fn_tail);
		else
			rt_calib_set(t, what, s->patched, s->patched_inner, s->patched_tail);
		return;
	}
	rt_calibrate(t, what);
	if (t->state != RT_ACTIVE)
		return;
	if (what == RT_CALIB_FN && rt_g.calib_ticks) {
		s->fn = rt_g.calib_ticks;
		s->fn_tail = rt_g.calib_tail;
	} else if (what == RT_CALIB_PATCHED && rt_g.calib_patched && rt_g.calib_ticks) {
		s->patched = rt_g.calib_ticks;
		s->patched_inner = rt_g.calib_inner;
		s->patched_tail = rt_g.calib_tail;
	} else if (what == RT_CALIB_LIB && rt_g.calib_lib) {
		s->lib = rt_g.calib_lib;
	} else {
		return;
	}
	s->have |= bit;
	*added = 1;
}

/* What this process measured, for the processes after it; the last writer
 * wins (a rename), and a kind it lost is measured again by a later one. */
static void rt_calib_shared_write(struct rt_calib_shared *s)
{
	memcpy(s->magic, RT_CALIB_MAGIC, 8);
	s->zero = 0;
	if (!rt_g.no_syscalls)
		rt_file_write(RT_CALIB_PATH_ON_STACK(), s, sizeof(*s));
}

__attribute__((constructor(101))) static void rt_constructor(void)
{
	pthread_once(&rt_once, rt_init_once);
	if (!rt_g.enabled)
		return;
	rt_sel_init(); /* before calibrating: a selection takes the probes off the lean path */
	rt_copy_proc_file("/proc/self/cmdline", ".cmdline");
	rt_save_maps();
	rt_exec_init(rt_g.spool, rt_count_exec_unrecorded);
	pthread_atfork(rt_atfork_prepare, rt_atfork_release, rt_atfork_child_then_release);
	rt_catch_fatal();
	struct rt_thread *t = &rt_self;
	if (t->state == RT_NEW)
		rt_thread_start(t);
	int calibrate = t->state == RT_ACTIVE && !rt_g.calib_ticks, added = 0;
	struct rt_calib_shared shared;
	if (calibrate) {
		rt_calib_shared_read(&shared);
		rt_calibrate_once(t, RT_CALIB_FN, &shared, &added);
	}
	int own = rt_own_begin(1);
	rt_plt_init(); /* with --no-libcalls (rt_g.plt 0) only vfork is taken over */
	rt_own_end(own);
	if (calibrate && rt_g.plt && rt_g.calib_ticks)
		rt_calibrate_once(t, RT_CALIB_LIB, &shared, &added);
	/* (a library call's cost is measured against the compiler's probes
	 * above; the function events of a program patched at load cost what
	 * its path costs) */
	if (calibrate && rt_g.calib_ticks && rt_patch_program_probed())
		rt_calibrate_once(t, RT_CALIB_PATCHED, &shared, &added);
	if (added)
		rt_calib_shared_write(&shared);
	rt_g.recal.fn0 = rt_g.calib_ticks;
	rt_g.recal.inner0 = rt_g.calib_inner;
	own = rt_own_begin(1); /* calibrating and reading the modules */
	rt_save_info();
	rt_patch_init();
	rt_own_end(own);
}

/* The text of <key>.exit being made (rt_note_process_end). */
struct rt_exit_text {
	char *p;
	size_t n, cap;
};

static void rt_note_thread_state(int tid, void *arg)
{
	struct rt_exit_text *x = arg;
	char state = 'R';
	unsigned long long start;
	/* (/proc/<tid>/stat is the thread's, as is /proc/self/task/<tid>/stat) */
	if (!x->p || rt_file_proc_stat(tid, &state, &start) < 0 || state == 'R')
		return;
	if (x->n + 32 > x->cap) {
		char *grown = rt_mem_grow(x->p, x->cap, x->cap * 2);
		if (!grown)
			return;
		x->p = grown;
		x->cap *= 2;
	}
	x->n = (size_t)(rt_file_format_str(rt_file_format_int(rt_file_format_str(x->p + x->n, "off "), (unsigned)tid),
					   "\n") -
			x->p);
}

/*
 * The process ends (exit(), main returned, a fatal signal) while its other
 * threads may be inside calls: blocked in pthread_join or epoll_wait, or
 * computing.  The kernel stops them without a last record, and their open
 * frames would close at their last probe: a pthread_join that waited the
 * whole run would show 0 ns.  "<key>.exit" tells the recorder when the
 * process ended, "end <ticks>", and which threads were off the CPU then,
 * "off <tid>" (sleeping, waiting for the disk, stopped): the recorder closes
 * those threads' frames at that time (recorder/rec_spool.c), the last
 * interval OS time for a thread that was off the CPU.  Nothing is written
 * for a process left with one thread.  Async-signal-safe (rt_fatal): open,
 * getdents64, read, mmap, write, rename.
 */
static void rt_note_process_end(uint64_t end)
{
	if (rt_g.no_syscalls || !rt_g.enabled)
		return;
	struct rt_exit_text x = {rt_mem_grow(NULL, 0, 4096), 0, 4096};
	if (!x.p)
		return;
	/* (no printf: this may run in a signal handler) */
	x.n = (size_t)(rt_file_format_str(rt_file_format_int(rt_file_format_str(x.p, "end "), end), "\n") - x.p);
	if (rt_file_other_threads(rt_note_thread_state, &x) > 0)
		rt_write_file(".exit", x.p, x.n);
	munmap(x.p, x.cap);
}

__attribute__((destructor)) static void rt_destructor(void)
{
	/* the command as the process leaves it: a daemon sets its title
	 * after it starts ("nginx: worker process"), as ps shows it */
	if (rt_g.enabled && rt_self.state == RT_ACTIVE) {
		int own = rt_own_begin(0);
		rt_note_process_end(rt_clock());
		rt_copy_proc_file("/proc/self/cmdline", ".cmdline");
		rt_own_end(own);
	}
	rt_recal_finish();
	rt_finish_thread(&rt_self);
}

/*
 * Attaching (rt_attach.c): the constructor's work, in the thread stint
 * stopped, with stint's settings (rt_env_given).  The program's signal
 * dispositions and exec'd children are left alone: no fatal-signal
 * handlers, no STINT_* variables passed on.  0 when recording.
 */
int rt_attach_start(void)
{
	rt_init_once();
	if (!rt_g.enabled)
		return -1;
	rt_copy_proc_file("/proc/self/cmdline", ".cmdline");
	rt_save_maps();
	/* (dlclose unregisters them) */
	pthread_atfork(rt_atfork_prepare, rt_atfork_release, rt_atfork_child_then_release);
	struct rt_thread *t = &rt_self;
	if (t->state == RT_NEW)
		rt_thread_start(t);
	if (t->state == RT_ACTIVE && !rt_g.calib_ticks) {
		rt_calibrate(t, RT_CALIB_FN);
		if (rt_g.calib_ticks && rt_patch_program_probed())
			rt_calibrate(t, RT_CALIB_PATCHED);
		rt_g.recal.fn0 = rt_g.calib_ticks;
		rt_g.recal.inner0 = rt_g.calib_inner;
	}
	rt_save_info();
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	rt_mark_overhead(t);
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
	return 0;
}

/*
 * Detaching: the recording of every thread ends now (they are all stopped,
 * none inside a probe), the frames still open closed at this time; with
 * unmap their buffers are unmapped and the thread key deleted, so that
 * the library can be unloaded.
 */
void rt_attach_finish(struct rt_thread *const *threads, unsigned n, int unmap)
{
	uint64_t now = rt_clock();
	for (unsigned i = 0; i < n; i++) {
		struct rt_thread *t = threads[i];
		if (t->state != RT_ACTIVE)
			continue;
		uint64_t sw = t->lock ? *t->lock : t->last_switches;
		if (now >= t->last_t && t->pos < t->end_limit + FMT_MAX_RECORD - 16)
			t->pos = fmt_put_ext(t->pos, FMT_X_END, sw != t->last_switches, now - t->last_t, NULL, 0);
		rt_note_chunk_used(t);
		t->hdr->tail_sum = t->tail_sum;
		t->hdr->tail_n = t->tail_n;
		rt_stop_thread(t, FMT_SPOOL_ENDED);
		if (unmap) {
			munmap(t->chunk_base, fmt_spool_chunk_size(t->chunk));
			munmap(t->hdr, RT_HDR_MAP);
			rt_thread_unmap(t);
		}
	}
	rt_g.enabled = 0;
	if (unmap)
		pthread_key_delete(rt_thread_key);
}

/* ------------------------------------------------------------------------
 * Interposed library functions: they keep names and module maps current
 * --------------------------------------------------------------------- */

RT_API int pthread_setname_np(pthread_t thread, const char *name)
{
	static int (*real)(pthread_t, const char *);
	if (!real)
		real = (int (*)(pthread_t, const char *))dlsym(RTLD_NEXT, "pthread_setname_np");
	int r = real ? real(thread, name) : ENOSYS;
	struct rt_thread *t = &rt_self;
	if (r == 0 && pthread_equal(thread, pthread_self()) && t->state == RT_ACTIVE)
		strncpy(t->hdr->name, name, sizeof(t->hdr->name) - 1);
	return r;
}

/*
 * Work of the runtime's in the program's thread, outside a probe (patching
 * the modules at start-up or what a dlopen maps, binding library calls):
 * the program's interval ends where it starts, and at its end the work is
 * marked the profiler's own, which compensation removes whole.  In between
 * the thread records nothing: the functions that work calls (libc's qsort
 * and its malloc and free, dlsym's) are the runtime's, not the program's
 * (cc1plus's start-up counted 6 calls of free at its root, and the 2.6 s
 * of its scan between them were the program's time).  A signal handler
 * that runs in that window goes unrecorded.  own_before: the interval
 * up to here was the runtime's too (the constructor's).  Returns what
 * rt_own_end needs: 0 when the thread was not recording (nothing marked).
 */
int rt_own_begin(int own_before)
{
	struct rt_thread *t = &rt_self;
	if (!rt_g.enabled || t->state != RT_ACTIVE || rt_busy(t))
		return 0;
	RT_GUARD(t->gate, t->gate | RT_GATE_BUSY);
	rt_mark(t, own_before ? FMT_X_OVERHEAD : FMT_X_TICK);
	uint32_t gate = t->gate & ~RT_GATE_BUSY;
	RT_GUARD(t->gate, 0);
	t->state = RT_DONE; /* probes find the thread not recording */
	return 1 + (int)gate;
}

void rt_own_end(int marked)
{
	if (!marked)
		return;
	struct rt_thread *t = &rt_self;
	t->state = RT_ACTIVE;
	RT_GUARD(t->gate, (uint32_t)(marked - 1) | RT_GATE_BUSY);
	rt_mark_overhead(t);
	RT_GUARD(t->gate, t->gate & ~RT_GATE_BUSY);
}

RT_API void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	/* the library's constructors run inside dlopen: it is mapped from
	 * before the call on */
	uint64_t before = rt_g.enabled ? rt_clock() : 0;
	void *h = real(file, mode);
	if (h && rt_g.enabled) {
		/* the program's time ends here, the runtime's bookkeeping is
		 * overhead */
		int mark = rt_own_begin(0);
		rt_save_maps_epoch(before);
		rt_plt_after_dlopen();
		rt_sel_after_dlopen();
		rt_patch_init();
		rt_own_end(mark);
	} else if (!h && rt_g.enabled) {
		/* a dlopen that failed after mapping (a missing symbol): what
		 * was patched inside it is gone again */
		rt_patch_after_dlclose();
	}
	return h;
}

RT_API int dlclose(void *handle)
{
	static int (*real)(void *);
	if (!real)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	int r = real(handle);
	if (r == 0) /* (the stand-ins' real functions may have gone with it) */
		__atomic_add_fetch(&rt_scope_gen, 1, __ATOMIC_RELEASE);
	/* its destructors ran inside dlclose: it is gone from after the call */
	if (r == 0 && rt_g.enabled) {
		rt_save_maps_epoch(rt_clock());
		rt_patch_after_dlclose();
	}
	return r;
}
