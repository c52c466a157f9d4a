/*
 * rt_exec.c - keeping the profiler in the processes the program starts with
 * an environment of its own.  Built into both runtime libraries
 * (libstint-rt.so and libstint-sampler.so).
 *
 * A child inherits the profiler through its environment: LD_PRELOAD names
 * the runtime library and STINT_* say where and how to record.  A program
 * that passes its own envp (execve, execle, execvpe, fexecve, posix_spawn,
 * posix_spawnp) or cleared its environment before execv/execvp/execl/execlp
 * would start its children unrecorded.  These functions are interposed: the
 * environment passed on gets the runtime library added to LD_PRELOAD and the
 * STINT_* variables the process started with, where missing; nothing else of
 * it changes, and an environment that already has them is passed as it is.
 *
 * They may run in a vfork child (sharing the parent's memory): no malloc,
 * no lock, no dlsym there; the new environment is built on the stack
 * (for one of more than RT_EXEC_STACK bytes of pointers, in mapped pages,
 * which a vfork parent would keep).
 *
 * What no environment can give: the dynamic loader ignores LD_PRELOAD in a
 * set-user-ID or set-group-ID program run by another user, a statically
 * linked program has no loader, and a 32-bit program or one with another C
 * library's loader (musl's) cannot load a 64-bit glibc library: those two
 * get LD_PRELOAD without the runtime (their loaders complain, or fail).
 * Such a program is looked at before the exec and named in a spool file
 * (unrec.<pid>.<n>: its reason and path), removed again if the exec fails,
 * so that stint record says it ran unrecorded instead of leaving it out
 * without a word.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <alloca.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt_exec.h"
#include "rt_file.h"
#include "../format/fmt_spool.h"

#define RT_EXEC_API __attribute__((visibility("default")))
#define RT_EXEC_MAXVARS 16
#define RT_EXEC_STACK 16384 /* bytes of stack for a new environment */

static int rt_exec_on;
static char rt_exec_lib[1024];                 /* this library's path */
static char rt_exec_spool[3072];               /* the spool's absolute path */
static char rt_exec_store[8192];               /* "STINT_X=value" strings */
static char *rt_exec_vars[RT_EXEC_MAXVARS + 1]; /* into rt_exec_store */
static unsigned rt_exec_nvars;

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);
static int (*real_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			       const posix_spawnattr_t *, char *const[], char *const[]);
static int (*real_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]);

static void rt_exec_keep(const char *name, const char *value)
{
	static size_t used;
	size_t nl = strlen(name), vl = strlen(value);
	if (rt_exec_nvars >= RT_EXEC_MAXVARS || used + nl + vl + 2 > sizeof(rt_exec_store))
		return;
	char *s = rt_exec_store + used;
	memcpy(s, name, nl);
	s[nl] = '=';
	memcpy(s + nl + 1, value, vl + 1);
	used += nl + vl + 2;
	rt_exec_vars[rt_exec_nvars++] = s;
}

/* The C library's functions, looked up at load time, never in a vfork
 * child (dlsym takes the loader's lock, which another thread may hold) */
__attribute__((constructor)) static void rt_exec_resolve(void)
{
	real_execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
	real_execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
	real_fexecve = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
	real_posix_spawn = (int (*)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				    const posix_spawnattr_t *, char *const[], char *const[]))
		dlsym(RTLD_NEXT, "posix_spawn");
	real_posix_spawnp = (int (*)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				     const posix_spawnattr_t *, char *const[], char *const[]))
		dlsym(RTLD_NEXT, "posix_spawnp");
}

static void (*rt_exec_unreachable)(int delta);

