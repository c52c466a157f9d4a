/*
 * smp.c - libstint-sampler.so, the in-process sampler that `stint record
 * -m sample` preloads where perf events are not permitted
 * (perf_event_paranoid 3, seccomp in containers).
 *
 * Every thread gets a timer on its own CPU-time clock (timer_create on
 * CLOCK_THREAD_CPUTIME_ID, delivered to that thread), so samples follow CPU
 * time as perf's task-clock does.  The SIGPROF handler unwinds the
 * interrupted context with libunwind (local, signal-safe) and appends the
 * stack, in the data file's sample encoding (fmt_sample.h), to the thread's
 * spool file with one write(2): nothing is buffered in the process, so a
 * crash or SIGKILL loses no sample taken.
 *
 * Spool (see fmt_spool.h for the directory): per process <key>.info,
 * .cmdline, .maps as the instrumentation runtime writes them, and per
 * thread <key>.t<tid>.smp: a struct smp_hdr, then samples.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../format/fmt_sample.h"
#include "rt_exec.h"
#include "rt_file.h"
#include "../format/fmt_spool.h"

#define SMP_API __attribute__((visibility("default")))
#define SMP_MAX_FRAMES 256

struct smp_thread {
	int fd;          /* the spool file while the thread starts and ends */
	int active;
	char path[3200]; /* the spool file: opened for each sample, never kept
			  * open, so that a program closing or dup2-ing every
			  * descriptor cannot have samples written into its files */
	timer_t timer;
	uint64_t last;   /* ns of the previous sample */
	unsigned taken;  /* samples, to check for the recorder now and then */
};

static __thread struct smp_thread smp_self __attribute__((tls_model("initial-exec"))) = {.fd = -1};
/* (the spool path is at most 3072 bytes: STINT_SPOOL is refused beyond) */
static char smp_spool[3072];
static char smp_key[64];
static long smp_period_ns = 1000000;
static int smp_enabled;
static pthread_key_t smp_key_end;
/* the recorder (STINT_RECORDER): once it is gone, sampling stops */
static int smp_recorder_pid;
static unsigned long long smp_recorder_start;
#define SMP_CHECK_EVERY 64 /* samples between checks that the recorder lives (~10 us each) */

static uint64_t smp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void smp_path(char *buf, size_t n, const char *suffix)
{
	snprintf(buf, n, "%s/%s%s", smp_spool, smp_key, suffix);
}

static void smp_write_file(const char *suffix, const void *data, size_t len)
{
	char path[4096];
	smp_path(path, sizeof(path), suffix);
	rt_file_write(path, data, len);
}

static void smp_copy_proc(const char *proc, const char *suffix)
{
	char path[4096];
	smp_path(path, sizeof(path), suffix);
	rt_file_copy(proc, path);
}

static void smp_process_files(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(smp_key, sizeof(smp_key), "p%d-%lld%09ld", (int)getpid(), (long long)ts.tv_sec,
		 ts.tv_nsec);
	char info[256];
	int n = snprintf(info, sizeof(info), "pid %d\nppid %d\nsampler inproc\n", (int)getpid(),
			 (int)getppid());
	smp_write_file(".info", info, (size_t)n);
	smp_copy_proc("/proc/self/cmdline", ".cmdline");
	smp_copy_proc("/proc/self/maps", ".maps");
}

static void smp_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)sig;
	(void)si;
	struct smp_thread *t = &smp_self;
	if (!t->active)
		return;
	int saved = errno;
	if (++t->taken % SMP_CHECK_EVERY == 0 &&
	    rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start)) {
		/* stint record was killed: the spool stops growing */
		struct itimerspec off = {{0, 0}, {0, 0}};
		t->active = 0;
		smp_enabled = 0;
		timer_settime(t->timer, 0, &off, NULL);
		errno = saved;
		return;
	}
	uint64_t pcs[SMP_MAX_FRAMES];
	unsigned n = 0;
	int cut = 0;
	unw_cursor_t c;
	if (unw_init_local2(&c, (unw_context_t *)uctx, UNW_INIT_SIGNAL_FRAME) == 0) {
		for (;;) {
			unw_word_t ip;
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || (n > 0 && ip == 0))
				break;
			pcs[n++] = ip;
			if (n == SMP_MAX_FRAMES) {
				cut = 1;
				break;
			}
			int r = unw_step(&c);
			if (r <= 0) {
				cut = r < 0;
				break;
			}
		}
	}
	if (n > 0) {
		/* CPU-time timers expire at scheduler ticks: periods that passed
		 * since the last signal arrive as overruns, and each is a sample
		 * of this same stack, as a faster timer would have taken it */
		int repeat = 1 + (si && si->si_code == SI_TIMER && si->si_overrun > 0 ? si->si_overrun : 0);
		if (repeat > 1000)
			repeat = 1000;
		uint8_t buf[30 + SMP_MAX_FRAMES * 10];
		uint64_t now = smp_now();
		int fd = open(t->path, O_WRONLY | O_APPEND | O_CLOEXEC);
		for (int r = 0; fd >= 0 && r < repeat; r++) {
			uint8_t *e = fmt_put_sample(buf, r ? 0 : now - t->last, pcs, n, cut);
			ssize_t w = write(fd, buf, (size_t)(e - buf));
			(void)w;
		}
		if (fd >= 0)
			close(fd);
		t->last = now;
	}
	errno = saved;
}

