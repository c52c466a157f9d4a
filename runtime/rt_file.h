/*
 * rt_file.h - the small spool files both runtime libraries write
 * (libstint-rt.so and libstint-sampler.so): whole files written under a
 * temporary name and renamed, so the recorder never reads half of one.
 * Header-only: the two libraries share no object code.
 */
#ifndef STINT_RT_FILE_H
#define STINT_RT_FILE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static inline void rt_file_write(const char *path, const void *data, size_t len)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)syscall(SYS_gettid));
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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

/* Copy a whole file (one of /proc/self) to path, as rt_file_write does. */
static inline void rt_file_copy(const char *from, const char *path)
{
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t cap = 65536, n = 0;
	char *buf = rt_mem_grow(NULL, 0, cap);
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

#endif
