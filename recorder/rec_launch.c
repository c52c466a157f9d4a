/*
 * rec_launch.c - finding, checking, starting and waiting for the profiled
 * program; the TSC clock facts the data file records.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <time.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder.h"
#include "../arch/arch.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"

char *rec_find_program(const char *name)
{
	struct stat st;
	if (strchr(name, '/')) {
		if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0)
			return xstrdup(name);
		return NULL;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchrnul(path, ':');
		char *cand = colon == path ? xasprintf("./%s", name)
					   : xasprintf("%.*s/%s", (int)(colon - path), path, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		path = *colon ? colon + 1 : colon;
	}
	return NULL;
}

static struct rlimit rec_fd_limit_given;
static int rec_fd_limit_raised;

void rec_raise_fd_limit(void)
{
	struct rlimit rl;
	if (rec_fd_limit_raised || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rec_fd_limit_given = rl;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		rec_fd_limit_raised = 1;
}

int rec_program_missing(const char *name, char *msg, size_t len)
{
	struct stat st;
	/* a name with a slash is that file; a bare name is looked up in PATH,
	 * where a directory or a file without x is skipped as execvp does */
	if (!strchr(name, '/') || stat(name, &st) < 0) {
		snprintf(msg, len, "cannot find program '%s'%s", name, strchr(name, '/') ? "" : " in PATH");
		return 127;
	}
	if (S_ISDIR(st.st_mode))
		snprintf(msg, len, "'%s' is a directory, not a program", name);
	else if (!S_ISREG(st.st_mode))
		snprintf(msg, len, "'%s' is not a regular file, not a program", name);
	else
		snprintf(msg, len, "'%s' is not executable (chmod +x it, or name its interpreter: "
			 "stint record -- sh %s)", name, name);
	return 126;
}

int rec_elf_names(const char *path, const char *name, int imported)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int found = -1;
	if (e && elf_kind(e) == ELF_K_ELF) {
		found = 0;
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && (imported || sh.sh_type != SHT_SYMTAB)))
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; data && i < n; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(data, (int)i, &sym))
					break;
				const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
				if (nm && (!imported || sym.st_shndx == SHN_UNDEF) && strcmp(nm, name) == 0) {
					found = 1;
					break;
				}
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

int rec_is_instrumented(const char *path)
{
	return rec_elf_names(path, "__cyg_profile_func_enter", 0);
}

/* The dynamic linker run as a program (`ld-linux-x86-64.so.2 ./app`): no
 * PT_INTERP, being the interpreter, but it loads the program and honours
 * LD_PRELOAD. Told by its DT_SONAME. */
static int rec_is_dynamic_linker(Elf *e)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_SONAME)
				continue;
			const char *so = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			return so && (strncmp(so, "ld-linux", 8) == 0 || strncmp(so, "ld64.so", 7) == 0);
		}
	}
	return 0;
}

int rec_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	int res = -1;
	size_t n;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		res = 1;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				res = 0;
		}
		if (res == 1 && rec_is_dynamic_linker(e))
			res = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return res;
}

const char *rec_foreign_loader(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	const char *why = NULL;
	unsigned char ident[EI_NIDENT];
	if (pread(fd, ident, sizeof(ident), 0) == (ssize_t)sizeof(ident) && memcmp(ident, ELFMAG, SELFMAG) == 0 &&
	    ident[EI_CLASS] == ELFCLASS32) {
		close(fd);
		return "a 32-bit program";
	}
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			char interp[128];
			size_t l = 0;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_INTERP)
				continue;
			l = ph.p_filesz < sizeof(interp) - 1 ? ph.p_filesz : sizeof(interp) - 1;
			if (pread(fd, interp, l, (off_t)ph.p_offset) != (ssize_t)l)
				break;
			interp[l] = 0;
			const char *base = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
			if (strncmp(base, "ld-linux", 8) != 0 && strncmp(base, "ld64.so", 7) != 0)
				why = "loaded by another C library's dynamic linker";
			break;
		}
	if (e)
		elf_end(e);
	close(fd);
	return why;
}

