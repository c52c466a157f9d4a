/*
 * rec_inject.c - attaching instrumentation to a running process
 * (`stint record -p PID`, instrument mode): the ptrace side.
 *
 * Attach: every thread is stopped (PTRACE_SEIZE + PTRACE_INTERRUPT); the
 * frames each has open are found by unwinding its stack with the DWARF CFI
 * (symbol.h) and written to the spool as "attach.frames"; then, in the
 * main thread, calls are made as a debugger makes them (registers saved,
 * arguments set, a return address of 0 whose fault ends the call, registers
 * put back): mmap of a scratch page for the strings, dlopen of
 * libstint-rt-attach.so, dlsym of its entry points, stint_attach(settings),
 * which starts the recording and points the GOT entries of
 * __cyg_profile_func_enter/exit at its probes.  The threads are then let go
 * (PTRACE_DETACH): the program runs untraced while it records.
 *
 * Detach: stop every thread, stint_detach_begin() (the GOT entries back),
 * let them run a moment so that none is left inside a probe, stop them
 * again until none is, stint_detach_end() (every thread's recording ended
 * and unmapped), dlclose, munmap of the scratch page, let go.  A signal
 * that arrives for the thread while it runs an injected call is delivered
 * when it is let go.
 *
 * The C library functions called are found at the same offsets in the
 * target's C library as in stint's own: the same file is required.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "../arch/arch.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"

#define INJ_MAX_FRAMES 512
#define INJ_STACK_COPY (512u << 10)

static void inj_err(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void inj_err(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------
 * Stopping and letting go of every thread
 * --------------------------------------------------------------------- */

static int inj_has(const struct rec_inject *in, pid_t t)
{
	for (int i = 0; i < in->ntids; i++)
		if (in->tids[i] == t)
			return 1;
	return 0;
}

/* Why ptrace is refused, as one line. */
static void inj_denied(pid_t pid, int e, char *err, size_t n)
{
	size_t len;
	char *scope = util_read_file("/proc/sys/kernel/yama/ptrace_scope", &len);
	int s = scope ? atoi(scope) : -1;
	free(scope);
	if (e == EPERM && s >= 1)
		inj_err(err, n, "cannot attach to process %d: ptrace is not permitted (kernel.yama.ptrace_scope "
			"is %d%s); run stint as root, or set it to 0 (sysctl kernel.yama.ptrace_scope=0)%s",
			(int)pid, s, s == 1 ? ": only a process's ancestors may trace it" : "",
			s == 3 ? " after a reboot" : "");
	else if (e == EPERM)
		inj_err(err, n, "cannot attach to process %d: ptrace is not permitted (another tracer such as a "
			"debugger holds it, it belongs to another user, or a security policy forbids it)", (int)pid);
	else
		inj_err(err, n, "cannot attach to process %d: %s", (int)pid, strerror(e));
}

/* Stop every thread of in->pid; 0, or -1 with err set (none left stopped). */
static int inj_stop_all(struct rec_inject *in, char *err, size_t n)
{
	in->ntids = 0;
	for (int round = 0, added = 1; added && round < 100; round++) {
		added = 0;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)in->pid);
		DIR *d = opendir(path);
		if (!d) {
			inj_err(err, n, "no process %d to attach to", (int)in->pid);
			return -1;
		}
		struct dirent *de;
		while ((de = readdir(d))) {
			pid_t t = (pid_t)atoi(de->d_name);
			if (t <= 0 || inj_has(in, t))
				continue;
			if (ptrace(PTRACE_SEIZE, t, 0, 0) < 0) {
				int e = errno;
				if (e == ESRCH)
					continue; /* the thread ended */
				closedir(d);
				for (int i = 0; i < in->ntids; i++)
					ptrace(PTRACE_DETACH, in->tids[i], 0, 0);
				in->ntids = 0;
				inj_denied(in->pid, e, err, n);
				return -1;
			}
			ptrace(PTRACE_INTERRUPT, t, 0, 0);
			int st;
			if (waitpid(t, &st, __WALL) < 0 || !WIFSTOPPED(st))
				continue;
			if (in->ntids == in->cap) {
				in->cap = in->cap ? 2 * in->cap : 16;
				in->tids = xrealloc(in->tids, (size_t)in->cap * sizeof(*in->tids));
				in->sigs = xrealloc(in->sigs, (size_t)in->cap * sizeof(*in->sigs));
			}
			/* a signal stop (not our interrupt): keep the signal for later */
			int sig = (st >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(st);
			in->sigs[in->ntids] = sig == SIGSTOP || sig == SIGTRAP ? 0 : sig;
			in->tids[in->ntids++] = t;
			added = 1;
		}
		closedir(d);
	}
	if (!inj_has(in, in->pid)) {
		for (int i = 0; i < in->ntids; i++)
			ptrace(PTRACE_DETACH, in->tids[i], 0, 0);
		in->ntids = 0;
		inj_err(err, n, "no process %d to attach to (or its main thread has ended)", (int)in->pid);
		return -1;
	}
	return 0;
}

