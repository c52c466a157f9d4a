/*
 * fmt_sample.h - the encoding of a thread's sampled call stacks, in the
 * EVTS chunk of a sampling data file.  Header-only.
 *
 * Per sample:
 *   varint  nanoseconds since the thread's previous sample (the first:
 *           since the thread's start time)
 *   varint  frames << 1 | cut    (cut: the unwinder stopped before the
 *                                  outermost frame)
 *   varint  the innermost frame's address (where the sample hit)
 *   varint  zigzag(address - previous frame's address), for each caller;
 *           callers are return addresses
 */
#ifndef STINT_FMT_SAMPLE_H
#define STINT_FMT_SAMPLE_H

#include <stdint.h>
#include "fmt_event.h"

/* frames kept of a stack: the deepest a 65000-byte copy of the user stack
 * (--stack-size's most) holds, 16 bytes a frame; deeper stacks are cut,
 * and counted so (1024 cut 1500-deep recursions without a word) */
#define FMT_SAMPLE_MAX_FRAMES 4096

static inline uint64_t fmt_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t fmt_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * The address a sampled frame's pc stands for: the leaf's (where the
 * sample hit) as it is, a caller's return address less one.  A return
 * address may lie past its function's end (a call as its last
 * instruction) or on the next source line; the call instruction, one byte
 * back, is in the calling function and on the call's line.
 */
static inline uint64_t fmt_caller_pc(uint64_t pc, int leaf)
{
	return leaf ? pc : pc - 1;
}

/* Room needed for one sample of n frames. */
static inline size_t fmt_sample_max_size(unsigned n)
{
	return 30 + (size_t)n * 10;
}

static inline uint8_t *fmt_put_sample(uint8_t *p, uint64_t dt, const uint64_t *pcs, unsigned n,
				      int cut)
{
	p = fmt_put_varint(p, dt);
	p = fmt_put_varint(p, ((uint64_t)n << 1) | (cut ? 1 : 0));
	for (unsigned i = 0; i < n; i++)
		p = fmt_put_varint(p, i ? fmt_zigzag((int64_t)(pcs[i] - pcs[i - 1])) : pcs[0]);
	return p;
}

/*
 * Decode one sample; returns 1, 0 at the end, -1 on bad bytes.  pcs has
 * room for FMT_SAMPLE_MAX_FRAMES.
 */
static inline int fmt_get_sample(const uint8_t **pp, const uint8_t *end, uint64_t *dt,
				 uint64_t *pcs, unsigned *n, int *cut)
{
	if (*pp >= end)
		return 0;
	uint64_t v;
	if (fmt_get_varint(pp, end, dt) < 0 || fmt_get_varint(pp, end, &v) < 0)
		return -1;
	*cut = (int)(v & 1);
	v >>= 1;
	if (v > FMT_SAMPLE_MAX_FRAMES)
		return -1;
	*n = (unsigned)v;
	for (unsigned i = 0; i < *n; i++) {
		uint64_t x;
		if (fmt_get_varint(pp, end, &x) < 0)
			return -1;
		pcs[i] = i ? pcs[i - 1] + (uint64_t)fmt_unzigzag(x) : x;
	}
	return 1;
}

#endif
