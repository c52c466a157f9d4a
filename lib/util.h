/*
 * util.h - small helpers for the stint tools (never linked into the
 * runtime): diagnostics, allocation that dies on exhaustion, byte buffers.
 *
 * Error tiers: library code returns -1 and leaves the words to its caller;
 * only cmd/ calls die().  Messages start with "stint: ", state the error
 * first, quote the subject, and end without a period.
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

/*
 * Length of the UTF-8 sequence at s: 1 for ASCII, 2 to 4 for a valid
 * multi-byte character, 0 when the bytes are not UTF-8 (a stray
 * continuation byte, an overlong form, a surrogate, a sequence cut short).
 */
size_t util_utf8_len(const char *s);

/* Read a whole file; NULL with errno set on failure.  *len gets its size. */
char *util_read_file(const char *path, size_t *len);

/*
 * Read a whole file named by a recording (a spool file, a source file): only
 * a regular file (not a FIFO, a device or /dev/zero: EINVAL), at most max
 * bytes (EFBIG), never blocking on open; with nofollow, not through a
 * symbolic link as the last component (ELOOP).  NULL with errno set.
 */
char *util_read_regular(const char *path, size_t max, int nofollow, size_t *len);

/*
 * Creating an output file (a data file, an export, a page) safely: the
 * bytes go to a new file made by mkstemp() in the target's directory (never
 * an existing file, never through a link), which is renamed over the target
 * only when complete.  The temporary file is removed when writing fails, when
 * stint exits meanwhile (die()), and when SIGINT, SIGTERM or SIGHUP end it.
 */
struct util_out {
	int fd;     /* write here */
	char *tmp;  /* the temporary file's path */
	char *path; /* the target */
	int slot;   /* its entry in the cleanup list, -1 if none */
};

/* Start writing path; 0, or -1 with errno set. */
int util_out_open(struct util_out *o, const char *path);

/* Close, give the file mode 0644 less the umask, rename it over the target;
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

/* Directory that holds the running stint executable. */
const char *util_self_dir(void);

/* Nanoseconds of CLOCK_MONOTONIC and CLOCK_REALTIME. */
uint64_t util_mono_ns(void);
uint64_t util_wall_ns(void);

#endif
