/*
 * rt_file.h - the small spool files both runtime libraries write
 * (libstint-rt.so and libstint-sampler.so): whole files written under a
 * temporary name and renamed, so the recorder never reads half of one.
 * Header-only: the two libraries share no object code.
 */
#ifndef STINT_RT_FILE_H
#define STINT_RT_FILE_H

#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_sys.h"

/*
 * The spool directory as an absolute path into buf: the program may chdir
 * at any time, and every spool file is opened by path.  The recorder
 * passes an absolute path; a relative one is taken from the directory the
 * process starts in.  0 when spool is unset, empty or too long.
 */
static inline int rt_file_abs(char *buf, size_t n, const char *spool)
{
	if (!spool || !*spool)
		return 0;
	if (spool[0] == '/') {
		if (strlen(spool) >= n)
			return 0;
		strcpy(buf, spool);
		return 1;
	}
	if (!getcwd(buf, n))
		return 0;
	size_t l = strlen(buf);
	if (l + 1 + strlen(spool) >= n)
		return 0;
	buf[l] = '/';
	strcpy(buf + l + 1, spool);
	return 1;
}

/*
 * Room for one more descriptor when the program holds all that its
 * RLIMIT_NOFILE allows (a call failed with EMFILE): the soft limit is
 * raised (the hard one too where that is permitted, as for root) until
 * rt_file_room_end puts *old back.  The runtime keeps no descriptor beyond
 * the call that opened it, so the program's own count never changes; an
 * open of the program's in another thread within that moment may get a
 * descriptor where it would have failed.  0 when the limit cannot move.
 * (The raw system call: a program may define its own setrlimit.)
 */
static inline int rt_file_room_begin(struct rlimit *old)
{
	int e = errno, ok = 0;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, old) == 0) {
		struct rlimit room = *old;
		room.rlim_cur += 16;
		if (room.rlim_max < room.rlim_cur)
			room.rlim_max = room.rlim_cur;
		ok = syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &room, NULL) == 0;
	}
	errno = e;
	return ok;
}

static inline void rt_file_room_end(const struct rlimit *old)
{
	int e = errno;
	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, old, NULL);
	errno = e;
}

/* open(2), also when the program has used up its descriptors
 * (rt_file_room_begin).  Async-signal-safe. */
static inline int rt_file_open(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags, mode);
	struct rlimit old;
	if (fd < 0 && errno == EMFILE && rt_file_room_begin(&old)) {
		fd = open(path, flags, mode);
		rt_file_room_end(&old);
	}
	return fd;
}

/* Copy s to p; returns the end (its terminator). */
static inline char *rt_file_format_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n + 1);
	return p + n;
}

/* v in decimal at p; returns the end (its terminator). */
static inline char *rt_file_format_int(char *p, uint64_t v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = d[--n];
	*p = 0;
	return p;
}

static inline void rt_file_write(const char *path, const void *data, size_t len)
{
	size_t n = strlen(path) + 24;
	char *tmp = alloca(n); /* (to measure: the program sized its stack) */
	snprintf(tmp, n, "%s.tmp%d", path, (int)syscall(SYS_gettid));
	int fd = rt_file_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0)
			break;
		p += w;
		len -= (size_t)w;
	}
	close(fd);
	rename(tmp, path);
}

/*
 * fn(tid, arg) for each thread of the process but the calling one, read
 * from /proc/self/task with getdents64 (no opendir: no malloc); the number
 * of them, -1 when /proc cannot be read.  Async-signal-safe if fn is.
 */
static inline int rt_file_other_threads(void (*fn)(int tid, void *arg), void *arg)
{
	int dir = rt_file_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dir < 0)
		return -1;
	int self = (int)syscall(SYS_gettid), others = 0;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *de = (void *)(buf + off);
			off += de->reclen;
			int tid = atoi(de->name);
			if (tid <= 0 || tid == self)
				continue;
			others++;
			fn(tid, arg);
		}
	close(dir);
	return others;
}

/*
 * A thread's new file: path holds "<spool>/<key>.t<tid>" (room for size
 * bytes), made "<that><ext>" with O_EXCL, or, where a file of that name is
 * there, "<that>.<n><ext>" for the first free n.  The kernel gives a thread
 * id again once pid_max wraps (32768 on many machines), and the file of an
 * earlier thread of the process with the same id holds its recording: it
 * is never opened again.  The descriptor, or -1 with errno; path keeps the
 * name made.  Without printf: it runs at a thread's start, on whatever
 * stack its first probe found.
 */