static void inj_let_go(struct rec_inject *in)
{
	for (int i = 0; i < in->ntids; i++)
		ptrace(PTRACE_DETACH, in->tids[i], 0, (void *)(intptr_t)in->sigs[i]);
	in->ntids = 0;
}

/* ------------------------------------------------------------------------
 * Calls in the target's main thread
 * --------------------------------------------------------------------- */

/* fn(args...) in the stopped main thread; its return value in *ret. */
static int inj_call(struct rec_inject *in, uint64_t fn, const uint64_t *a, int na, uint64_t *ret, char *err,
		    size_t n)
{
	pid_t t = in->pid;
	struct user_regs_struct saved, r;
	if (ptrace(PTRACE_GETREGS, t, 0, &saved) < 0) {
		inj_err(err, n, "cannot read the registers of process %d: %s", (int)t, strerror(errno));
		return -1;
	}
	r = saved;
	/* below the red zone, 16-byte aligned as after a call */
	uint64_t sp = ((saved.rsp - 1024) & ~15ull) - 8;
	if (ptrace(PTRACE_POKEDATA, t, (void *)sp, 0) < 0) {
		inj_err(err, n, "cannot write the stack of process %d: %s", (int)t, strerror(errno));
		return -1;
	}
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1; /* not in a system call: nothing to restart */
	unsigned long long *regs[6] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
	for (int i = 0; i < na && i < 6; i++)
		*regs[i] = a[i];
	if (ptrace(PTRACE_SETREGS, t, 0, &r) < 0 || ptrace(PTRACE_CONT, t, 0, 0) < 0) {
		inj_err(err, n, "cannot run a call in process %d: %s", (int)t, strerror(errno));
		ptrace(PTRACE_SETREGS, t, 0, &saved);
		return -1;
	}
	int rc = -1;
	for (;;) {
		int st;
		if (waitpid(t, &st, __WALL) < 0) {
			inj_err(err, n, "process %d: %s", (int)t, strerror(errno));
			return -1;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			inj_err(err, n, "process %d ended while stint attached to it", (int)t);
			return -1;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st);
		if ((st >> 16) == PTRACE_EVENT_STOP) { /* a group stop: go on */
			ptrace(PTRACE_CONT, t, 0, 0);
			continue;
		}
		if (sig == SIGSEGV) {
			struct user_regs_struct now;
			ptrace(PTRACE_GETREGS, t, 0, &now);
			if (now.rip == 0) {
				*ret = now.rax;
				rc = 0;
			} else {
				inj_err(err, n, "a call stint made in process %d faulted at 0x%llx", (int)t, now.rip);
			}
			break;
		}
		/* the program's own signal: delivered once stint lets go */
		for (int i = 0; i < in->ntids; i++)
			if (in->tids[i] == t && !in->sigs[i] && sig != SIGSTOP && sig != SIGTRAP)
				in->sigs[i] = sig;
		ptrace(PTRACE_CONT, t, 0, 0);
	}
	ptrace(PTRACE_SETREGS, t, 0, &saved);
	return rc;
}

static int inj_write(pid_t t, uint64_t at, const void *data, size_t len)
{
	struct iovec l = {(void *)data, len}, r = {(void *)(uintptr_t)at, len};
	if (process_vm_writev(t, &l, 1, &r, 1, 0) == (ssize_t)len)
		return 0;
	for (size_t i = 0; i < len; i += 8) { /* (a page only ptrace may write) */
		uint64_t w = 0;
		memcpy(&w, (const char *)data + i, len - i < 8 ? len - i : 8);
		if (ptrace(PTRACE_POKEDATA, t, (void *)(uintptr_t)(at + i), (void *)(uintptr_t)w) < 0)
			return -1;
	}
	return 0;
}