void rt_exec_init(const char *spool, void (*unreachable)(int delta))
{
	rt_exec_unreachable = unreachable;
	Dl_info di;
	if (!dladdr((void *)rt_exec_init, &di) || !di.dli_fname || di.dli_fname[0] != '/' ||
	    strlen(di.dli_fname) >= sizeof(rt_exec_lib))
		return;
	strcpy(rt_exec_lib, di.dli_fname);
	if (strlen(spool) < sizeof(rt_exec_spool))
		strcpy(rt_exec_spool, spool);
	rt_exec_keep(FMT_ENV_SPOOL, spool); /* absolute, as this process uses it */
	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (strncmp(*e, FMT_ENV_PREFIX, strlen(FMT_ENV_PREFIX)) != 0 || !eq ||
		    strncmp(*e, FMT_ENV_SPOOL "=", strlen(FMT_ENV_SPOOL "=")) == 0)
			continue;
		char name[64];
		size_t nl = (size_t)(eq - *e);
		if (nl >= sizeof(name))
			continue;
		memcpy(name, *e, nl);
		name[nl] = 0;
		rt_exec_keep(name, eq + 1);
	}
	rt_exec_on = 1;
}

/* Does the LD_PRELOAD value v (entries split by ':' or ' ') name our library? */
static int rt_exec_preloads_us(const char *v)
{
	size_t l = strlen(rt_exec_lib);
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ": ");
		if (n == l && strncmp(p, rt_exec_lib, l) == 0)
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* What envp lacks, found by rt_exec_plan, and where it is built. */
struct rt_exec_plan {
	char *const *envp;
	size_t n;             /* entries of envp */
	int preload;          /* index of its LD_PRELOAD entry, or -1 */
	int need_preload;     /* that does not name this library */
	int drop;             /* this library taken out of it instead */
	unsigned missing;
	char *add[RT_EXEC_MAXVARS];
	size_t need;          /* bytes of the new environment, 0: envp will do */
	int mapped;           /* built in mapped pages, not on the stack */
};

static void rt_exec_plan(char *const *envp, struct rt_exec_plan *p, int drop)
{
	static char *const empty[] = {NULL};
	p->envp = envp ? envp : empty;
	p->n = 0;
	p->preload = -1;
	p->need_preload = 0;
	p->drop = 0;
	p->missing = 0;
	p->need = 0;
	p->mapped = 0;
	if (!rt_exec_on)
		return;
	for (; p->envp[p->n]; p->n++)
		if (strncmp(p->envp[p->n], "LD_PRELOAD=", 11) == 0)
			p->preload = (int)p->n;
	if (drop) {
		p->drop = p->preload >= 0 && rt_exec_preloads_us(p->envp[p->preload] + 11);
		if (p->drop)
			p->need = (p->n + 1) * sizeof(char *) + strlen(p->envp[p->preload]) + 1;
		return;
	}
	p->need_preload = p->preload < 0 || !rt_exec_preloads_us(p->envp[p->preload] + 11);
	for (unsigned i = 0; i < rt_exec_nvars; i++) {
		size_t nl = (size_t)(strchr(rt_exec_vars[i], '=') - rt_exec_vars[i]) + 1;
		size_t k;
		for (k = 0; k < p->n; k++)
			if (strncmp(p->envp[k], rt_exec_vars[i], nl) == 0)
				break;
		if (k == p->n)
			p->add[p->missing++] = rt_exec_vars[i];
	}
	if (!p->need_preload && !p->missing)
		return;
	const char *old = p->preload >= 0 ? p->envp[p->preload] + 11 : "";
	size_t plen = p->need_preload ? 11 + strlen(rt_exec_lib) + 1 + strlen(old) + 1 : 0;
	p->need = (p->n + p->missing + 2) * sizeof(char *) + plen;
}

