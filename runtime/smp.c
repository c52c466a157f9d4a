/*
 * smp.c - libstint-sampler.so, the in-process sampler that `stint record
 * -m sample` preloads where perf events are not permitted
 * (perf_event_paranoid 3, seccomp in containers).
 *
 * Every thread gets a timer on its own CPU-time clock (timer_create on
 * CLOCK_THREAD_CPUTIME_ID, delivered to that thread), so samples follow CPU
 * time as perf's task-clock does.  The handler unwinds the interrupted
 * context with libunwind (local, signal-safe) and appends the stack, in the
 * data file's sample encoding (fmt_sample.h), to the thread's spool file
 * with one write(2): nothing is buffered in the process, so a crash or
 * SIGKILL loses no sample taken.
 *
 * The timers signal a real-time signal of the sampler's own (smp_sig), not
 * SIGPROF, which programs use (GNU sort cleans up and re-raises it).  The
 * program can neither block it nor take it over: sigprocmask,
 * pthread_sigmask, sigaction's sa_mask and the old signal functions are
 * interposed and drop it from what they block; sigaction and signal on it
 * are kept aside (smp_prog_sa) and given the deliveries that are not the
 * sampler's.  Each thread unblocks it when its sampling starts, so threads
 * created with every signal blocked (liblzma's workers) are sampled too.
 * Everything the program asks for other signals is passed on unchanged.
 *
 * CPU-time clocks count system time too.  A sample whose interrupted
 * instruction is a system call's (the kernel returns to the instruction
 * after it, or rewinds to it to restart the call) was taken in the kernel:
 * it is not kept (as perf without --kernel keeps no sample taken in the
 * kernel) but counted, a marker with no frames in the thread's file;
 * STINT_KERNEL=1 keeps it, charged to the call.  Other kernel time (page
 * faults, interrupts) cannot be told apart here and stays charged to the
 * interrupted instruction; the process's system time (getrusage at exit)
 * says how much there was.
 *
 * Spool (see fmt_spool.h for the directory): per process <key>.info,
 * .cmdline, .maps as the instrumentation runtime writes them, <key>.usage
 * (user and system time at exit), and per thread <key>.t<tid>.smp: a
 * struct fmt_smp_hdr, then samples.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libunwind.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../format/fmt_sample.h"
#include "rt_exec.h"
#include "rt_file.h"
#include "rt_fork.h"
#include "../format/fmt_spool.h"

#define SMP_API __attribute__((visibility("default")))
#define SMP_MAX_FRAMES 256
#define SMP_COOKIE 0x53544e54 /* sigev_value of the sampler's timers: "STNT" */

struct smp_thread {
	int fd;          /* the spool file while the thread starts and ends */
	int active;
	char path[3200]; /* the spool file: opened for each sample, never kept
			  * open, so that a program closing or dup2-ing every
			  * descriptor cannot have samples written into its files */
	timer_t timer;
	uint64_t last;   /* ns of the previous sample */
	unsigned taken;  /* samples, to check for the recorder now and then */
	/* the handler's stack for its work (SMP_STACK bytes, NULL: none could
	 * be mapped), and the sample it takes there */
	uint8_t *stack;
	siginfo_t *si;
	void *uctx;
	int sampling;    /* in the handler's work (smp_unblocked, smp_handler) */
};

/* Unwinding takes several KiB of stack (libunwind's cursor and its DWARF
 * parsing, the frames, the encoded sample): on the interrupted stack, which
 * may be a coroutine's of 8 KiB, it killed programs that run fine alone.
 * The handler does that work on a stack of the thread's own; only the
 * kernel's signal frame lands on the program's. */
#define SMP_STACK (64u << 10)

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

/* The sampler's signal (0 until chosen) and what the program asked for it */
static int smp_sig;
static struct sigaction smp_prog_sa; /* SIG_DFL until the program sets it */
static int smp_keep_kernel;          /* STINT_KERNEL=1: keep samples taken in system calls */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*real_pthread_sigmask)(int, const sigset_t *, sigset_t *);
static int (*real_sigprocmask)(int, const sigset_t *, sigset_t *);


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