/* Where sym of stint's own C library lies in the target's (the same file). */
static int inj_libc_syms(struct rec_inject *in, char *err, size_t n)
{
	Dl_info di;
	/* the C library's own functions, not an interceptor's (a sanitizer's) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *mine = libc ? dlsym(libc, "dlopen") : NULL;
	if (!mine || !dladdr(mine, &di) || !di.dli_fname) {
		inj_err(err, n, "cannot find stint's own C library");
		if (libc)
			dlclose(libc);
		return -1;
	}
	char *path = realpath(di.dli_fname, NULL);
	struct stat mine_st;
	if (!path || stat(path, &mine_st) < 0) {
		free(path);
		inj_err(err, n, "cannot find stint's own C library");
		return -1;
	}
	char mp[64];
	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)in->pid);
	FILE *f = fopen(mp, "r");
	uint64_t base = 0;
	char line[4352];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off, ino;
		char perm[8], file[4096] = "";
		unsigned dmaj, dmin;
		if (sscanf(line, "%llx-%*x %7s %llx %x:%x %llu %4095s", &lo, perm, &off, &dmaj, &dmin, &ino, file) < 6)
			continue;
		if (off == 0 && ino == (unsigned long long)mine_st.st_ino && file[0] == '/') {
			base = lo;
			break;
		}
	}
	if (f)
		fclose(f);
	free(path);
	if (!base) {
		inj_err(err, n, "process %d does not use stint's C library (%s): it cannot be attached to from here",
			(int)in->pid, di.dli_fname);
		return -1;
	}
	uint64_t mybase = (uint64_t)(uintptr_t)di.dli_fbase;
	int ok = 0;
	const char *names[] = {"dlopen", "dlsym", "dlclose", "mmap", "munmap"};
	uint64_t *out[] = {&in->a_dlopen, &in->a_dlsym, &in->a_dlclose, &in->a_mmap, &in->a_munmap};
	for (int i = 0; i < 5; i++) {
		void *s = dlsym(libc, names[i]);
		Dl_info si;
		if (!s || !dladdr(s, &si) || si.dli_fbase != di.dli_fbase) {
			inj_err(err, n, "cannot find %s in stint's C library", names[i]);
			return -1;
		}
		*out[i] = base + ((uint64_t)(uintptr_t)s - mybase);
	}
	ok = 1;
	dlclose(libc);
	return ok ? 0 : -1;
}

/* A string into the scratch page at offset *off; its address. */
static uint64_t inj_string(struct rec_inject *in, size_t *off, const char *s)
{
	size_t l = strlen(s) + 1;
	if (*off + l > in->scratch_len || inj_write(in->pid, in->scratch + *off, s, l) < 0)
		return 0;
	uint64_t a = in->scratch + *off;
	*off += (l + 15) & ~(size_t)15;
	return a;
}

/* ------------------------------------------------------------------------
 * The frames open in each thread
 * --------------------------------------------------------------------- */

/* Whether a module calls the probes (imports __cyg_profile_func_enter). */
static int inj_module_probed(const char *path)
{
	return rec_elf_names(path, "__cyg_profile_func_enter", 1) == 1;
}

/*
 * Unwind every stopped thread and write "tid addr..." lines (the
 * instrumented functions open, outermost first) to spool/attach.frames.
 */
static void inj_write_frames(struct rec_inject *in, const char *spool)
{
	char mp[64];
	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)in->pid);
	size_t mlen;
	char *maps = util_read_file(mp, &mlen);
	struct sym_proc *sp = maps ? sym_proc_open(maps, mlen) : NULL;
	if (!sp) {
		free(maps);
		return;
	}
	uint32_t nm;
	const struct fmt_module *mods = sym_proc_modules(sp, &nm);
	int8_t *probed = xcalloc(nm + 1, 1);
	uint8_t *stack = xmalloc(INJ_STACK_COPY);
	char *path = xasprintf("%s/attach.frames", spool);
	FILE *out = fopen(path, "w");
	for (int k = 0; out && k < in->ntids; k++) {
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, in->tids[k], 0, &r) < 0)
			continue;
		uint64_t regs[ARCH_PERF_NREGS] = ARCH_PERF_REGS_FROM_PTRACE(r);
		/* the stack from its pointer up to its top (or the copy's size) */
		uint64_t base = r.rsp & ~4095ull;
		size_t got = 0, skip = (size_t)(r.rsp - base);
		while (got < INJ_STACK_COPY) {
			struct iovec l = {stack + got, 4096}, rv = {(void *)(uintptr_t)(base + got), 4096};
			if (process_vm_readv(in->tids[k], &l, 1, &rv, 1, 0) != 4096)
				break;
			got += 4096;
		}
		got = got > skip ? got - skip : 0;
		uint64_t pcs[INJ_MAX_FRAMES], open[INJ_MAX_FRAMES];
		int trunc = 0, nopen = 0;
		int np = got ? sym_proc_unwind(sp, in->tids[k], regs, stack + skip, got, pcs, INJ_MAX_FRAMES, &trunc) : 0;
		for (int i = 0; i < np; i++) {
			uint64_t pc = i ? pcs[i] - 1 : pcs[i]; /* a return address: its call */
			int m = sym_proc_module_of(sp, pc);
			if (m < 0)
				continue;
			if (!probed[m])
				probed[m] = (int8_t)(mods[m].path && inj_module_probed(mods[m].path) ? 1 : -1);
			struct sym_info si;
			if (probed[m] != 1 || sym_proc_lookup(sp, pc, &si) < 0)
				continue;
			/* (_start, from crt1.o, is in the program but calls no probe) */
			if (si.start && nopen < INJ_MAX_FRAMES && !(si.name && strcmp(si.name, "_start") == 0))
				open[nopen++] = si.start;
			sym_info_free(&si);
		}
		fprintf(out, "%d", (int)in->tids[k]);
		for (int i = nopen; i-- > 0;)
			fprintf(out, " %llx", (unsigned long long)open[i]);
		fputc('\n', out);
	}
	if (out)
		fclose(out);
	free(path);
	free(stack);
	free(probed);
	sym_proc_close(sp);
	free(maps);
}