static volatile pid_t rec_target;
static volatile sig_atomic_t rec_interrupts; /* SIGINT/SIGTERM seen while waiting */
static volatile sig_atomic_t rec_stop_sig;   /* the latest of them (recorder.h: stopped_early) */

/* The parent of pid from /proc/PID/stat, -1 if it is gone: async-signal-safe
 * (open, read and close, no stdio), for the signal handler. */
static pid_t rec_parent_of(pid_t pid)
{
	char path[40] = "/proc/", digits[12], buf[256];
	size_t l = 6;
	int n = 0;
	unsigned u = (unsigned)pid;
	do
		digits[n++] = (char)('0' + u % 10);
	while ((u /= 10) && n < (int)sizeof(digits));
	while (n)
		path[l++] = digits[--n];
	memcpy(path + l, "/stat", 6);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, sizeof(buf));
	close(fd);
	/* "pid (comm) S ppid ...": the name may hold anything, ')' too */
	ssize_t q = -1;
	for (ssize_t i = 0; i < r; i++)
		if (buf[i] == ')')
			q = i;
	if (q < 0 || q + 4 >= r)
		return -1;
	pid_t pp = 0;
	for (q += 4; q < r && buf[q] >= '0' && buf[q] <= '9'; q++)
		pp = pp * 10 + (buf[q] - '0');
	return pp;
}

enum rec_sender { REC_FROM_OUTSIDE, REC_FROM_TERMINAL, REC_FROM_PROGRAM };

/*
 * Who sent a signal to stint.  The kernel (SI_KERNEL): the terminal's
 * Ctrl-C, Ctrl-\ or hangup, which its whole foreground process group got.
 * A process (kill, sigqueue, tgkill): the program, or a process it
 * started, when walking up the sender's parents reaches the program or
 * stint (the program's orphans come to stint, the subreaper): a kill() of
 * its own process group, which the program got as well.  stint itself
 * (SIGPIPE, SIGXFSZ of its own writes), and what is no process's (its
 * timers, asynchronous I/O) count as the program's: never meant for it.
 */
static enum rec_sender rec_sender_of(const siginfo_t *si)
{
	if (!si)
		return REC_FROM_OUTSIDE;
	if (si->si_code == SI_KERNEL)
		return REC_FROM_TERMINAL;
	if (si->si_code != SI_USER && si->si_code != SI_QUEUE && si->si_code != SI_TKILL)
		return REC_FROM_PROGRAM;
	pid_t self = getpid(), t = rec_target, p = si->si_pid;
	/* (a pid of 0: a sender outside stint's pid namespace) */
	for (int depth = 0; p > 1 && depth < 1024; depth++) {
		if (p == self || p == t)
			return REC_FROM_PROGRAM;
		p = rec_parent_of(p);
	}
	return REC_FROM_OUTSIDE;
}

/*
 * A signal reached stint while it records: stint stands in for the
 * program, so one another process sent to stint alone is passed on
 * (sigqueue's value with it), whatever the signal.  One the program's
 * process group got as well is not: the terminal's (Ctrl-C reaches the
 * foreground group, the program included, unless the program has left
 * stint's group), and one the program sent to its group.  stint itself
 * never dies of one.  With the program gone, a SIGINT or SIGTERM from
 * outside tells rec_wait() to stop waiting for what it left running.
 */
static void rec_forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int e = errno;
	enum rec_sender from = rec_sender_of(si);
	if ((sig == SIGINT || sig == SIGTERM) && from != REC_FROM_PROGRAM) {
		rec_interrupts++;
		rec_stop_sig = sig | (from == REC_FROM_TERMINAL ? REC_STOP_TERMINAL : 0);
	}
	pid_t t = rec_target;
	if (t > 0 && from == REC_FROM_OUTSIDE) {
		if (si && si->si_code == SI_QUEUE)
			sigqueue(t, sig, si->si_value);
		else
			kill(t, sig);
	} else if (t > 0 && from == REC_FROM_TERMINAL && getpgid(t) != getpgrp() &&
		   (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)) {
		kill(t, sig);
	}
	errno = e;
}

