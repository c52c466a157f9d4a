/*
 * util.c - diagnostics, checked allocation and file helpers (util.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/*
 * One line on stderr.  Messages quote what the user typed and what files
 * hold (paths, names): control characters in them (C0, DEL, C1 as UTF-8)
 * are written as \xNN, so that a file name cannot move the cursor, retitle
 * the terminal or hide the message, and the line stays one line.
 */
static void say(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static void say(const char *fmt, va_list ap)
{
	char small[512], *msg = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small) && (msg = malloc((size_t)n + 1)) != NULL)
		vsnprintf(msg, (size_t)n + 1, fmt, again);
	else if (n >= (int)sizeof(small))
		msg = small; /* out of memory: the message cut short */
	va_end(again);
	if (n < 0)
		small[0] = 0;
	fputs("stint: ", stderr);
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
		if (*c < 0x20 || *c == 0x7f)
			fprintf(stderr, "\\x%02x", *c);
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] < 0xa0)
			fprintf(stderr, "\\x%02x", *++c);
		else
			fputc(*c, stderr);
	}
	fputc('\n', stderr);
	if (msg != small)
		free(msg);
}

void die(const char *fmt, ...)
{
	/* one line and one exit, also when threads of the analysis (an_instr.c)
	 * run out of memory together: exit() twice at once is undefined */
	static int dying;
	if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL))
		for (;;)
			pause();
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	exit(2);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

void *util_grow1(void *p, size_t n, size_t size)
{
	if (n & (n - 1))
		return p; /* not a power of two (nor 0): there is room */
	return xrealloc(p, (n ? 2 * n : 1) * size);
}

void *util_grow_zeroed(void *p, uint32_t *cap, uint32_t i, size_t size)
{
	uint32_t ncap = *cap ? *cap : 256;
	while (ncap <= i)
		ncap *= 2;
	if (ncap == *cap)
		return p;
	p = xrealloc(p, (size_t)ncap * size);
	memset((char *)p + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*cap = ncap;
	return p;
}

void util_index_reserve(struct util_index *ix, uint32_t n, uint64_t (*entry_hash)(const void *ctx, uint32_t i),
			const void *ctx)
{
	if ((uint64_t)(n + 1) * 2 <= ix->cap)
		return;
	uint32_t cap = ix->cap ? ix->cap : 64;
	while ((uint64_t)(n + 1) * 2 > cap)
		cap *= 2;
	free(ix->slot);
	ix->slot = xmalloc(cap * sizeof(*ix->slot));
	memset(ix->slot, 0xff, cap * sizeof(*ix->slot));
	ix->cap = cap;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t *s = util_index_probe(ix, entry_hash(ctx, i));
		while (*s != UTIL_INDEX_EMPTY)
			s = util_index_next(ix, s);
		*s = i;
	}
}

void util_index_free(struct util_index *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->cap = 0;
}

uint64_t util_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

uint64_t util_hash_str(const char *s, uint64_t seed)
{
	uint64_t h = 1469598103934665603ull ^ seed;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		die("out of memory");
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return s;
}