static inline int rt_file_create_thread(char *path, size_t size, const char *ext, int flags)
{
	size_t stem = strlen(path);
	if (!stem || stem + 12 + strlen(ext) > size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (unsigned nth = 0;; nth++) {
		char *p = path + stem;
		if (nth)
			p = rt_file_format_int(rt_file_format_str(p, "."), nth);
		rt_file_format_str(p, ext);
		int fd = rt_file_open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST || nth >= 1u << 20)
			return fd;
	}
}

/*
 * Whether the recorder is gone (`stint record` killed): the process runs on,
 * but its spool must stop growing.  The recorder passes STINT_RECORDER=
 * "<pid>:<start time>:<pid namespace>" (start time: field 22 of
 * /proc/<pid>/stat, a reused pid has another; the namespace: the inode of
 * /proc/self/ns/pid).  rt_file_recorder_parse reads that and checks /proc works
 * here; where it does not, *pid is 0 and the recorder is never taken for
 * gone.  Async-signal-safe: open, read, close.
 */
static inline int rt_file_proc_stat(int pid, char *state, unsigned long long *start)
{
	/* (no printf, a small buffer: this runs at chunk switches, maybe on a
	 * coroutine's small stack; the line to field 22 is under 512 bytes) */
	char path[64], buf[512];
	rt_file_format_str(rt_file_format_int(rt_file_format_str(path, "/proc/"), (unsigned)pid), "/stat");
	int fd = rt_file_open(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the command may hold spaces and ')' */
	if (!p || p[1] != ' ')
		return -1;
	*state = p[2];
	p += 2;
	for (int field = 3; field < 22; field++) { /* to field 22, starttime */
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*start = strtoull(p, NULL, 10);
	return 0;
}

static inline void rt_file_recorder_parse(const char *v, int *pid, unsigned long long *start)
{
	char state;
	unsigned long long self;
	struct stat ns;
	*pid = 0;
	if (!v || rt_file_proc_stat((int)getpid(), &state, &self) < 0)
		return;
	char *end;
	long p = strtol(v, &end, 10);
	if (p <= 0 || *end != ':')
		return;
	unsigned long long st = strtoull(end + 1, &end, 10);
	/* in another pid namespace (a container started under stint) the
	 * recorder's pid means nothing: not watched there */
	if (*end == ':' && (stat("/proc/self/ns/pid", &ns) < 0 ||
			    (unsigned long long)ns.st_ino != strtoull(end + 1, NULL, 10)))
		return;
	*start = st;
	*pid = (int)p;
}

static inline int rt_file_recorder_gone(int pid, unsigned long long start)
{
	char state;
	unsigned long long now;
	if (pid <= 0)
		return 0;
	/* /proc unreadable here (no descriptor free, a chroot without /proc):
	 * then only a recorder that no longer exists is gone (EPERM: it does,
	 * the program gave up the rights to signal it) */
	if (rt_file_proc_stat(pid, &state, &now) < 0)
		return kill(pid, 0) < 0 && errno == ESRCH;
	return state == 'Z' || state == 'X' || now != start;
}

/*
 * Memory for the runtime, never from malloc: a program may define its own
 * malloc (instrumented, counting, not ready before main), and the runtime
 * must not call into the program.  Whole pages from mmap; old (of oldsize
 * bytes, or NULL) is moved to a block of newsize bytes.  NULL on failure,
 * old then still valid.
 */
static inline void *rt_mem_grow(void *old, size_t oldsize, size_t newsize)
{
	void *m = old ? mremap(old, oldsize, newsize, MREMAP_MAYMOVE)
		      : mmap(NULL, newsize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* Copy a whole file (one of /proc/self) to path, as rt_file_write does,
 * after the text head (NULL: none). */
static inline void rt_file_copy_head(const char *from, const char *path, const char *head)
{
	int fd = rt_file_open(from, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	size_t cap = 65536, n = 0;
	char *buf = rt_mem_grow(NULL, 0, cap);
	if (buf && head) {
		for (; head[n] && n < 4096; n++)
			buf[n] = head[n];
	}
	while (buf) {
		if (n == cap) {
			char *nb = rt_mem_grow(buf, cap, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		rt_file_write(path, buf, n);
		munmap(buf, cap);
	}
}

static inline void rt_file_copy(const char *from, const char *path)
{
	rt_file_copy_head(from, path, NULL);
}

#endif