/* Whether sig's default action ends a process, and stint may catch it:
 * not the faults of its own code (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS, SIGABRT: those must end it), nor SIGKILL and SIGSTOP. */
static int rec_catchable(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGINT: case SIGQUIT: case SIGTERM: case SIGUSR1: case SIGUSR2:
	case SIGPIPE: case SIGALRM: case SIGVTALRM: case SIGPROF: case SIGXCPU: case SIGXFSZ:
	case SIGIO:
#ifdef SIGSTKFLT
	case SIGSTKFLT:
#endif
#ifdef SIGPWR
	case SIGPWR:
#endif
		return 1;
	}
	return sig >= SIGRTMIN && sig <= SIGRTMAX;
}

void rec_attached_signals(void (*stop)(int), struct sigaction *old)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		if (!rec_catchable(sig) || sigaction(sig, NULL, &old[sig]) < 0)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = SA_RESTART;
		if (sig == SIGPIPE || sig == SIGXFSZ)
			sa.sa_handler = SIG_IGN; /* stint's own writes: they fail instead */
		else if (!(old[sig].sa_flags & SA_SIGINFO) && old[sig].sa_handler == SIG_IGN)
			continue; /* ignored at start (nohup): stays so */
		else
			sa.sa_handler = stop;
		sigaction(sig, &sa, NULL);
	}
}

void rec_attached_signals_end(const struct sigaction *old)
{
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (rec_catchable(sig))
			sigaction(sig, &old[sig], NULL);
}