void util_add_word(char **words, const char *fmt, ...)
{
	va_list ap;
	char *w;
	va_start(ap, fmt);
	if (vasprintf(&w, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	char *s = xasprintf("%s%s%s", *words ? *words : "", *words && **words ? " " : "", w);
	free(w);
	free(*words);
	*words = s;
}

size_t util_args_joined(char *s, size_t n)
{
	while (n > 0 && !s[n - 1])
		n--;
	for (size_t k = 0; k < n; k++)
		if (!s[k])
			s[k] = ' ';
	s[n] = 0;
	return n;
}

char *util_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 16384, n = 0;
	char *buf = xmalloc(cap + 1);
	for (;;) {
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
}

static uid_t source_reader = (uid_t)-1;

void util_source_reader(uid_t owner)
{
	source_reader = owner;
}

/* The groups of user `who` (their passwd entry's and the supplementary
 * ones), found once; NULL with *n 0 when not known. */
static const gid_t *reader_groups(uid_t who, int *n)
{
	static gid_t groups[256];
	static int ngroups = -1;
	if (ngroups < 0) {
		struct passwd *pw = getpwuid(who);
		int cap = (int)(sizeof(groups) / sizeof(groups[0]));
		ngroups = pw && getgrouplist(pw->pw_name, pw->pw_gid, groups, &cap) >= 0 ? cap : 0;
	}
	*n = ngroups;
	return groups;
}

/* Whether user `who` may read st's file (search it, for a directory), as
 * the kernel decides: by the owner's bits if theirs, else by the group's if
 * they are in its group, else by everyone's. */
static int reader_may(uid_t who, const struct stat *st)
{
	mode_t bit = S_ISDIR(st->st_mode) ? S_IXUSR : S_IRUSR;
	if (st->st_uid == who)
		return (st->st_mode & bit) != 0;
	int n;
	const gid_t *g = reader_groups(who, &n);
	for (int i = 0; i < n; i++)
		if (g[i] == st->st_gid)
			return (st->st_mode & (bit >> 3)) != 0;
	return (st->st_mode & (bit >> 6)) != 0;
}

char *util_read_source(const char *path, size_t max, size_t *len)
{
	/* root's data file: what we can read, it could */
	if (source_reader == (uid_t)-1 || source_reader == geteuid() || source_reader == 0)
		return util_read_regular(path, max, 0, len);
	/* the file is opened once, checked by its descriptor, and each
	 * directory above its real path must let the owner through: a link
	 * swapped between a check by name and the open leaked a root-only
	 * file, and a file readable by all in /root (0700) was shown */
	char *real = realpath(path, NULL);
	if (!real)
		return NULL; /* (not there: errno says so, not EACCES) */
	int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	struct stat st;
	int ok = fd >= 0 && fstat(fd, &st) == 0 && reader_may(source_reader, &st);
	for (char *slash = strrchr(real, '/'); ok && slash && slash > real; slash = strrchr(real, '/')) {
		*slash = 0;
		ok = stat(real, &st) == 0 && reader_may(source_reader, &st);
	}
	free(real);
	if (!ok) {
		if (fd >= 0)
			close(fd);
		errno = EACCES;
		return NULL;
	}
	char fdpath[64];
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	char *text = util_read_regular(fdpath, max, 0, len);
	int e = errno;
	close(fd);
	errno = e;
	return text;
}

char *util_read_regular(const char *path, size_t max, int nofollow, size_t *len)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return NULL;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = EINVAL;
	else if ((uint64_t)st.st_size > max)
		e = EFBIG;
	size_t cap = e ? 0 : (size_t)st.st_size + 1, n = 0;
	char *buf = e ? NULL : xmalloc(cap + 1);
	while (!e) {
		if (n == cap) { /* it grew while read */
			if (cap > max) {
				e = EFBIG;
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			e = errno;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (e) {
		free(buf);
		errno = e;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* ------------------------------------------------------------------------
 * Output files: a mkstemp() file renamed over the target, removed on
 * failure and on the signals that end stint
 * --------------------------------------------------------------------- */

#define UTIL_TMP_SLOTS 4
static char util_tmp_path[UTIL_TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t util_tmp_used[UTIL_TMP_SLOTS];
static const int util_tmp_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void util_tmp_remove_all(void)
{
	for (int i = 0; i < UTIL_TMP_SLOTS; i++)
		if (util_tmp_used[i])
			unlink(util_tmp_path[i]); /* async-signal-safe */
}

static void util_tmp_on_signal(int sig)
{
	util_tmp_remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* die() exits with a temporary file still listed: remove it */
static void util_tmp_at_exit(void)
{
	for (int i = 0; i < UTIL_TMP_SLOTS; i++)
		if (util_tmp_used[i]) {
			unlink(util_tmp_path[i]);
			util_tmp_used[i] = 0;
		}
}

int util_tmp_guard(const char *path)
{
	static int installed;
	if (strlen(path) >= PATH_MAX)
		return -1;
	if (!installed) {
		installed = 1;
		atexit(util_tmp_at_exit);
		for (size_t i = 0; i < sizeof(util_tmp_signals) / sizeof(util_tmp_signals[0]); i++) {
			/* only where stint has no handler of its own (record forwards
			 * these signals to the program instead) */
			struct sigaction old, sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = util_tmp_on_signal;
			sigemptyset(&sa.sa_mask);
			if (sigaction(util_tmp_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
				sigaction(util_tmp_signals[i], &sa, NULL);
		}
	}
	for (int i = 0; i < UTIL_TMP_SLOTS; i++)
		if (!util_tmp_used[i]) {
			strcpy(util_tmp_path[i], path);
			util_tmp_used[i] = 1;
			return i;
		}
	return -1;
}

void util_tmp_forget(int slot)
{
	if (slot >= 0 && slot < UTIL_TMP_SLOTS)
		util_tmp_used[slot] = 0;
}

/* The descriptor a path names directly: N of /dev/fd/N, /proc/self/fd/N,
 * /proc/<our pid>/fd/N, 0-2 of /dev/stdin, stdout, stderr; -2 for another
 * process's (/proc/PID/fd/N); -1 if it names none. */
static int fd_path(const char *p)
{
	static const char *const prefix[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
	if (!strcmp(p, "/dev/stdin"))
		return 0;
	if (!strcmp(p, "/dev/stdout"))
		return 1;
	if (!strcmp(p, "/dev/stderr"))
		return 2;
	const char *num = NULL;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]) && !num; i++)
		if (strncmp(p, prefix[i], strlen(prefix[i])) == 0)
			num = p + strlen(prefix[i]);
	if (!num && strncmp(p, "/proc/", 6) == 0) {
		char *end;
		long pid = strtol(p + 6, &end, 10);
		if (end == p + 6 || strncmp(end, "/fd/", 4) != 0)
			return -1;
		if (pid != (long)getpid())
			return -2;
		num = end + 4;
	}
	if (!num)
		return -1;
	char *end;
	long n = strtol(num, &end, 10);
	if (end != num && *end == '/')
		return -1; /* a file in a directory held open (/dev/fd/3/o.txt) */
	return end != num && !*end && n >= 0 && n < INT_MAX ? (int)n : -2;
}

/* fd_path of path, or of where its links lead (out -> /dev/stdout), a few deep. */
static int descriptor_named(const char *path)
{
	char target[PATH_MAX], cur[PATH_MAX];
	int fd = fd_path(path);
	if (fd != -1)
		return fd;
	snprintf(cur, sizeof(cur), "%s", path);
	for (int depth = 0; depth < 8; depth++) {
		ssize_t n = readlink(cur, target, sizeof(target) - 1);
		if (n <= 0)
			return -1;
		target[n] = 0;
		if ((fd = fd_path(target)) != -1)
			return fd;
		if (target[0] != '/') { /* relative to the link's directory */
			char *slash = strrchr(cur, '/');
			size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
			if (keep + (size_t)n + 1 > sizeof(cur))
				return -1;
			memmove(cur + keep, target, (size_t)n + 1);
		} else {
			memcpy(cur, target, (size_t)n + 1);
		}
	}
	return -1;
}

int util_names_descriptor(const char *path)
{
	return descriptor_named(path) != -1;
}

int util_out_open(struct util_out *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->slot = -1;
	o->mode = 0644;
	struct stat st;
	int named = descriptor_named(path);
	if (named != -1) {
		/* /dev/stdout, /dev/fd/3: the file the descriptor holds, at its
		 * offset and in its mode (a shell's >>), never opened again with
		 * O_TRUNC (3>>log.txt was emptied) nor replaced (a file renamed
		 * over the name replaced, as root, the system's /dev/stdout link,
		 * and left the user's redirection empty); a descriptor that is
		 * not open, or open for reading only, is refused */
		int fl = named >= 0 ? fcntl(named, F_GETFL) : -1;
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			errno = named == -2 ? EINVAL : EBADF;
			return -1;
		}
		o->fd = fcntl(named, F_DUPFD_CLOEXEC, 3);
		return o->fd < 0 ? -1 : 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR; /* ("." gave EBUSY, the rename's) */
		return -1;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a device, a pipe (/dev/null, /dev/stdout): written to as it
		 * is; a file renamed over it would replace it (as root, the
		 * system's /dev/null became a regular file) */
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		return o->fd < 0 ? -1 : 0;
	}
	char *copy = xstrdup(path), *copy2 = xstrdup(path);
	const char *dir = dirname(copy), *base = basename(copy2);
	/* a name in the target's directory (so the rename stays on one file
	 * system), hidden, that says what it is for */
	o->tmp = xasprintf("%s/.%.200s.XXXXXX", dir, base);
	free(copy);
	free(copy2);
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old); /* no signal between creation and guard */
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	int e = errno;
	if (o->fd >= 0)
		o->slot = util_tmp_guard(o->tmp);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (o->fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		errno = e;
		return -1;
	}
	o->path = xstrdup(path);
	return 0;
}

void util_out_abort(struct util_out *o)
{
	int e = errno;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	util_tmp_forget(o->slot);
	o->slot = -1;
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	errno = e;
}

int util_out_commit(struct util_out *o)
{
	if (!o->tmp) { /* written in place (util_out_open) */
		int r = close(o->fd);
		o->fd = -1;
		return r;
	}
	mode_t mask = umask(0);
	umask(mask);
	int e = 0;
	if (fchmod(o->fd, o->mode & ~mask) < 0)
		e = errno;
	if (close(o->fd) < 0 && !e)
		e = errno;
	o->fd = -1;
	if (!e && rename(o->tmp, o->path) < 0)
		e = errno;
	if (e) {
		util_out_abort(o);
		errno = e;
		return -1;
	}
	util_tmp_forget(o->slot);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	o->slot = -1;
	return 0;
}

const char *util_self_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		if (n <= 0)
			strcpy(dir, ".");
		else {
			dir[n] = 0;
			char *slash = strrchr(dir, '/');
			if (slash)
				*slash = 0;
		}
	}
	return dir;
}

uint64_t util_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t util_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		die("out of memory");
	return d;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void util_sort_u64(uint64_t *v, size_t n)
{
	if (n > 1) /* (v may be NULL when n is 0) */
		qsort(v, n, sizeof(*v), cmp_u64);
}

size_t util_utf8_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned char c = u[0];
	if (c < 0x80)
		return 1;
	size_t n;
	uint32_t cp;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0; /* a continuation byte, or one no encoding starts with */
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80) /* also stops at the terminating zero */
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and beyond U+10FFFF are not UTF-8 */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}


void util_path_tidy(char *p)
{
	int abs = p[0] == '/';
	char *w = p + abs, *base = w; /* base: where a ".." may no longer fold */
	for (const char *r = p + abs; *r;) {
		while (*r == '/')
			r++;
		const char *e = strchr(r, '/');
		size_t len = e ? (size_t)(e - r) : strlen(r);
		if (len == 0)
			break;
		if (len == 1 && r[0] == '.') {
			/* dropped */
		} else if (len == 2 && r[0] == '.' && r[1] == '.' && w > base) {
			/* drop the last component written */
			while (w > base && w[-1] != '/')
				w--;
			if (w > base)
				w--; /* its slash */
		} else if (len == 2 && r[0] == '.' && r[1] == '.' && abs) {
			/* "/.." is "/" */
		} else {
			if (w > p + abs && w[-1] != '/')
				*w++ = '/';
			memmove(w, r, len);
			w += len;
			if (len == 2 && r[0] == '.' && r[1] == '.')
				base = w; /* (relative: leading ".." stay) */
		}
		r += len;
	}
	if (w == p + abs && !abs)
		*w++ = '.';
	*w = 0;
}

const char *util_file_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "";
}