/* Block nothing of the sampler's: a copy of set without smp_sig. */
static const sigset_t *smp_unblocked(const sigset_t *set, sigset_t *copy)
{
	/* (the handler's own calls, libunwind's around its locks, block and
	 * put back what they ask: the kernel blocked smp_sig for the handler,
	 * and a restore that unblocked it let a second sample start inside the
	 * first, on the same stack, holding libunwind's lock: a crash or a
	 * deadlock) */
	if (!set || !smp_sig || !sigismember(set, smp_sig) || smp_self.sampling)
		return set;
	*copy = *set;
	sigdelset(copy, smp_sig);
	return copy;
}

/* A delivery of smp_sig that is not the sampler's (kill, sigqueue, a timer
 * of the program's): what the program asked for it. */
static void smp_forward(int sig, siginfo_t *si, void *uctx)
{
	struct sigaction sa = smp_prog_sa;
	if (sa.sa_handler == SIG_IGN)
		return;
	if (sa.sa_handler == SIG_DFL) {
		/* a real-time signal's default action: the process ends of it */
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		real_sigaction(sig, &dfl, NULL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
		return;
	}
	/* the program's handler runs with the signals it asked blocked */
	sigset_t old;
	real_pthread_sigmask(SIG_BLOCK, &sa.sa_mask, &old);
	if (sa.sa_flags & SA_SIGINFO)
		sa.sa_sigaction(sig, si, uctx);
	else
		sa.sa_handler(sig);
	real_pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Was the interrupted instruction a system call's?  The kernel delivers a
 * signal raised while it ran a system call at the call's return (the
 * instruction after it), or rewinds to the call to restart it. */
static int smp_in_syscall(const void *uctx)
{
	const ucontext_t *uc = uctx;
	return arch_at_syscall(ARCH_UC_PC(uc));
}

static void smp_sample(struct smp_thread *t, siginfo_t *si, void *uctx);
static void smp_sample_here(void);

static void smp_handler(int sig, siginfo_t *si, void *uctx)
{
	if (!si || si->si_code != SI_TIMER || si->si_value.sival_int != SMP_COOKIE) {
		int saved = errno;
		smp_forward(sig, si, uctx);
		errno = saved;
		return;
	}
	struct smp_thread *t = &smp_self;
	if (!t->active || t->sampling) /* (a tick of the sampler's own time) */
		return;
	t->sampling = 1;
	if (t->stack) {
		t->si = si;
		t->uctx = uctx;
		arch_call_on_stack(t->stack + SMP_STACK, smp_sample_here);
	} else {
		smp_sample(t, si, uctx);
	}
	t->sampling = 0;
}

/* The sample the handler was given, on the thread's own stack. */
static void smp_sample_here(void)
{
	struct smp_thread *t = &smp_self;
	smp_sample(t, t->si, t->uctx);
}

/* Whether the cursor's frame is code with unwind information.  Where it
 * has none, libunwind's x86_64 unw_get_proc_info still succeeds, with a
 * made-up procedure of one byte at the address itself (for _start's sake). */
static int smp_has_unwind_info(unw_cursor_t *c)
{
	unw_proc_info_t pi;
	unw_word_t ip;
	if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || unw_get_proc_info(c, &pi) < 0)
		return 0;
	return !(pi.start_ip == ip && pi.end_ip == ip + 1);
}

/* Whether the cursor's address lies in mapped memory (mincore: a system
 * call, so a garbage address is an error, not a fault). */
static int smp_mapped(unw_cursor_t *c)
{
	unw_word_t ip;
	unsigned char v;
	if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || ip < 4096)
		return 0;
	return mincore((void *)(uintptr_t)(ip & ~(unw_word_t)4095), 1, &v) == 0;
}

