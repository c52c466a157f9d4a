/*
 * rec_cache.c - the user's cache of what the runtime works out from a
 * program's code before patching it (runtime/rt_kept.c: the branches into
 * functions' first bytes, the GOT slots used as data), kept across
 * recordings: the first recording of cc1 scans its 25 MB of code for
 * 1.2 s, and every later one would again.
 *
 * $XDG_CACHE_HOME/stint, else ~/.cache/stint: a directory of the user's
 * own that no one else can reach (else no cache is used).  The program's
 * runtime reaches it as it does the spool, through /proc/<stint>/fd/N, a
 * descriptor opened once here.  After the program, the results its
 * processes worked out are moved from the spool into it; past
 * REC_CACHE_MAX bytes the oldest files go.  Each file is named by a hash
 * of all it was computed from (the code, the runtime's and Capstone's
 * builds), so a stale one is never taken, only left to age out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "../lib/util.h"

#define REC_CACHE_MAX ((off_t)512 << 20)

/* The directory name in dir, made (mode 0700) if missing; -1 if it is not
 * one, or not the user's, or others can write it (all_private: or reach). */
static int open_dir(int dirfd, const char *name, int all_private)
{
	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return -1;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & (all_private ? 077 : 022))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int rec_cache_open(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	int fd = -1;
	if (xdg && xdg[0] == '/') {
		if (mkdir(xdg, 0700) < 0 && errno != EEXIST)
			return -1;
		int x = open(xdg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		if (x >= 0 && fstat(x, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022))
			fd = x;
		else if (x >= 0)
			close(x);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(geteuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home || home[0] != '/')
			return -1;
		int h = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		/* ~/.cache as XDG makes it; not in a home that is not the
		 * user's (sudo keeping another user's HOME) */
		struct stat st;
		fd = h >= 0 && fstat(h, &st) == 0 && st.st_uid == geteuid() ? open_dir(h, ".cache", 0) : -1;
		if (h >= 0)
			close(h);
	}
	if (fd < 0)
		return -1;
	int cache = open_dir(fd, "stint", 1);
	close(fd);
	return cache;
}

/* Copy name from the spool into the cache as tmp (hard link when both are
 * on one file system); 0 on success. */
static int copy_in(int spoolfd, int cachefd, const char *name, const char *tmp)
{
	if (linkat(spoolfd, name, cachefd, tmp, 0) == 0)
		return 0;
	int in = openat(spoolfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		if (in >= 0)
			close(in);
		return -1;
	}
	int out = openat(cachefd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int ok = out >= 0;
	char buf[65536];
	ssize_t r;
	while (ok && (r = read(in, buf, sizeof(buf))) != 0) {
		ok = r > 0;
		for (ssize_t at = 0; ok && at < r;) {
			ssize_t w = write(out, buf + at, (size_t)(r - at));
			ok = w > 0;
			at += ok ? w : 0;
		}
	}
	close(in);
	if (out >= 0 && close(out) < 0)
		ok = 0;
	if (!ok && out >= 0)
		unlinkat(cachefd, tmp, 0);
	return ok ? 0 : -1;
}

struct cached {
	char *name;
	off_t size;
	struct timespec mtime;
};

static int older_first(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec > y->mtime.tv_nsec;
}

/* Past REC_CACHE_MAX bytes, the oldest files go, down to three quarters. */
static void prune(int cachefd)
{
	DIR *d = rec_dir_list(cachefd);
	if (!d)
		return;
	struct cached *v = NULL;
	size_t n = 0, cap = 0;
	off_t total = 0;
	struct dirent *e;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(d))) {
		struct stat st;
		if (fstatat(cachefd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		/* a copy a stint killed halfway left */
		if (strncmp(e->d_name, ".tmp.", 5) == 0 && st.st_mtim.tv_sec < now.tv_sec - 86400)
			unlinkat(cachefd, e->d_name, 0);
		if (!rec_spool_kept_name(e->d_name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n++] = (struct cached){xstrdup(e->d_name), st.st_size, st.st_mtim};
		total += st.st_size;
	}
	closedir(d);
	if (total > REC_CACHE_MAX) {
		qsort(v, n, sizeof(*v), older_first);
		for (size_t i = 0; i < n && total > REC_CACHE_MAX / 4 * 3; i++)
			if (unlinkat(cachefd, v[i].name, 0) == 0)
				total -= v[i].size;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void rec_cache_store(int spoolfd, int cachefd)
{
	DIR *d = rec_dir_list(spoolfd);
	if (!d)
		return;
	int stored = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!rec_spool_kept_name(e->d_name))
			continue;
		/* (a file the cache has under that name was not taken: cut
		 * short or damaged; the new one replaces it) */
		char tmp[64];
		snprintf(tmp, sizeof(tmp), ".tmp.%ld.%d", (long)getpid(), stored);
		if (copy_in(spoolfd, cachefd, e->d_name, tmp) < 0)
			continue;
		if (renameat(cachefd, tmp, cachefd, e->d_name) < 0)
			unlinkat(cachefd, tmp, 0);
		else
			stored++;
	}
	closedir(d);
	if (stored)
		prune(cachefd);
}