/* The new environment in mem (p->need bytes; NULL: none to be had). */
static char *const *rt_exec_build(struct rt_exec_plan *p, char *mem)
{
	if (!p->need)
		return p->envp;
	if (!mem) {
		mem = mmap(NULL, p->need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return p->envp; /* no memory: the environment as given */
		p->mapped = 1;
	}
	char **out = (char **)(void *)mem;
	size_t k = 0;
	if (p->drop) { /* LD_PRELOAD without this library (and none left: no LD_PRELOAD) */
		char *s = mem + (p->n + 1) * sizeof(char *);
		size_t l = strlen(rt_exec_lib), w = 11;
		memcpy(s, "LD_PRELOAD=", 11);
		for (const char *q = p->envp[p->preload] + 11; *q;) {
			size_t e = strcspn(q, ": ");
			if (e && !(e == l && strncmp(q, rt_exec_lib, l) == 0)) {
				if (w > 11)
					s[w++] = ':';
				memcpy(s + w, q, e);
				w += e;
			}
			q += e;
			if (*q)
				q++;
		}
		s[w] = 0;
		for (size_t i = 0; i < p->n; i++)
			if ((int)i != p->preload || w > 11)
				out[k++] = (int)i == p->preload ? s : p->envp[i];
		out[k] = NULL;
		return out;
	}
	for (size_t i = 0; i < p->n; i++)
		out[k++] = p->envp[i];
	if (p->need_preload) {
		char *s = mem + (p->n + p->missing + 2) * sizeof(char *);
		const char *old = p->preload >= 0 ? p->envp[p->preload] + 11 : "";
		/* ours first, as the recorder set it; the program's entries kept */
		strcpy(s, "LD_PRELOAD=");
		strcat(s, rt_exec_lib);
		if (*old) {
			strcat(s, ":");
			strcat(s, old);
		}
		if (p->preload >= 0)
			out[p->preload] = s;
		else
			out[k++] = s;
	}
	for (unsigned i = 0; i < p->missing; i++)
		out[k++] = p->add[i];
	out[k] = NULL;
	return out;
}

static void rt_exec_done(struct rt_exec_plan *p, char *const *env)
{
	if (p->mapped)
		munmap((void *)env, p->need);
}

/*
 * Why the program at fd cannot load the runtime: "setuid" or "setgid" (to
 * another user or group than the process's: the loader then runs in
 * secure mode), "static" (an ELF file without a program interpreter),
 * "elf32" (a 32-bit program: the runtime is 64-bit), "libc" (another C
 * library's loader, musl's: the runtime is built on glibc), or NULL (it
 * can; a script's interpreter is looked at when it is exec'd).  The last
 * two must not be given the runtime at all (rt_exec_plan): glibc's 32-bit
 * loader prints an error into the program's output, musl's fails to start
 * it.
 */
static const char *rt_exec_unloadable(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return "setuid";
	if ((st.st_mode & S_ISGID) && st.st_gid != getegid())
		return "setgid";
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return NULL;
	if (eh.e_ident[EI_CLASS] == ELFCLASS32)
		return "elf32";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
		return NULL;
	for (unsigned i = 0; i < eh.e_phnum; i++) { /* (one at a time: the stack may be small) */
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return NULL;
		if (ph.p_type == PT_INTERP) {
			char interp[128];
			size_t n = ph.p_filesz < sizeof(interp) - 1 ? ph.p_filesz : sizeof(interp) - 1;
			if (pread(fd, interp, n, (off_t)ph.p_offset) != (ssize_t)n)
				return NULL;
			interp[n] = 0;
			const char *base = strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp;
			return strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld64.so", 7) == 0 ? NULL : "libc";
		}
	}
	return "static";
}

/* Whether a program that cannot load the runtime (why) must not be given
 * it in LD_PRELOAD either. */
static int rt_exec_must_drop(const char *why)
{
	return why && (strcmp(why, "elf32") == 0 || strcmp(why, "libc") == 0);
}

/* The file execvp would run for file, which names no directory: found in
 * the directories of path (PATH); into buf (n bytes), or NULL. */
static const char *rt_exec_find(const char *file, const char *path, char *buf, size_t n)
{
	for (const char *p = path;; p++) {
		size_t d = strcspn(p, ":");
		if (d + 1 + strlen(file) < n) {
			memcpy(buf, d ? p : ".", d ? d : 1);
			size_t at = d ? d : 1;
			buf[at] = '/';
			strcpy(buf + at + 1, file);
			struct stat st;
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
				return buf;
		}
		p += d;
		if (!*p)
			return NULL;
	}
}

/*
 * Before an exec of file (or of fd, when file is NULL): a program that will
 * not load the runtime is named in the spool; the note's name, into note
 * (RT_EXEC_NOTE bytes), or "" (for rt_exec_unnote when the exec fails).
 * Where the spool itself is out of reach (the process gave up its rights
 * with setuid, or a chroot hides it), no note can be made, nor can the
 * program exec'd record: it is counted (rt_exec_unreachable), and note is
 * RT_EXEC_COUNTED.
 */
#define RT_EXEC_COUNTED "\001"
#define RT_EXEC_NOTE (strlen(rt_exec_spool) + 64)
static const char *rt_exec_note(const char *file, int search, int fd, char *note)
{
	note[0] = 0;
	if (!rt_exec_on || !rt_exec_spool[0])
		return NULL;
	/* made to measure (alloca), as the note: the exec may run on a stack
	 * of two pages (googletest's death tests clone their child on one) */
	const char *path = file;
	if (file && search && !strchr(file, '/')) {
		const char *dirs = getenv("PATH");
		if (!dirs)
			dirs = "/bin:/usr/bin";
		size_t need = strlen(dirs) + strlen(file) + 3;
		if (need > 1024) /* (longer candidates are not looked at) */
			need = 1024;
		path = rt_exec_find(file, dirs, alloca(need), need);
	}
	int own = -1;
	if (path)
		own = fd = open(path, O_RDONLY | O_CLOEXEC);
	const char *why = fd >= 0 ? rt_exec_unloadable(fd) : NULL;
	if (own >= 0)
		close(own);
	if (!why) {
		if (rt_exec_unreachable && access(rt_exec_spool, W_OK | X_OK) != 0 &&
		    (errno == EACCES || errno == EPERM || errno == ENOENT || errno == ENOTDIR)) {
			rt_exec_unreachable(1);
			strcpy(note, RT_EXEC_COUNTED);
		}
		return NULL;
	}
	static unsigned seq;
	char *p = rt_file_format_str(rt_file_format_str(note, rt_exec_spool), "/unrec.");
	p = rt_file_format_int(p, (unsigned)getpid());
	*p++ = '.';
	p = rt_file_format_int(p, __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	*p = 0;
	int nfd = rt_file_open(note, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (nfd < 0) {
		note[0] = 0;
		return why;
	}
	/* "<reason>\t<path>\n" (the path found, or that it was a descriptor) */
	const char *shown = path ? path : "(a file descriptor)";
	struct iovec v[4] = {{(void *)why, strlen(why)}, {"\t", 1}, {(void *)shown, strlen(shown)}, {"\n", 1}};
	ssize_t w = writev(nfd, v, 4);
	(void)w;
	close(nfd);
	return why;
}

static void rt_exec_unnote(const char *note)
{
	if (strcmp(note, RT_EXEC_COUNTED) == 0)
		rt_exec_unreachable(-1);
	else if (note[0])
		unlink(note);
}

/* env: envp with what the profiler needs, on the stack when small */
#define RT_EXEC_ENV(env, envp, drop)                                                               \
	struct rt_exec_plan plan_;                                                                 \
	rt_exec_plan(envp, &plan_, drop);                                                          \
	char *mem_ = NULL;                                                                         \
	if (plan_.need && plan_.need <= RT_EXEC_STACK)                                             \
		mem_ = alloca(plan_.need);                                                         \
	char *const *env = rt_exec_build(&plan_, mem_)

/* The real function, or ENOSYS when the C library has none. */
#define RT_EXEC_REAL(fn, name)                                                                     \
	do {                                                                                       \
		if (!fn)                                                                           \
			fn = dlsym(RTLD_NEXT, name);                                               \
		if (!fn) {                                                                         \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
	} while (0)

/* An exec wrapper's body: the real fn (name), called with its arguments and
 * envp completed as the last one; errno as the call left it. */
#define RT_EXEC_CALL(fn, name, file, search, fd, envp, ...)                                        \
	RT_EXEC_REAL(fn, name);                                                                    \
	char *note_ = alloca(RT_EXEC_NOTE);                                                        \
	const char *why_ = rt_exec_note(file, search, fd, note_);                                  \
	RT_EXEC_ENV(env_, envp, rt_exec_must_drop(why_));                                          \
	int r_ = fn(__VA_ARGS__, env_);                                                            \
	int e_ = errno;                                                                            \
	rt_exec_unnote(note_); /* (returned: the exec failed) */                                   \
	rt_exec_done(&plan_, env_);                                                                \
	errno = e_;                                                                                \
	return r_

RT_EXEC_API int execve(const char *path, char *const argv[], char *const envp[])
{
	RT_EXEC_CALL(real_execve, "execve", path, 0, -1, envp, path, argv);
}

RT_EXEC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	RT_EXEC_CALL(real_execvpe, "execvpe", file, 1, -1, envp, file, argv);
}

RT_EXEC_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	RT_EXEC_CALL(real_fexecve, "fexecve", NULL, 0, fd, envp, fd, argv);
}

/* the ones that pass environ: the program may have cleared it */
RT_EXEC_API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

RT_EXEC_API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl, execlp, execle: the arguments gathered into an argv, as libc does */
#define RT_EXEC_GATHER(arg, argv, ap)                                                              \
	size_t argc_##argv = 1;                                                                    \
	va_start(ap, arg);                                                                         \
	while (va_arg(ap, char *))                                                                 \
		argc_##argv++;                                                                     \
	va_end(ap);                                                                                \
	char *argv[argc_##argv + 1];                                                               \
	argv[0] = (char *)arg;                                                                     \
	va_start(ap, arg);                                                                         \
	for (size_t i_ = 1; i_ <= argc_##argv; i_++)                                               \
		argv[i_] = va_arg(ap, char *)

RT_EXEC_API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	RT_EXEC_GATHER(arg, argv, ap);
	va_end(ap);
	return execve(path, argv, environ);
}

RT_EXEC_API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	RT_EXEC_GATHER(arg, argv, ap);
	va_end(ap);
	return execvpe(file, argv, environ);
}

RT_EXEC_API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	RT_EXEC_GATHER(arg, argv, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

/* A posix_spawn wrapper's body: as RT_EXEC_CALL, but errors are its result
 * (ENOSYS when the C library has no fn), errno is not its business. */
#define RT_SPAWN_CALL(fn, name, file, search, envp, ...)                                           \
	if (!fn)                                                                                   \
		fn = dlsym(RTLD_NEXT, name);                                                       \
	if (!fn)                                                                                   \
		return ENOSYS;                                                                     \
	char *note_ = alloca(RT_EXEC_NOTE);                                                        \
	const char *why_ = rt_exec_note(file, search, -1, note_);                                  \
	RT_EXEC_ENV(env_, envp, rt_exec_must_drop(why_));                                          \
	int r_ = fn(__VA_ARGS__, env_);                                                            \
	if (r_ != 0)                                                                               \
		rt_exec_unnote(note_);                                                             \
	rt_exec_done(&plan_, env_);                                                                \
	return r_

RT_EXEC_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	RT_SPAWN_CALL(real_posix_spawn, "posix_spawn", path, 0, envp, pid, path, fa, attr, argv);
}

RT_EXEC_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	RT_SPAWN_CALL(real_posix_spawnp, "posix_spawnp", file, 1, envp, pid, file, fa, attr, argv);
}