static void smp_sample(struct smp_thread *t, siginfo_t *si, void *uctx)
{
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
	if (!smp_keep_kernel && smp_in_syscall(uctx)) {
		/* kernel time: a marker (no frames, "cut") that the recorder
		 * counts and does not keep */
		pcs[0] = 0;
		cut = 1;
	} else if (unw_init_local2(&c, (unw_context_t *)uctx, UNW_INIT_SIGNAL_FRAME) == 0) {
		for (;;) {
			unw_word_t ip;
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || (n > 0 && ip == 0))
				break;
			pcs[n++] = ip;
			if (n == SMP_MAX_FRAMES) {
				cut = 1;
				break;
			}
			/* Code without unwind information (hand-written assembly,
			 * a JIT's): libunwind then guesses the caller from %rbp,
			 * which in code that keeps no frame pointer holds anything
			 * (0x1010101010101010 [unknown] as a caller, or an end of
			 * the stack that is none).  A guess is kept only if it
			 * lands in code that has unwind information, or in mapped
			 * memory (a JIT's frames keep %rbp: V8's). */
			int known = smp_has_unwind_info(&c);
			int r = unw_step(&c);
			if (r <= 0) {
				cut = r < 0 || !known;
				break;
			}
			if (!known && !smp_has_unwind_info(&c) && !smp_mapped(&c)) {
				cut = 1;
				break;
			}
		}
	}
	if (n > 0 || cut) {
		/* CPU-time timers expire at scheduler ticks: periods that passed
		 * since the last signal arrive as overruns, and each is a sample
		 * of this same stack, as a faster timer would have taken it */
		int repeat = 1 + (si && si->si_code == SI_TIMER && si->si_overrun > 0 ? si->si_overrun : 0);
		if (repeat > 1000)
			repeat = 1000;
		uint8_t buf[30 + SMP_MAX_FRAMES * 10];
		uint64_t now = smp_now();
		int fd = rt_file_open(t->path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
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
	snprintf(t->path, sizeof(t->path), "%s/%s.t%d", smp_spool, smp_key, tid);
	t->fd = rt_file_create_thread(t->path, sizeof(t->path), FMT_SMP_SUFFIX, O_WRONLY | O_APPEND);
	if (t->fd < 0)
		return;
	struct fmt_smp_hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, FMT_SMP_MAGIC, 8);
	h.pid = (int32_t)getpid();
	h.tid = tid;
	h.start = t->last = smp_now();
	h.sig = (uint32_t)smp_sig;
	prctl(PR_GET_NAME, h.name, 0, 0, 0);
	/* the thread may have started with every signal blocked */
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, smp_sig);
	real_pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = smp_sig;
	sev.sigev_value.sival_int = SMP_COOKIE;
	sev._sigev_un._tid = tid;
	int timed = timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) == 0;
	if (!timed)
		h.flags |= FMT_SMP_NO_TIMER; /* counted as a thread not sampled */
	ssize_t w = write(t->fd, &h, sizeof(h));
	close(t->fd);
	t->fd = -1;
	if (!timed)
		return;
	if (w != (ssize_t)sizeof(h)) {
		timer_delete(t->timer);
		return;
	}
	if (!t->stack) { /* (a fork child has its copy of the parent's) */
		void *m = mmap(NULL, SMP_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		t->stack = m == MAP_FAILED ? NULL : m;
	}
	t->active = 1;
	pthread_setspecific(smp_key_end, t);
	struct itimerspec its = {{0, smp_period_ns}, {0, smp_period_ns}};
	timer_settime(t->timer, 0, &its, NULL);
}

/* Set a thread file's final name (unless NULL) and CPU time, once. */
static void smp_hdr_update(int fd, const char *name, uint64_t cpu_ns)
{
	struct fmt_smp_hdr h;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h.magic, FMT_SMP_MAGIC, 8) != 0 ||
	    (h.flags & FMT_SMP_CPU))
		return;
	if (name)
		memcpy(h.name, name, sizeof(h.name));
	h.flags |= FMT_SMP_CPU;
	h.cpu_ns = cpu_ns;
	if (pwrite(fd, &h, sizeof(h), 0) < 0)
		h.flags = 0;
}

static void smp_thread_stop(void *arg)
{
	struct smp_thread *t = arg;
	if (!t || !t->active)
		return;
	t->active = 0; /* (a signal still on its way finds this and returns) */
	timer_delete(t->timer);
	if (t->stack) {
		munmap(t->stack, SMP_STACK);
		t->stack = NULL;
	}
	/* the final name, which the program may have set, and the CPU time the
	 * samples are checked against */
	struct fmt_smp_hdr h;
	prctl(PR_GET_NAME, h.name, 0, 0, 0);
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	h.cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	t->fd = smp_enabled ? rt_file_open(t->path, O_RDWR | O_CLOEXEC, 0) : -1; /* (not once the recorder is gone) */
	if (t->fd >= 0) {
		smp_hdr_update(t->fd, h.name, h.cpu_ns);
		close(t->fd);
	}
	t->fd = -1;
}

/* One thread still running at exit: its CPU time (from /proc, in clock
 * ticks) into its header, read without malloc. */