struct smp_file_hdr {
	char magic[8];    /* "STINTSMP" */
	int32_t pid, tid;
	uint64_t start;   /* ns, CLOCK_MONOTONIC */
	char name[16];
};

/* Start sampling the calling thread. */
static void smp_thread_start(void)
{
	struct smp_thread *t = &smp_self;
	if (!smp_enabled || t->active)
		return;
	if (rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start)) {
		smp_enabled = 0;
		return;
	}
	int tid = (int)syscall(SYS_gettid);
	snprintf(t->path, sizeof(t->path), "%s/%s.t%d.smp", smp_spool, smp_key, tid);
	t->fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (t->fd < 0)
		return;
	struct smp_file_hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, "STINTSMP", 8);
	h.pid = (int32_t)getpid();
	h.tid = tid;
	h.start = t->last = smp_now();
	prctl(PR_GET_NAME, h.name, 0, 0, 0);
	if (write(t->fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		close(t->fd);
		t->fd = -1;
		return;
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = tid;
	close(t->fd);
	t->fd = -1;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) < 0)
		return;
	t->active = 1;
	pthread_setspecific(smp_key_end, t);
	struct itimerspec its = {{0, smp_period_ns}, {0, smp_period_ns}};
	timer_settime(t->timer, 0, &its, NULL);
}

static void smp_thread_stop(void *arg)
{
	struct smp_thread *t = arg;
	if (!t || !t->active)
		return;
	t->active = 0;
	timer_delete(t->timer);
	/* the final name, which the program may have set */
	struct smp_file_hdr h;
	prctl(PR_GET_NAME, h.name, 0, 0, 0);
	t->fd = open(t->path, O_WRONLY | O_CLOEXEC);
	if (t->fd >= 0) {
		if (pwrite(t->fd, h.name, sizeof(h.name), offsetof(struct smp_file_hdr, name)) < 0)
			h.name[0] = 0;
		close(t->fd);
	}
	t->fd = -1;
}

static void smp_atfork_child(void)
{
	struct smp_thread *t = &smp_self;
	if (!smp_enabled)
		return;
	/* the timer is not inherited; the file is the parent's */
	t->fd = -1;
	t->active = 0;
	if (rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start)) {
		smp_enabled = 0; /* stint record was killed: no new spool files */
		return;
	}
	smp_process_files();
	smp_thread_start();
}

__attribute__((constructor)) static void smp_init(void)
{
	const char *spool = getenv("STINT_SPOOL");
	if (!rt_file_abs(smp_spool, sizeof(smp_spool), spool))
		return;
	rt_file_recorder_parse(getenv("STINT_RECORDER"), &smp_recorder_pid, &smp_recorder_start);
	if (rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start))
		return; /* started after stint record was killed */
	const char *freq = getenv("STINT_FREQ");
	long hz = freq ? atol(freq) : 1000;
	if (hz < 1)
		hz = 1000;
	smp_period_ns = 1000000000L / hz;
	pthread_key_create(&smp_key_end, smp_thread_stop);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = smp_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	smp_process_files();
	rt_exec_init(smp_spool);
	pthread_atfork(NULL, NULL, smp_atfork_child);
	smp_enabled = 1;
	smp_thread_start();
}

__attribute__((destructor)) static void smp_fini(void)
{
	smp_thread_stop(&smp_self);
}

/* ------------------------------------------------------------------------
 * Interposed: new threads start sampling; dlopen refreshes the maps
 * --------------------------------------------------------------------- */

struct smp_start {
	void *(*fn)(void *);
	void *arg;
};

static void *smp_thread_main(void *p)
{
	struct smp_start s = *(struct smp_start *)p;
	munmap(p, sizeof(s));
	smp_thread_start();
	return s.fn(s.arg);
}

SMP_API int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
			RTLD_NEXT, "pthread_create");
	/* not malloc: the program's own would count our call (rt_mem_grow) */
	struct smp_start *s = smp_enabled ? rt_mem_grow(NULL, 0, sizeof(*s)) : NULL;
	if (!s)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	int r = real(th, attr, smp_thread_main, s);
	if (r != 0)
		munmap(s, sizeof(*s));
	return r;
}

SMP_API void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	void *h = real(file, mode);
	if (h && smp_enabled)
		smp_copy_proc("/proc/self/maps", ".maps");
	return h;
}
