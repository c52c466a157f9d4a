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
#include <sys/syscall.h>
#include <unistd.h>

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

/* Copy a whole file (one of /proc/self) to path, as rt_file_write does,
 * after the text head (NULL: none). */
static inline void rt_file_copy_head(const char *from, const char *path, const char *head)
{
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	if (buf && head) {
		for (; head[n] && n < 4096; n++)
			buf[n] = head[n];
	}
	while (buf) {
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);
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
	if (buf)
		rt_file_write(path, buf, n);
	free(buf);
}

static inline void rt_file_copy(const char *from, const char *path)
{
	rt_file_copy_head(from, path, NULL);
}

#endif