static void smp_live_thread_cpu(int tid, void *arg)
{
	long hz = *(const long *)arg;
	char path[4096], stat[1024];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	int sf = rt_file_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (sf < 0)
		return;
	ssize_t l = read(sf, stat, sizeof(stat) - 1);
	close(sf);
	if (l <= 0)
		return;
	stat[l] = 0;
	/* after the name's ')': state is field 3, utime 14, stime 15 */
	char *p = strrchr(stat, ')');
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return;
	char name[16] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	sf = rt_file_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (sf >= 0) {
		l = read(sf, name, sizeof(name) - 1);
		close(sf);
		name[l > 0 ? l : 0] = 0;
		if (l > 0 && name[l - 1] == '\n')
			name[l - 1] = 0;
	}
	snprintf(path, sizeof(path), "%s/%s.t%d" FMT_SMP_SUFFIX, smp_spool, smp_key, tid);
	int fd = rt_file_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	smp_hdr_update(fd, name[0] ? name : NULL, (ut + st) * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100)));
	close(fd);
}

/* Each thread still running at exit. */
static void smp_live_threads_cpu(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	rt_file_other_threads(smp_live_thread_cpu, &hz);
}

static void smp_atfork_child(void)
{
	struct smp_thread *t = &smp_self;
	if (!smp_enabled)
		return;
	/* the timer is not inherited; the file is the parent's */
	if (t->fd >= 0)
		close(t->fd); /* (this process's copy of the descriptor) */
	t->fd = -1;
	t->active = 0;
	if (rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start)) {
		smp_enabled = 0; /* stint record was killed: no new spool files */
		return;
	}
	smp_process_files();
	smp_thread_start();
}

static void smp_resolve(void)
{
	if (!real_sigaction)
		real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT,
												 "sigaction");
	if (!real_pthread_sigmask)
		real_pthread_sigmask = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT,
											  "pthread_sigmask");
	if (!real_sigprocmask)
		real_sigprocmask = (int (*)(int, const sigset_t *, sigset_t *))dlsym(RTLD_NEXT, "sigprocmask");
}

/* The sampler's signal: the highest real-time signal nobody set (a parent
 * may have left some ignored). */
static int smp_choose_signal(void)
{
	for (int s = SIGRTMAX; s >= SIGRTMIN; s--) {
		struct sigaction old;
		if (real_sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			return s;
	}
	return 0;
}

__attribute__((constructor)) static void smp_init(void)
{
	smp_resolve();
	const char *spool = getenv(FMT_ENV_SPOOL);
	if (!rt_file_abs(smp_spool, sizeof(smp_spool), spool))
		return;
	rt_file_recorder_parse(getenv(FMT_ENV_RECORDER), &smp_recorder_pid, &smp_recorder_start);
	if (rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start))
		return; /* started after stint record was killed */
	const char *freq = getenv(FMT_ENV_FREQ);
	long hz = freq ? atol(freq) : 1000;
	if (hz < 1)
		hz = 1000;
	smp_period_ns = 1000000000L / hz;
	const char *kern = getenv(FMT_ENV_KERNEL);
	smp_keep_kernel = kern && *kern == '1';
	int sig = smp_choose_signal();
	if (!sig)
		return; /* (the recorder finds no thread file and says nothing was recorded) */
	pthread_key_create(&smp_key_end, smp_thread_stop);
	memset(&smp_prog_sa, 0, sizeof(smp_prog_sa));
	smp_prog_sa.sa_handler = SIG_DFL;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = smp_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (real_sigaction(sig, &sa, NULL) < 0)
		return;
	smp_sig = sig;
	smp_process_files();
	rt_exec_init(smp_spool, NULL);
	pthread_atfork(NULL, NULL, smp_atfork_child);
	smp_enabled = 1;
	smp_thread_start();
}

__attribute__((destructor)) static void smp_fini(void)
{
	smp_thread_stop(&smp_self);
	if (!smp_enabled || rt_file_recorder_gone(smp_recorder_pid, smp_recorder_start))
		return;
	smp_live_threads_cpu();
	/* the process's user and system time: how much of what the CPU-time
	 * timers counted was spent in the kernel */
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		char u[128];
		int n = snprintf(u, sizeof(u), "utime_ns %llu\nstime_ns %llu\n",
				 (unsigned long long)ru.ru_utime.tv_sec * 1000000000ull +
					 (unsigned long long)ru.ru_utime.tv_usec * 1000ull,
				 (unsigned long long)ru.ru_stime.tv_sec * 1000000000ull +
					 (unsigned long long)ru.ru_stime.tv_usec * 1000ull);
		smp_write_file(".usage", u, (size_t)n);
	}
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

