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

/* Sort n 64-bit numbers, ascending. */
void util_sort_u64(uint64_t *v, size_t n);

/* Directory that holds the running stint executable. */
const char *util_self_dir(void);

/* Nanoseconds of CLOCK_MONOTONIC and CLOCK_REALTIME. */
uint64_t util_mono_ns(void);
uint64_t util_wall_ns(void);

#endif