int rec_spawn(const char *path, char *const argv[], char *const env_add[], struct rec_child *c,
	      char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	int go[2] = {-1, -1};
	if (c->hold && pipe2(go, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* who the runtime's processes watch, to stop recording should we be
	 * killed: our pid, start time (a reused pid has another) and pid
	 * namespace (fmt_spool.h) */
	char *recorder = NULL;
	if (env_add) {
		size_t slen;
		char *text = util_read_file("/proc/self/stat", &slen);
		const char *p = text ? strrchr(text, ')') : NULL;
		for (int field = 2; p && field < 22; field++) /* to the space before field 22 */
			p = strchr(p + 1, ' ');
		struct stat ns;
		if (p && stat("/proc/self/ns/pid", &ns) == 0)
			recorder = xasprintf("%d:%llu:%llu", (int)getpid(), strtoull(p + 1, NULL, 10),
					     (unsigned long long)ns.st_ino);
		free(text);
	}
	/* the handlers before the program can run: a Ctrl-C typed as soon as
	 * it starts must not kill stint.  A handler, not SIG_IGN: the child's
	 * return to the default actions comes with exec, so the program gets
	 * the actions it would have had (SIGPIPE's too: stint's own writes to
	 * a closed pipe fail with EPIPE instead) */
	rec_target = 0;
	rec_interrupts = 0;
	rec_stop_sig = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = rec_forward;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* one that stint was started with ignored (nohup's SIGHUP; SIGINT and
	 * SIGQUIT of a command a shell runs in the background) stays ignored,
	 * for stint and the program: a handler here would give the program the
	 * default action at exec, and nohup's program would die of a hangup */
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction old;
		if (!rec_catchable(sig) || sigaction(sig, NULL, &old) < 0 ||
		    (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN))
			continue;
		sigaction(sig, &sa, NULL);
	}
	/* started with SIGCHLD ignored (a shell's `trap '' CHLD`, a daemon
	 * that ignores it), stint's children would be reaped by the kernel,
	 * and waitpid found no program to take the exit status of (130 was
	 * reported for /bin/false): stint takes the default, the program gets
	 * the disposition it was given */
	struct sigaction chld;
	int chld_back = sigaction(SIGCHLD, NULL, &chld) == 0 &&
			((!(chld.sa_flags & SA_SIGINFO) && chld.sa_handler == SIG_IGN) || (chld.sa_flags & SA_NOCLDWAIT));
	if (chld_back) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		sigaction(SIGCHLD, &dfl, NULL);
	}
	c->wall_start = util_wall_ns();
	c->mono_start = util_mono_ns();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		if (chld_back)
			sigaction(SIGCHLD, &chld, NULL);
		if (rec_fd_limit_raised)
			setrlimit(RLIMIT_NOFILE, &rec_fd_limit_given);
		for (int i = 0; env_add && env_add[i]; i++) {
			char *eq = strchr(env_add[i], '=');
			if (!eq)
				continue;
			char *name = strndup(env_add[i], (size_t)(eq - env_add[i]));
			const char *val = eq + 1;
			const char *old = getenv(name);
			char cwd[4096];
			if (strcmp(name, "LD_PRELOAD") == 0 && old && *old) {
				char *both = xasprintf("%s:%s", val, old);
				setenv(name, both, 1);
			} else if (strcmp(name, FMT_ENV_SPOOL) == 0 && val[0] != '/' &&
				   getcwd(cwd, sizeof(cwd))) {
				/* absolute: the program may chdir, and processes it
				 * starts elsewhere inherit the variable */
				char *abs = xasprintf("%s/%s", cwd, val);
				setenv(name, abs, 1);
			} else {
				setenv(name, val, 1);
			}
			free(name);
		}
		if (recorder)
			setenv(FMT_ENV_RECORDER, recorder, 1);
		if (c->hold) {
			char b;
			close(go[1]);
			while (read(go[0], &b, 1) < 0 && errno == EINTR)
				;
		}
		execv(path, argv);
		int e = errno;
		if (e == ENOEXEC) { /* a script without "#!": the shell runs it, as execvp does */
			int n = 0;
			while (argv[n])
				n++;
			char **sh = calloc((size_t)n + 2, sizeof(*sh));
			if (sh) {
				sh[0] = (char *)"sh";
				sh[1] = (char *)path;
				for (int i = 1; i <= n; i++)
					sh[i + 1] = argv[i];
				execv("/bin/sh", sh);
			}
		}
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	rec_target = pid; /* signals for the program go to it from now on */
	close(pfd[1]);
	free(recorder);
	if (c->hold) {
		close(go[0]);
		c->go_fd = go[1];
		c->pid = pid;
		c->err_fd = pfd[0];
		return 0;
	}
	return rec_spawn_finish(c, pid, pfd[0], path, err, errlen);
}

void rec_release(struct rec_child *c)
{
	if (c->go_fd >= 0) {
		if (write(c->go_fd, "g", 1) < 0)
			kill(c->pid, SIGKILL);
		close(c->go_fd);
		c->go_fd = -1;
	}
}