/*
 * clone() without CLONE_VM and the fork-like raw system calls through
 * syscall() make a process but run no pthread_atfork handler: the child was
 * not sampled (its timer is not inherited) and nothing said so.  It now
 * starts as a fork child does (rt_fork.h).
 */
ARCH_CALL_ON_STACK_ASM;

static void smp_fork_started(void)
{
	if (smp_enabled)
		rt_fork_child_setup(smp_atfork_child);
}

/*
 * seccomp: from a filter on (one the sampler cannot read) or in strict mode
 * (no system call but read, write, exit and sigreturn) a sample's writes,
 * or the signal's handling itself, could have the program killed.  So just
 * before, the thread's sampling ends as at its exit (what it sampled is
 * kept), and no thread started later samples (they inherit the filter);
 * the other threads sample on.  A strict mode had the program killed at
 * the next tick.
 */
static void smp_restrict(int after, long r, long mode)
{
	(void)r;
	(void)mode;
	if (after)
		return;
	smp_thread_stop(&smp_self);
	smp_enabled = 0;
}

RT_FORK_WRAPPERS(SMP_API, smp_fork_started, smp_restrict, NULL)

#ifdef PR_SET_SECCOMP
SMP_API int prctl(int option, ...)
{
	static int (*real)(int, ...);
	if (!real)
		real = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
	va_list ap;
	va_start(ap, option);
	unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
	unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
	va_end(ap);
	/* (a filter's prctl without its program is refused: EFAULT) */
	if (option == PR_SET_SECCOMP && (a == SECCOMP_MODE_STRICT || b != 0))
		smp_restrict(0, 0, (long)a);
	return real ? real(option, a, b, c, d) : (errno = ENOSYS, -1);
}
#endif

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

/* ------------------------------------------------------------------------
 * Interposed: the program can neither block the sampler's signal nor take
 * it over; every other signal is passed on as asked.
 * --------------------------------------------------------------------- */

SMP_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	smp_resolve();
	if (!smp_sig || sig != smp_sig) {
		if (act && smp_sig && sigismember(&act->sa_mask, smp_sig)) {
			/* a handler that blocks every signal while it runs would
			 * hold the samples of its own time back: not this one */
			struct sigaction copy = *act;
			sigdelset(&copy.sa_mask, smp_sig);
			return real_sigaction(sig, &copy, old);
		}
		return real_sigaction(sig, act, old);
	}
	/* the sampler's signal: the program's wish is kept aside, and the
	 * deliveries that are not the sampler's follow it (smp_forward) */
	if (old)
		*old = smp_prog_sa;
	if (act) {
		smp_prog_sa = *act;
		sigdelset(&smp_prog_sa.sa_mask, smp_sig);
	}
	return 0;
}

/* signal(), sysv_signal(), bsd_signal() and sigignore() in terms of the above
 * (glibc's call its sigaction directly, which would pass the sampler by) */
static sighandler_t smp_signal(int sig, sighandler_t fn, int flags)
{
	if (sig <= 0 || sig >= NSIG || fn == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

SMP_API sighandler_t signal(int sig, sighandler_t fn)
{
	return smp_signal(sig, fn, SA_RESTART);
}

SMP_API sighandler_t bsd_signal(int sig, sighandler_t fn)
{
	return smp_signal(sig, fn, SA_RESTART);
}

SMP_API sighandler_t sysv_signal(int sig, sighandler_t fn)
{
	return smp_signal(sig, fn, (int)(SA_RESETHAND | SA_NODEFER));
}

SMP_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	smp_resolve();
	sigset_t copy;
	return real_sigprocmask(how, how == SIG_UNBLOCK ? set : smp_unblocked(set, &copy), old);
}

SMP_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	smp_resolve();
	sigset_t copy;
	return real_pthread_sigmask(how, how == SIG_UNBLOCK ? set : smp_unblocked(set, &copy), old);
}

SMP_API int sighold(int sig)
{
	if (smp_sig && sig == smp_sig)
		return 0;
	sigset_t one;
	sigemptyset(&one);
	if (sigaddset(&one, sig) < 0)
		return -1;
	return sigprocmask(SIG_BLOCK, &one, NULL);
}

SMP_API int sigignore(int sig)
{
	return smp_signal(sig, SIG_IGN, 0) == SIG_ERR ? -1 : 0;
}
