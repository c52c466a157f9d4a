/*
 * rt_kept.c - what the first process of a recording worked out from a
 * module's code, kept in the spool for the later processes of the same
 * code.  A shell script, a build or a version manager's shim starts the
 * same programs again and again, and scanning their code whole at each
 * start was most of what a short process cost under stint (rt_patch_cs.c:
 * the branches into functions' first bytes; rt_plt_got.c: the GOT slots
 * referenced as data).  A kept result is named by a hash of everything it
 * was computed from, "<spool>/<kind>.<16 hex digits>", so a process finds
 * it only for the same input; it is written whole (a temporary file
 * renamed), and one that is not exactly one is ignored.
 *
 * stint record also keeps these files for later recordings, in the user's
 * cache directory (recorder/rec_cache.c), which a process reads when the
 * spool has no such file.  The hash then also covers the runtime itself,
 * by its file's identity: a result of another build of it, whose scan may
 * differ, is never taken.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "rt_file.h"
#include "rt_int.h"

/* A file's head: RT_KEPT_MAGIC, the kind, the hash, the bytes that follow. */
struct rt_kept_head {
	char magic[8];
	char kind[8];
	uint64_t hash, len;
};
#define RT_KEPT_MAGIC "stkept1"

uint64_t rt_kept_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

uint64_t rt_kept_hash(uint64_t h, const void *bytes, size_t n)
{
	const uint8_t *p = bytes;
	uint64_t h2 = rt_kept_mix(h, n);
	size_t k = 0;
	for (; k + 16 <= n; k += 16) { /* two lanes: twice one dependent chain's speed */
		uint64_t a, b;
		memcpy(&a, p + k, 8);
		memcpy(&b, p + k + 8, 8);
		h = rt_kept_mix(h, a);
		h2 = rt_kept_mix(h2, b);
	}
	for (; k < n; k++)
		h = rt_kept_mix(h, p[k]);
	return rt_kept_mix(h, h2);
}

/* The file holding the code at addr, by device, inode, size and time of
 * change: another build or version of it has another identity.  0 when
 * it cannot be told. */
uint64_t rt_kept_identity(const void *addr)
{
	Dl_info info;
	struct stat st;
	if (!dladdr(addr, &info) || !info.dli_fname || !info.dli_fname[0] || stat(info.dli_fname, &st) != 0)
		return 0;
	uint64_t h = rt_kept_mix(0x13198a2e03707344ull, (uint64_t)st.st_dev);
	h = rt_kept_mix(h, (uint64_t)st.st_ino);
	h = rt_kept_mix(h, (uint64_t)st.st_size);
	h = rt_kept_mix(h, (uint64_t)st.st_mtim.tv_sec);
	return rt_kept_mix(h, (uint64_t)st.st_mtim.tv_nsec);
}

/* The hash a file is named by: the caller's, and this runtime's identity. */
static uint64_t rt_kept_name(uint64_t hash)
{
	static uint64_t self;
	if (!self) {
		uint64_t id = rt_kept_identity((const void *)rt_kept_mix);
		self = id ? id : 1;
	}
	return rt_kept_mix(hash, self);
}

/* "<dir>/<kind>.<16 hex digits>" into buf of RT_KEPT_PATH(dir, kind) bytes. */
#define RT_KEPT_PATH(dir, kind) (strlen(dir) + strlen(kind) + 19)
static void rt_kept_path(char *buf, const char *dir, const char *kind, uint64_t hash)
{
	char *p = rt_file_format_str(rt_file_format_str(rt_file_format_str(buf, dir), "/"), kind);
	*p++ = '.';
	for (int i = 15; i >= 0; i--)
		*p++ = "0123456789abcdef"[(hash >> (4 * i)) & 15];
	*p = 0;
}

static int rt_kept_usable(const char *kind)
{
	return rt_g.spool[0] && !rt_g.no_syscalls && strlen(kind) < 8;
}

/* The file of dir, whole and checked, or NULL; from_cache: the user's
 * cache, whose files must be the user's own. */
static struct rt_kept_head *rt_kept_load(const char *dir, const char *kind, uint64_t hash, int from_cache)
{
	/* (the path to measure, on the stack: this runs inside the program's
	 * dlopen, on a stack it sized) */
	char *path = alloca(RT_KEPT_PATH(dir, kind));
	rt_kept_path(path, dir, kind, hash);
	int fd = rt_file_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return NULL;
	struct stat st;
	struct rt_kept_head *k = MAP_FAILED;
	size_t size = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!from_cache || st.st_uid == geteuid()) &&
	    st.st_size >= (off_t)sizeof(*k) && st.st_size <= (off_t)1 << 30) {
		size = (size_t)st.st_size;
		k = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	size_t got = 0;
	while (k != MAP_FAILED && got < size) {
		ssize_t r = read(fd, (char *)k + got, size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (k == MAP_FAILED)
		return NULL;
	char want[8] = {0};
	memcpy(want, kind, strlen(kind));
	if (got != size || memcmp(k->magic, RT_KEPT_MAGIC, 8) != 0 || memcmp(k->kind, want, 8) != 0 ||
	    k->hash != hash || k->len != size - sizeof(*k)) {
		munmap(k, size);
		return NULL;
	}
	return k;
}

void *rt_kept_read(const char *kind, uint64_t hash, size_t *len)
{
	*len = 0;
	if (!rt_kept_usable(kind))
		return NULL;
	hash = rt_kept_name(hash);
	struct rt_kept_head *k = rt_kept_load(rt_g.spool, kind, hash, 0);
	if (!k && rt_g.cache[0])
		k = rt_kept_load(rt_g.cache, kind, hash, 1);
	if (!k)
		return NULL;
	*len = (size_t)k->len;
	return k + 1;
}

void rt_kept_free(void *data, size_t len)
{
	if (data)
		munmap((struct rt_kept_head *)data - 1, len + sizeof(struct rt_kept_head));
}

void rt_kept_write(const char *kind, uint64_t hash, const void *data, size_t len)
{
	if (!rt_kept_usable(kind))
		return;
	hash = rt_kept_name(hash);
	size_t size = sizeof(struct rt_kept_head) + len;
	struct rt_kept_head *k = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k == MAP_FAILED)
		return;
	memcpy(k->magic, RT_KEPT_MAGIC, 8);
	memset(k->kind, 0, 8);
	memcpy(k->kind, kind, strlen(kind));
	k->hash = hash;
	k->len = len;
	memcpy(k + 1, data, len);
	char *path = alloca(RT_KEPT_PATH(rt_g.spool, kind));
	rt_kept_path(path, rt_g.spool, kind, hash);
	rt_file_write(path, k, size);
	munmap(k, size);
}
