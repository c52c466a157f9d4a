/*
 * rec_launch.c - finding, checking, starting and waiting for the profiled
 * program; the TSC clock facts the data file records.
 */
#define _GNU_SOURCE
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder.h"
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

int rec_is_instrumented(const char *path)
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
			if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; data && i < n; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(data, (int)i, &sym))
					break;
				const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
				if (nm && strcmp(nm, "__cyg_profile_func_enter") == 0) {
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

static volatile pid_t rec_target;

static void rec_forward(int sig)
{
	if (rec_target > 0)
		kill(rec_target, sig);
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
	c->wall_start = util_wall_ns();
	c->mono_start = util_mono_ns();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
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
			} else if (strcmp(name, "STINT_SPOOL") == 0 && val[0] != '/' &&
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
			setenv("STINT_RECORDER", recorder, 1);
		if (c->hold) {
			char b;
			close(go[1]);
			while (read(go[0], &b, 1) < 0 && errno == EINTR)
				;
		}
		execv(path, argv);
		int e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
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
		snprintf(err, errlen, "cannot run '%s': %s", path, strerror(e));
		return -1;
	}
	c->pid = pid;
	rec_target = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_forward;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	return 0;
}

/*
 * Say at once, while the program runs on, when a thread's recording stopped
 * (the disk filled): once per buffer file.
 */
static void spool_warn_stopped(int fd, const char *name)
{
	static char **warned;
	static size_t nwarned;
	uint32_t flags = 0;
	if (pread(fd, &flags, sizeof(flags), offsetof(struct fmt_spool_hdr, flags)) != sizeof(flags) ||
	    !(flags & FMT_SPOOL_NOSPACE))
		return;
	for (size_t i = 0; i < nwarned; i++)
		if (strcmp(warned[i], name) == 0)
			return;
	warned = xrealloc(warned, (nwarned + 1) * sizeof(*warned));
	warned[nwarned++] = xstrdup(name);
	int32_t tid = 0;
	if (pread(fd, &tid, sizeof(tid), offsetof(struct fmt_spool_hdr, tid)) != sizeof(tid))
		tid = 0;
	warn("the disk is full: thread %d stopped recording (the program runs on; "
	     "what was recorded is kept)", (int)tid);
}

/*
 * Page in (prefault), ahead of each thread, the next chunks of its spool
 * buffer: the kernel zero-fills a page of a new file region when it first
 * enters the page cache, and doing it here, by reading, costs the
 * recorder's CPU instead of the program's.  Reading never changes what the
 * runtime wrote.  Each pass also warns of threads that stopped recording.
 */
static void prefault_spool(const char *dir, int prefault)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return;
	struct dirent *de;
	while ((de = readdir(dh))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".buf") != 0)
			continue;
		char *path = xasprintf("%s/%s", dir, de->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		free(path);
		if (fd < 0)
			continue;
		spool_warn_stopped(fd, de->d_name);
		uint32_t nused = 0;
		if (prefault && pread(fd, &nused, sizeof(nused), offsetof(struct fmt_spool_hdr, nused)) == sizeof(nused) &&
		    nused < FMT_SPOOL_MAX_CHUNKS - 2) {
			uint64_t off = FMT_SPOOL_DATA_OFF;
			for (uint32_t i = 0; i <= nused; i++)
				off += fmt_spool_chunk_size(i);
			/* the chunk after the one being filled */
			uint64_t size = fmt_spool_chunk_size(nused + 1);
			if (posix_fallocate(fd, (off_t)off, (off_t)size) == 0)
				readahead(fd, (off_t)off, size);
		}
		close(fd);
	}
	closedir(dh);
}

void rec_wait(struct rec_child *c, const char *spool)
{
	int st = 0;
	for (;;) {
		pid_t w = waitpid(c->pid, &st, spool ? WNOHANG : 0);
		if (w == c->pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (spool) {
			prefault_spool(spool, 1);
			struct timespec ts = {0, 2000000};
			nanosleep(&ts, NULL);
		}
	}
	c->status = st;
	c->mono_end = util_mono_ns();
	if (spool) /* a stop the program's end came before the loop saw */
		prefault_spool(spool, 0);
	/* orphans of the program are ours now: let them finish writing */
	while (waitpid(-1, &st, 0) > 0 || errno == EINTR)
		;
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
	int ok = strstr(info, " constant_tsc") && strstr(info, " nonstop_tsc");
	free(info);
#if !defined(__x86_64__)
	ok = 0;
#endif
	return ok;
}

/*
 * The kernel publishes its TSC to nanoseconds conversion in a perf event's
 * user page (time_mult / 2^time_shift); use it when there, else measure
 * against CLOCK_MONOTONIC over the whole run.
 */
double rec_tsc_ns_per_tick(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		struct perf_event_mmap_page *pc =
			mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (pc != MAP_FAILED) {
			double v = 0;
			if (pc->cap_user_time && pc->time_mult)
				v = (double)pc->time_mult / (double)(1ull << pc->time_shift);
			munmap(pc, (size_t)sysconf(_SC_PAGESIZE));
			if (v > 0)
				return v;
		}
	}
	if (tsc1 > tsc0 && ns1 > ns0)
		return (double)(ns1 - ns0) / (double)(tsc1 - tsc0);
	return 1.0;
}