/* The program a script's #! line names (without its arguments), or 0. */
static int script_interpreter(const char *path, char *buf, size_t n)
{
	char head[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd >= 0 ? read(fd, head, sizeof(head) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r < 3 || head[0] != '#' || head[1] != '!')
		return 0;
	head[r] = 0;
	char *p = head + 2 + strspn(head + 2, " \t");
	size_t len = strcspn(p, " \t\r\n");
	if (!len || len >= n)
		return 0;
	memcpy(buf, p, len);
	buf[len] = 0;
	return 1;
}

int rec_spawn_finish(struct rec_child *c, pid_t pid, int errfd, const char *path, char *err,
		     size_t errlen)
{
	int e = 0;
	ssize_t r;
	int pfd[2] = {errfd, -1};
	do
		r = read(pfd[0], &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	if (r == sizeof(e)) {
		waitpid(pid, NULL, 0);
		char interp[256];
		if (e == ENOENT && script_interpreter(path, interp, sizeof(interp)))
			/* the file is there: what is missing is its #! line's */
			snprintf(err, errlen, "cannot run '%s': its interpreter '%s' (its #! line) was not found",
				 path, interp);
		else
			snprintf(err, errlen, "cannot run '%s': %s", path, strerror(e));
		c->exec_errno = e ? e : EINVAL;
		return -1;
	}
	c->pid = pid;
	rec_target = pid;
	return 0;
}

/* The directory that holds the spool dir ("/proc/self/fd/N"), for messages. */
static const char *spool_parent(const char *dir)
{
	static char shown[4096];
	if (!shown[0]) {
		ssize_t n = readlink(dir, shown, sizeof(shown) - 1);
		shown[n > 0 ? n : 0] = 0;
		char *slash = strrchr(shown, '/');
		if (slash)
			*(slash == shown ? slash + 1 : slash) = 0;
		else
			snprintf(shown, sizeof(shown), ".");
	}
	return shown;
}

/*
 * Say at once, while the program runs on, when a thread's recording stopped
 * (the disk filled, or no file descriptor was free): once per buffer file,
 * the pass that first sees its flags (the file is finished from then on),
 * and a full disk once per recording (one line for a program of many
 * threads).  Only a header whose magic is there names its thread: the
 * runtime writes the magic last.
 */
static int spool_warned_nospace;

static void spool_warn_stopped(const char *dir, int fd, uint32_t flags)
{
	if (!(flags & (FMT_SPOOL_NOSPACE | FMT_SPOOL_NOFILES | FMT_SPOOL_NOACCESS | FMT_SPOOL_SECCOMP |
		       FMT_SPOOL_SHAREDTLS)))
		return;
	int32_t tid = 0;
	if (pread(fd, &tid, sizeof(tid), offsetof(struct fmt_spool_hdr, tid)) != sizeof(tid))
		tid = 0;
	if (flags & FMT_SPOOL_SHAREDTLS)
		warn("thread %d made a child with clone(CLONE_VM) that shares its thread-local storage: its "
		     "recording stopped there (the program runs on; what was recorded is kept)", (int)tid);
	else if (flags & FMT_SPOOL_SECCOMP)
		warn("the program restricted its system calls (seccomp): thread %d stopped recording when its "
		     "buffer was full (the program runs on; what was recorded is kept)", (int)tid);
	else if (flags & FMT_SPOOL_NOACCESS)
		warn("the program can no longer open stint's spool (it gave up the rights to reach it, setuid): "
		     "thread %d stopped recording (the program runs on; what was recorded is kept)", (int)tid);
	else if (flags & FMT_SPOOL_NOFILES)
		warn("the program has no file descriptor free (its RLIMIT_NOFILE is used up and could not be "
		     "raised): thread %d stopped recording (the program runs on; what was recorded is kept)",
		     (int)tid);
	else if (!spool_warned_nospace++)
		warn("the disk is full: no room in '%s' for the recording; thread %d stopped recording (the "
		     "program runs on; what was recorded is kept)", spool_parent(dir), (int)tid);
}

/*
 * Page in (prefault), ahead of each thread, the next chunk of its spool
 * buffer, writable: the kernel zero-fills a page of a new file region when
 * it first enters the page cache, and the file system prepares its blocks
 * when a page is first made writable (ext4's page_mkwrite); doing both
 * here costs the recorder's CPU instead of the program's, whose own
 * MADV_POPULATE_WRITE (runtime/rt.c) then finds every page ready.  Making
 * a page writable never changes its bytes, so this cannot disturb what the
 * runtime writes.  Once per chunk of each file; each pass also warns of
 * threads that stopped recording.
 *
 * A pass runs every 2 ms.  A thread that ended (or stopped) is finished:
 * its file is not opened again, known by its inode from the directory
 * entry.  Before, every pass opened and read every buffer file the run had
 * made: a shell script of 500 short commands (1000 processes) took 19 s
 * instead of 0.7, the recorder's passes taking a CPU from the program.
 */
struct spool_file {
	ino_t ino;     /* (the spool is one directory: one device) */
	uint64_t off;  /* the chunk last prefaulted */
	int used;
	int finished;  /* ended or stopped: no chunk to come */
};

static struct spool_file *spool_files;
static size_t spool_files_cap, spool_files_n;

/* The entry of the file with inode ino, made when new (pointers to entries
 * last until the next call). */
static struct spool_file *spool_file(ino_t ino)
{
	if (2 * (spool_files_n + 1) > spool_files_cap) {
		size_t cap = spool_files_cap ? 2 * spool_files_cap : 64;
		struct spool_file *t = xcalloc(cap, sizeof(*t));
		for (size_t i = 0; i < spool_files_cap; i++)
			if (spool_files[i].used) {
				size_t h = (size_t)(spool_files[i].ino * 0x9E3779B97F4A7C15ull) & (cap - 1);
				while (t[h].used)
					h = (h + 1) & (cap - 1);
				t[h] = spool_files[i];
			}
		free(spool_files);
		spool_files = t;
		spool_files_cap = cap;
	}
	size_t h = (size_t)(ino * 0x9E3779B97F4A7C15ull) & (spool_files_cap - 1);
	while (spool_files[h].used && spool_files[h].ino != ino)
		h = (h + 1) & (spool_files_cap - 1);
	if (!spool_files[h].used) {
		spool_files[h] = (struct spool_file){.ino = ino, .used = 1};
		spool_files_n++;
	}
	return &spool_files[h];
}

static void prefault_chunk(int fd, uint64_t off, uint64_t size)
{
	if (posix_fallocate(fd, (off_t)off, (off_t)size) != 0)
		return; /* the disk is full: the runtime finds it out itself */
	/* one batched read of the zero pages (readahead's order), then the
	 * write faults; a file truncated meanwhile gives EFAULT, no signal */
	readahead(fd, (off_t)off, size);
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return;
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
	madvise(m, size, MADV_POPULATE_WRITE);
	munmap(m, size);
}

/* One buffer file: prefault its next chunk, mark it finished when its
 * thread ended or stopped (warned of then).  0 when the file is finished
 * or gone, 1 while it may grow. */
static int prefault_file(const char *dir, const char *name, int prefault)
{
	char *path = xasprintf("%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	free(path);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE || errno == EINTR;
	struct fmt_spool_hdr h; /* (up to nused: the table after it is not needed) */
	size_t want = offsetof(struct fmt_spool_hdr, used);
	struct stat st;
	if (fstat(fd, &st) < 0 || pread(fd, &h, want, 0) != (ssize_t)want) {
		close(fd);
		return 1; /* (being made: its header comes) */
	}
	struct spool_file *f = spool_file(st.st_ino);
	if (f->finished) {
		close(fd);
		return 0;
	}
	if (memcmp(h.magic, FMT_SPOOL_MAGIC, 8) == 0 &&
	    (h.flags & (FMT_SPOOL_ENDED | FMT_SPOOL_NOSPACE | FMT_SPOOL_FULL | FMT_SPOOL_ORPHANED |
			FMT_SPOOL_NOFILES | FMT_SPOOL_NOACCESS | FMT_SPOOL_SECCOMP | FMT_SPOOL_SHAREDTLS))) {
		spool_warn_stopped(dir, fd, h.flags);
		f->finished = 1;
	} else if (prefault && h.nused < FMT_SPOOL_MAX_CHUNKS - 2) {
		uint64_t off = FMT_SPOOL_DATA_OFF;
		for (uint32_t i = 0; i < h.nused; i++)
			off += fmt_spool_chunk_size(i);
		/* the chunk after the one being filled, once the thread has
		 * written more than a page: most threads of a program that
		 * makes many write a few records, and 2,000 threads started at
		 * once had 1 GB of next chunks allocated and zeroed for nothing.
		 * A chunk being filled that is not in the file yet is waited
		 * for (a thread that can no longer open its file: the runtime's
		 * rt_map_chunk_grown), and made at once; the first chunk is
		 * always the runtime's own. */
		uint64_t size = fmt_spool_chunk_size(h.nused), next = fmt_spool_chunk_size(h.nused + 1);
		int active = h.nused > 0; /* past its first chunk: a whole chunk ahead, always */
		if (h.nused && (uint64_t)st.st_size < off + size) {
			next = size;
		} else {
			/* in its first chunk: once past its first page of records
			 * (a thread that can no longer open its file waits for
			 * this one: the lead must be most of the chunk) */
			uint8_t probe[64] = {0};
			if (!active && pread(fd, probe, sizeof(probe), (off_t)(off + 4096)) == (ssize_t)sizeof(probe))
				for (size_t i = 0; i < sizeof(probe); i++)
					active |= probe[i];
			off += size;
		}
		if (active && f->off != off) {
			f->off = off;
			prefault_chunk(fd, off, next);
		}
	}
	close(fd);
	return !f->finished;
}

/*
 * The buffers still being written, by name: the directory is read once,
 * then inotify says which files were made since.  Reading the whole
 * directory at every pass cost time in the number of files the run had
 * made, not the number of threads alive: a program that starts threads
 * one after the other (32,000 of them, 64,000 files) spent 2 of its 2
 * minutes in the kernel's readdir on the recorder's CPU.  Where inotify
 * cannot be had, or its queue overflowed, the directory is read again.
 */
static struct {
	int fd;         /* inotify; -1: none, read the directory each pass */
	int started;
	char **names;   /* buffers not known finished */
	size_t n, cap;
} spool_live;

static void spool_live_add(const char *name)
{
	size_t l = strlen(name);
	if (l < 5 || strcmp(name + l - 4, ".buf") != 0)
		return;
	for (size_t i = 0; i < spool_live.n; i++)
		if (strcmp(spool_live.names[i], name) == 0)
			return;
	if (spool_live.n == spool_live.cap) {
		spool_live.cap = spool_live.cap ? 2 * spool_live.cap : 64;
		spool_live.names = xrealloc(spool_live.names, spool_live.cap * sizeof(*spool_live.names));
	}
	spool_live.names[spool_live.n++] = xstrdup(name);
}

/* Every buffer of the directory not known finished into spool_live. */
static void spool_live_read_dir(const char *dir)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	struct dirent *de;
	while ((de = readdir(dh))) {
		size_t l = strlen(de->d_name);
		if (l >= 5 && strcmp(de->d_name + l - 4, ".buf") == 0 &&
		    (!de->d_ino || !spool_file(de->d_ino)->finished))
			spool_live_add(de->d_name);
	}
	closedir(dh);
}

/* The buffers made since the last pass; 0 if the directory must be read. */
static int spool_live_events(void)
{
	union {
		struct inotify_event e;
		char b[16384];
	} u;
	for (;;) {
		ssize_t n = read(spool_live.fd, u.b, sizeof(u.b));
		if (n <= 0)
			return n < 0 && (errno == EAGAIN || errno == EINTR);
		for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *e = (const void *)(u.b + at);
			if (e->mask & IN_Q_OVERFLOW)
				return 0;
			if (e->len)
				spool_live_add(e->name);
			at += (ssize_t)(sizeof(*e) + e->len);
		}
	}
}

static void prefault_spool(const char *dir, int prefault)
{
	int whole = !prefault; /* (the last pass reads it all: nothing is missed) */
	if (!spool_live.started) {
		spool_live.started = 1;
		spool_live.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (spool_live.fd >= 0 && inotify_add_watch(spool_live.fd, dir, IN_CREATE | IN_MOVED_TO) < 0) {
			close(spool_live.fd);
			spool_live.fd = -1;
		}
		whole = 1; /* what was made before the watch */
	}
	if (spool_live.fd < 0 || !spool_live_events())
		whole = 1;
	if (whole)
		spool_live_read_dir(dir);
	size_t w = 0;
	for (size_t i = 0; i < spool_live.n; i++) {
		char *name = spool_live.names[i];
		if (prefault_file(dir, name, prefault))
			spool_live.names[w++] = name;
		else
			free(name);
	}
	spool_live.n = w;
}

/* The session id of a process, from /proc/PID/stat; -1 if gone. */
static pid_t session_of(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "pid (comm) state ppid pgrp session ...": comm may hold anything */
	char *q = strrchr(buf, ')');
	char state;
	int pp, pg, sid;
	if (!q || sscanf(q + 1, " %c %d %d %d", &state, &pp, &pg, &sid) != 4 || state == 'Z')
		return -1;
	*ppid = pp;
	return sid;
}

/*
 * The processes stint still waits for once the program ended: its own
 * children now (the program's orphans come to stint, the subreaper) that
 * stayed in the program's session.  A process that called setsid() has
 * detached itself (a daemon): it is counted in *detached, not waited for.
 */
static int waited_children(pid_t main_pid, int *detached)
{
	pid_t self = getpid(), mysid = getsid(0);
	int n = 0;
	*detached = 0;
	DIR *dh = opendir("/proc");
	struct dirent *de;
	while (dh && (de = readdir(dh))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pp = 0, sid = session_of((pid_t)atoi(de->d_name), &pp);
		if (sid < 0 || pp != self)
			continue;
		if (sid == mysid || sid == main_pid)
			n++;
		else
			(*detached)++;
	}
	if (dh)
		closedir(dh);
	return n;
}

int rec_stop_waiting(pid_t main_pid, int main_done, int *stopped_early, int *detached)
{
	static uint64_t last_scan;
	static int saw_end;
	if (main_done && !saw_end) {
		saw_end = 1;
		rec_target = 0;     /* nothing more to forward to */
		rec_interrupts = 0; /* a Ctrl-C that ended the program is spent */
	}
	if ((!main_done && rec_interrupts >= 2) || (main_done && rec_interrupts)) {
		*stopped_early = rec_stop_sig ? rec_stop_sig : SIGINT;
		return 1;
	}
	uint64_t now = util_mono_ns();
	if (main_done && now - last_scan >= 100000000ull) {
		last_scan = now;
		if (waited_children(main_pid, detached) == 0)
			return 1;
	}
	return 0;
}

void rec_wait(struct rec_child *c, const char *spool, void (*tick)(void *), void *arg)
{
	int st = 0, have_main = 0;
	uint64_t last_tick = util_mono_ns();
	c->stopped_early = 0;
	c->detached = 0;
	c->left_running = 0;
	for (;;) {
		/* reap whatever ended: the program, and orphans given to stint */
		pid_t w;
		int s2;
		while ((w = waitpid(-1, &s2, WNOHANG)) > 0)
			if (w == c->pid) {
				st = s2;
				have_main = 1;
				c->mono_end = util_mono_ns();
			}
		if (w < 0 && errno == ECHILD)
			break;
		if (rec_stop_waiting(c->pid, have_main, &c->stopped_early, &c->detached))
			break;
		uint64_t now = util_mono_ns();
		if (tick && now - last_tick >= 1000000000ull) {
			last_tick = now;
			tick(arg);
		}
		if (spool)
			prefault_spool(spool, 1);
		struct timespec ts = {0, spool ? 2000000 : 10000000};
		nanosleep(&ts, NULL);
	}
	if (!have_main) {
		/* stopped while the program ran: it is left running */
		st = (128 + (c->stopped_early ? REC_STOP_SIGNAL(c->stopped_early) : SIGINT)) << 8;
		c->mono_end = util_mono_ns();
		c->left_running = 1;
	}
	c->status = st;
	if (spool) /* a stop the program's end came before the loop saw */
		prefault_spool(spool, 0);
	rec_target = 0;
}

int rec_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int rec_tsc_usable(void)
{
	size_t len;
	char *info = util_read_file("/proc/cpuinfo", &len);
	if (!info)
		return 0;
	int ok = arch_cycles_invariant(info);
	free(info);
	return ok;
}

