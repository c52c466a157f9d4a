/*
 * truncate_on_map.c - an LD_PRELOAD library for the safety test
 * safety.data_file_truncated_while_read: it lets mmap() map a file, then,
 * if that file is the one named by STINT_TEST_TRUNCATE, cuts it down to 4096
 * bytes, as a program still writing it or a full disk would while stint
 * reads it.  The mapping's pages past the new end then raise SIGBUS when
 * read, at a point of the test's choosing rather than by a race.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
	static int done;
	if (!real_mmap)
		real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	void *p = real_mmap(addr, len, prot, flags, fd, off);
	const char *path = getenv("STINT_TEST_TRUNCATE");
	struct stat mapped, named;
	if (p != MAP_FAILED && fd >= 0 && path && !done && fstat(fd, &mapped) == 0 && stat(path, &named) == 0 &&
	    mapped.st_dev == named.st_dev && mapped.st_ino == named.st_ino) {
		done = 1;
		if (truncate(path, 4096) != 0)
			abort();
	}
	return p;
}
