/*
 * util.h - small helpers for the stint tools (never linked into the
 * runtime): diagnostics, allocation that exits on exhaustion, UTF-8, files.
 *
 * Error policy: library code (analysis/, output/, recorder/, symbol/,
 * format/) returns errors (-1, with the words in an err buffer where it has
 * them) and leaves what to do to its caller; only cmd/ calls die().  The
 * one exception is memory: every allocation goes through the x*alloc
 * helpers below, which exit with the one line "stint: out of memory", as
 * nothing lower down could do better.  Messages start with "stint: ", state
 * the error first, quote the subject, and end without a period.
 */
#ifndef STINT_UTIL_H
#define STINT_UTIL_H

#include <stddef.h>
#include <stdint.h>

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Append to *words (malloc'd or NULL), after a space unless it is empty,
 * the word fmt makes (the data file's notes: "key=value ..."). */
void util_add_word(char **words, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Room for element n (the next one) of an array that only this helper
 * grows, from NULL, one element at a time: its capacity is the power of
 * two at or above n, so it doubles when n is one (a realloc to n + 1
 * elements each time would copy the whole array each time).
 *   UTIL_GROW1(a, n); a[n++] = x;
 */
void *util_grow1(void *p, size_t n, size_t size);
#define UTIL_GROW1(p, n) ((p) = util_grow1((p), (n), sizeof(*(p))))

/*
 * Room for index i of an array indexed by number (a function's, say),
 * *cap elements long, whose elements not yet set are zero: the capacity
 * doubles (from 256 when 0) until it holds i, and the new elements are
 * zero.  The caller tests i >= *cap first (a hot path keeps that inline).
 *   if (i >= cap) UTIL_GROW_ZEROED(a, cap, i);
 */
void *util_grow_zeroed(void *p, uint32_t *cap, uint32_t i, size_t size);
#define UTIL_GROW_ZEROED(p, cap, i) ((p) = util_grow_zeroed((p), &(cap), (i), sizeof(*(p))))

/*
 * An open-addressing index over a caller's array of entries: its slots
 * hold entry numbers (UTIL_INDEX_EMPTY: none), probed linearly from the
 * hash of a key; the entries, their keys and what makes two equal stay
 * the caller's.  The one hash table of the tools:
 *
 *   util_index_reserve(&ix, n, entry_hash, ctx);       room for entry n
 *   uint32_t *s = util_index_probe(&ix, hash(key));
 *   for (; *s != UTIL_INDEX_EMPTY; s = util_index_next(&ix, s))
 *           if (same(&entries[*s], key))
 *                   return *s;
 *   *s = n;                                             entry n is key's
 *
 * util_index_reserve keeps the table at most half full, rebuilding it
 * with entry_hash(ctx, i) of entries 0..n-1 when it grows.
 */
#define UTIL_INDEX_EMPTY (~0u)
struct util_index {
	uint32_t *slot;
	uint32_t cap; /* a power of two (0 before the first reserve) */
};
void util_index_reserve(struct util_index *ix, uint32_t n, uint64_t (*entry_hash)(const void *ctx, uint32_t i),
			const void *ctx);
void util_index_free(struct util_index *ix);

static inline uint32_t *util_index_probe(const struct util_index *ix, uint64_t h)
{
	return &ix->slot[(uint32_t)h & (ix->cap - 1)];
}

static inline uint32_t *util_index_next(const struct util_index *ix, uint32_t *s)
{
	return s + 1 == ix->slot + ix->cap ? ix->slot : s + 1;
}

/* A 64-bit mix of x (for keys made of numbers) and of a string. */
uint64_t util_hash64(uint64_t x);
uint64_t util_hash_str(const char *s, uint64_t seed);

/*
 * Length of the UTF-8 sequence at s: 1 for ASCII, 2 to 4 for a valid
 * multi-byte character, 0 when the bytes are not UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, a sequence cut short).
 */
size_t util_utf8_len(const char *s);

/* Read a whole file; NULL with errno set on failure.  *len gets its size. */
char *util_read_file(const char *path, size_t *len);

/*
 * A command line as /proc/PID/cmdline gives it (each argument ended by a
 * NUL; n bytes, with room for one more, as util_read_file's) made one
 * string in place, the arguments joined by spaces.  A title a program wrote
 * over its arguments (setproctitle: "nginx: worker process") ends in NULs
 * that are padding, not empty arguments: dropped.  Returns the length.
 */
size_t util_args_joined(char *s, size_t n);

/*
 * Read a whole file named by a recording (a spool file, a source file): only
 * a regular file (not a FIFO, a device or /dev/zero: EINVAL), at most max
 * bytes (EFBIG), never blocking on open; with nofollow, not through a
 * symbolic link as the last component (ELOOP).  NULL with errno set.
 */
char *util_read_regular(const char *path, size_t max, int nofollow, size_t *len);

/*
 * A source file a data file names, read for annotate and the HTML page as
 * util_read_regular does, but only if the data file's owner could read it
 * too (util_source_reader): a data file of another user, run through
 * stint html by root, put lines of a root-only file into a page made to be
 * shared.  NULL with errno EACCES when it could not.
 */
char *util_read_source(const char *path, size_t max, size_t *len);
void util_source_reader(uid_t owner); /* the data file's owner (default: us) */

/*
 * Creating an output file (a data file, an export, a page) safely: the
 * bytes go to a new file made by mkstemp() in the target's directory (never
 * an existing file, never through a link), which is renamed over the target
 * only when complete.  The temporary file is removed when writing fails, when
 * stint exits meanwhile (die()), and when SIGINT, SIGTERM or SIGHUP end it.
 */
struct util_out {
	int fd;      /* write here */
	char *tmp;   /* the temporary file's path */
	char *path;  /* the target */
	int slot;    /* its entry in the cleanup list, -1 if none */
	mode_t mode; /* the file's mode, less the umask: 0644 unless set before commit */
};

/* Start writing path; 0, or -1 with errno set.  A device or a pipe is
 * written as it is, never replaced; a name of one of stint's descriptors
 * (/dev/stdout, /dev/fd/3) is written through that descriptor, at its
 * offset (EBADF if it is not open for writing). */
int util_out_open(struct util_out *o, const char *path);

/* 1 if path names an open descriptor rather than a file (/dev/stdout,
 * /dev/stderr, /dev/fd/N, /proc/self/fd/N, or a link to one of them). */
int util_names_descriptor(const char *path);

/* Close, give the file its mode less the umask, rename it over the target;
 * 0, or -1 with errno set and the temporary file removed. */
int util_out_commit(struct util_out *o);

/* Give up: close and remove the temporary file. */
void util_out_abort(struct util_out *o);

/* Remove, at SIGINT/SIGTERM/SIGHUP/SIGPIPE or exit, a temporary file made by other means
 * (-1 if the list is full); util_tmp_forget(slot) once it is gone or kept. */
int util_tmp_guard(const char *path);
void util_tmp_forget(int slot);

/* Remove every temporary file listed now (async-signal-safe: for a signal
 * handler that ends stint with _exit). */
void util_tmp_remove_all(void);

/* Sort n 64-bit numbers, ascending. */
void util_sort_u64(uint64_t *v, size_t n);

/* The last component of path ("/a/b.c" -> "b.c"); "" for NULL. */
const char *util_file_name(const char *path);

/* Path p tidied in place, lexically: "." components and doubled slashes
 * dropped, "dir/.." folded ("/a/./b/../c" -> "/a/c"; a relative path keeps
 * the ".." it cannot fold: "./x/../../y" -> "../y").  One source file
 * reached as "../inc/x.h" and as "inc/x.h" from units of two directories is
 * then one file, its functions one function. */
void util_path_tidy(char *p);

/* Directory that holds the running stint executable. */
const char *util_self_dir(void);

/* Nanoseconds of CLOCK_MONOTONIC and CLOCK_REALTIME. */
uint64_t util_mono_ns(void);
uint64_t util_wall_ns(void);

#endif