/* ------------------------------------------------------------------------
 * Attach and detach
 * --------------------------------------------------------------------- */

int rec_inject_attach(struct rec_inject *in, pid_t pid, const char *lib, const char *spool,
		      const char *settings, char *err, size_t n)
{
	memset(in, 0, sizeof(*in));
	in->pid = pid;
	if (inj_stop_all(in, err, n) < 0)
		return -1;
	if (inj_libc_syms(in, err, n) < 0)
		goto fail;
	inj_write_frames(in, spool);
	uint64_t ret;
	in->scratch_len = 16384;
	uint64_t mm[6] = {0, in->scratch_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0};
	if (inj_call(in, in->a_mmap, mm, 6, &ret, err, n) < 0)
		goto fail;
	if (ret == (uint64_t)MAP_FAILED || !ret) {
		inj_err(err, n, "process %d could not map a page for stint", (int)pid);
		goto fail;
	}
	in->scratch = ret;
	size_t off = 0;
	uint64_t s_lib = inj_string(in, &off, lib), s_att = inj_string(in, &off, "stint_attach"),
		 s_db = inj_string(in, &off, "stint_detach_begin"), s_de = inj_string(in, &off, "stint_detach_end"),
		 s_set = inj_string(in, &off, settings);
	if (!s_lib || !s_att || !s_db || !s_de || !s_set) {
		inj_err(err, n, "cannot write into process %d", (int)pid);
		goto fail_unmap;
	}
	uint64_t dl[2] = {s_lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND};
	if (inj_call(in, in->a_dlopen, dl, 2, &in->handle, err, n) < 0)
		goto fail_unmap;
	if (!in->handle) {
		inj_err(err, n, "process %d could not load %s", (int)pid, lib);
		goto fail_unmap;
	}
	uint64_t fa = 0;
	uint64_t q[2] = {in->handle, s_att};
	if (inj_call(in, in->a_dlsym, q, 2, &fa, err, n) < 0)
		goto fail_close;
	q[1] = s_db;
	if (inj_call(in, in->a_dlsym, q, 2, &in->a_detach_begin, err, n) < 0)
		goto fail_close;
	q[1] = s_de;
	if (inj_call(in, in->a_dlsym, q, 2, &in->a_detach_end, err, n) < 0)
		goto fail_close;
	if (!fa || !in->a_detach_begin || !in->a_detach_end) {
		inj_err(err, n, "%s lacks stint's entry points", lib);
		goto fail_close;
	}
	uint64_t st[1] = {s_set};
	if (inj_call(in, fa, st, 1, &ret, err, n) < 0)
		goto fail_close;
	if ((int)ret != 0) {
		/* nothing was redirected: the recording is ended and unloaded */
		uint64_t none[1] = {0};
		inj_call(in, in->a_detach_end, none, 0, &fa, err, n);
		inj_err(err, n, (int)ret == -3 ? "process %d calls no __cyg_profile_func_enter: it was not built with "
					       "-finstrument-functions (-m sample -p PID samples any process)"
					     : "the runtime could not start recording in process %d",
			(int)pid);
		goto fail_close;
	}
	inj_let_go(in);
	return 0;
fail_close: {
	uint64_t h[1] = {in->handle};
	char e2[64];
	inj_call(in, in->a_dlclose, h, 1, &ret, e2, sizeof(e2));
}
fail_unmap: {
	uint64_t um[2] = {in->scratch, in->scratch_len};
	char e2[64];
	inj_call(in, in->a_munmap, um, 2, &ret, e2, sizeof(e2));
}
fail:
	inj_let_go(in);
	return -1;
}

/* Whether a stopped thread is inside the runtime's code (a probe). */
static int inj_in_runtime(struct rec_inject *in, pid_t t)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t, 0, &r) < 0)
		return 0;
	return r.rip >= in->lib_lo && r.rip < in->lib_hi;
}

static void inj_lib_range(struct rec_inject *in, const char *lib)
{
	char mp[64], line[4352];
	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)in->pid);
	FILE *f = fopen(mp, "r");
	in->lib_lo = UINT64_MAX;
	in->lib_hi = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char file[4096] = "";
		if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %4095s", &lo, &hi, file) == 3 && strcmp(file, lib) == 0) {
			if (lo < in->lib_lo)
				in->lib_lo = lo;
			if (hi > in->lib_hi)
				in->lib_hi = hi;
		}
	}
	if (f)
		fclose(f);
}

int rec_inject_detach(struct rec_inject *in, const char *lib, char *err, size_t n)
{
	uint64_t ret, none[1] = {0};
	if (inj_stop_all(in, err, n) < 0)
		return -1;
	if (inj_call(in, in->a_detach_begin, none, 0, &ret, err, n) < 0) {
		inj_let_go(in);
		return -1;
	}
	/* no probe starts from now on; let those in one finish (a thread's
	 * instruction pointer in the runtime, or its state busy: in a system
	 * call the runtime makes) */
	inj_lib_range(in, lib);
	for (int tries = 0;; tries++) {
		int inside = 0;
		for (int i = 0; i < in->ntids; i++)
			inside |= inj_in_runtime(in, in->tids[i]);
		if (!inside) {
			if (inj_call(in, in->a_detach_end, none, 0, &ret, err, n) < 0) {
				inj_let_go(in);
				return -1;
			}
			inside = (int)ret == 1;
		}
		if (!inside)
			break;
		inj_let_go(in);
		if (tries == 50) {
			inj_err(err, n, "a thread of process %d stays inside stint's probe: its runtime is left "
					"loaded (not recording)", (int)in->pid);
			return -1;
		}
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
		if (inj_stop_all(in, err, n) < 0)
			return -1;
	}
	int rc = 0;
	uint64_t h[1] = {in->handle};
	if (!rc && inj_call(in, in->a_dlclose, h, 1, &ret, err, n) < 0)
		rc = -1;
	uint64_t um[2] = {in->scratch, in->scratch_len};
	if (!rc && inj_call(in, in->a_munmap, um, 2, &ret, err, n) < 0)
		rc = -1;
	inj_let_go(in);
	return rc;
}

void rec_inject_free(struct rec_inject *in)
{
	free(in->tids);
	free(in->sigs);
	in->tids = NULL;
	in->sigs = NULL;
}
