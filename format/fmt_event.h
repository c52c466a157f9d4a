/*
 * fmt_event.h - the compact per-thread event encoding.
 *
 * Shared, header-only, by the in-process runtime (which writes records into
 * its shared-memory spool) and by the reader (which decodes the same bytes
 * from the spool and from the EVTS chunks of a data file).  Nothing here may
 * call into the rest of stint: the runtime links none of it.
 *
 * A thread's events form one byte stream.  Each record starts with a header
 * byte that is never zero, so a zero byte marks the end of what was written
 * (the runtime stores the header byte last, or a short record with one store
 * that also writes zeros past it, so a record cut short by SIGKILL is
 * invisible).
 *
 *   header bits 7..6  kind: 0 EXT, 1 EXIT, 2 ENTER (cached), 3 ENTER_NEW
 *
 *   EXIT / ENTER / ENTER_NEW:
 *     bit 5     the thread left the CPU during the interval that ends here
 *     bit 4     more delta bits follow as a LEB128 varint
 *     bits 3..0 the low four bits of the delta
 *     ENTER      + 1 byte: slot of the (function, call site) pair in the
 *                  pair cache
 *     ENTER_NEW  + 1 flags byte, then the function: bit 0 set, its 8-byte
 *                  address (little-endian), else 1 byte, its slot in the
 *                  function cache; then the call site the same way (bit 1:
 *                  8 bytes, else its slot in the site cache).  The pair
 *                  and the addresses given in full replace the entries of
 *                  their slots.
 *
 *   EXT: bits 5..0 the subtype (never 0); then a LEB128 delta, one flags
 *        byte (bit 0: OS event), then the subtype's payload.
 *
 * The delta is in clock ticks since the previous record of the thread (the
 * first record: since the thread's start time).  Three caches of 256
 * entries, all zero at the start of the stream: functions by
 * fmt_cache_slot(fn), call sites by fmt_cache_slot(site), and (function,
 * site) pairs by fmt_pair_slot(fn, site).  Writer and reader keep identical
 * caches, so the stream can only be decoded from its beginning.  A call
 * made again from the same place, the common case, is then 2 bytes.
 *
 * The call site of an entry is the return address of the call that entered
 * the function (0: not known), so its source line is that of site - 1.
 *
 * Format version 1 (fmt_decoder.nosites): no sites, no pair cache; ENTER is
 * the function's slot, ENTER_NEW its 8-byte address.
 *
 * An EXIT closes the innermost open frame.  EXT_EXIT_FN names the function
 * it closes; the runtime writes it when the function exiting is not the one
 * it believes innermost (longjmp, exceptions, a very deep stack).
 */
#ifndef STINT_FMT_EVENT_H
#define STINT_FMT_EVENT_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>

enum fmt_kind { FMT_K_EXT = 0, FMT_K_EXIT = 1, FMT_K_ENTER = 2, FMT_K_ENTER_NEW = 3 };

enum fmt_ext {
	FMT_X_PAD = 1,     /* spool only: the rest of this chunk is unused */
	FMT_X_EXIT_FN = 2, /* payload: 8-byte address of the function exiting */
	FMT_X_END = 3,     /* the thread ended (no payload) */
	FMT_X_INHERIT = 4, /* payload: 8-byte address: a frame open at fork() */
	FMT_X_LOST = 5,    /* payload: varint count of events not recorded */
	FMT_X_TICK = 6,    /* a timestamp only: a fatal signal arrived, or the
			    * program's time ends where overhead starts (no payload) */
	FMT_X_OVERHEAD = 7,/* the interval ending here was the profiler's own
			    * time: a chunk switch, noting functions (no payload) */
};

#define FMT_OS_BIT 0x20u
#define FMT_MORE_BIT 0x10u
#define FMT_CACHE_SLOTS 256
#define FMT_NEW_FN 1u   /* ENTER_NEW flags: the function's address follows */
#define FMT_NEW_SITE 2u /* ENTER_NEW flags: the site's address follows */
#define FMT_MAX_RECORD 32 /* no record is longer than this */
/* chunk sizes of the spool layout (fmt_spool.h), for EVTC chunks */
#define FMT_EVENT_FIRST_CHUNK (256u << 10)
#define FMT_EVENT_MAX_CHUNK (8u << 20)

static inline unsigned fmt_cache_slot(uint64_t addr)
{
	return (unsigned)((addr * 0x9E3779B97F4A7C15ull) >> 56);
}

static inline unsigned fmt_pair_slot(uint64_t fn, uint64_t site)
{
	/* one multiply, as for a function alone: the probe's hot path */
	return (unsigned)(((fn ^ site) * 0x9E3779B97F4A7C15ull) >> 56);
}

/* The caches of an event stream (writer and reader alike). */
struct fmt_caches {
	uint64_t pair[FMT_CACHE_SLOTS][2]; /* (function, site) */
	uint64_t fn[FMT_CACHE_SLOTS];
	uint64_t site[FMT_CACHE_SLOTS];
};

static inline uint8_t *fmt_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline void fmt_put_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8); /* x86_64 and aarch64 are little-endian */
}

static inline uint64_t fmt_get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/*
 * Write one EXIT/ENTER/ENTER_NEW record at p (never more than
 * FMT_MAX_RECORD bytes) and return the end.  The header byte is stored last.
 */
static inline uint8_t *fmt_put_common(uint8_t *p, unsigned kind, int os, uint64_t delta,
				      const uint8_t *payload, unsigned npayload)
{
	uint8_t h = (uint8_t)((kind << 6) | (os ? FMT_OS_BIT : 0) | (delta & 0xf));
	uint8_t *q = p + 1;
	if (delta >> 4) {
		h |= FMT_MORE_BIT;
		q = fmt_put_varint(q, delta >> 4);
	}
	for (unsigned i = 0; i < npayload; i++)
		q[i] = payload[i];
	q += npayload;
	__asm__ volatile("" ::: "memory");
	*(volatile uint8_t *)p = h;
	return q;
}

static inline uint8_t *fmt_put_ext(uint8_t *p, unsigned sub, int os, uint64_t delta,
				   const uint8_t *payload, unsigned npayload)
{
	uint8_t *q = fmt_put_varint(p + 1, delta);
	*q++ = os ? 1 : 0;
	for (unsigned i = 0; i < npayload; i++)
		q[i] = payload[i];
	q += npayload;
	__asm__ volatile("" ::: "memory");
	*(volatile uint8_t *)p = (uint8_t)sub;
	return q;
}

/*
 * The payload of an entry record of fn from site, as c holds them (which it
 * then does): its pair's slot, or in full (FMT_MAX_ENTER bytes at most).
 * Returns the payload's length and sets *kind to FMT_K_ENTER or
 * FMT_K_ENTER_NEW.  The runtime's hot path writes the ENTER case itself.
 */
#define FMT_MAX_ENTER 17
static inline unsigned fmt_enter_payload(uint8_t *b, struct fmt_caches *c, uint64_t fn, uint64_t site,
					 unsigned *kind)
{
	unsigned ps = fmt_pair_slot(fn, site), fs = fmt_cache_slot(fn), ss = fmt_cache_slot(site), n = 1;
	if (c->pair[ps][0] == fn && c->pair[ps][1] == site) {
		*kind = FMT_K_ENTER;
		b[0] = (uint8_t)ps;
		return 1;
	}
	*kind = FMT_K_ENTER_NEW;
	c->pair[ps][0] = fn;
	c->pair[ps][1] = site;
	b[0] = 0;
	if (c->fn[fs] == fn) {
		b[n++] = (uint8_t)fs;
	} else {
		b[0] |= FMT_NEW_FN;
		c->fn[fs] = fn;
		fmt_put_u64(b + n, fn);
		n += 8;
	}
	if (c->site[ss] == site) {
		b[n++] = (uint8_t)ss;
	} else {
		b[0] |= FMT_NEW_SITE;
		c->site[ss] = site;
		fmt_put_u64(b + n, site);
		n += 8;
	}
	return n;
}

/* One decoded record. */
struct fmt_rec {
	unsigned kind;  /* enum fmt_kind, EXT records give their subtype in ext */
	unsigned ext;   /* enum fmt_ext, for FMT_K_EXT */
	int os;         /* interval ending here had an OS event */
	uint64_t delta; /* ticks since the previous record */
	uint64_t addr;  /* ENTER*, EXIT_FN, INHERIT */
	uint64_t site;  /* ENTER*: the call's return address, 0 if not known */
	uint64_t count; /* LOST */
};

struct fmt_decoder {
	const uint8_t *p, *end;
	const uint8_t *chunk_end; /* chunked layout: where the current chunk ends */
	unsigned chunk;           /* chunked layout: its number */
	int nosites;              /* format version 1: entries carry no site */
	struct fmt_caches c;
};

static inline void fmt_decoder_init(struct fmt_decoder *d, const uint8_t *p, size_t n)
{
	d->p = p;
	d->end = p ? p + n : p; /* a thread without events has none, not even a buffer */
	d->chunk_end = NULL;
	d->chunk = 0;
	d->nosites = 0;
	memset(&d->c, 0, sizeof(d->c));
}

/*
 * The bytes are a spool buffer's chunks as the runtime laid them out (an
 * EVTC chunk): chunk i is first_chunk << min(i, 5) bytes long, and a PAD
 * record, or the chunk's end, continues at the next chunk.
 */
static inline void fmt_decoder_chunked(struct fmt_decoder *d, uint64_t first_chunk, uint64_t max_chunk)
{
	d->chunk = 0;
	d->chunk_end = (uint64_t)(d->end - d->p) > first_chunk ? d->p + first_chunk : d->end;
	(void)max_chunk;
}

static inline int fmt_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		if (p >= end || shift > 63)
			return -1;
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*pp = p;
	*out = v;
	return 0;
}

/*
 * Decode the next record.  Returns 1 for a record, 0 at the end of the
 * stream (no bytes left, or a zero byte), -1 if the bytes are not a valid
 * record (the decoder then stays at the bad record).
 */
static inline uint64_t fmt_chunk_size(unsigned i, uint64_t first, uint64_t max)
{
	uint64_t s = first;
	while (i-- && s < max)
		s <<= 1;
	return s;
}

static inline int fmt_decode(struct fmt_decoder *d, struct fmt_rec *r);

/* An entry's payload at *pp: function and call site into r, the caches
 * updated as the writer did.  -1 if it is not valid. */
static inline int fmt_get_enter(struct fmt_decoder *d, const uint8_t **pp, const uint8_t *end,
				struct fmt_rec *r)
{
	const uint8_t *p = *pp;
	struct fmt_caches *c = &d->c;
	if (d->nosites) { /* version 1 */
		if (r->kind == FMT_K_ENTER) {
			if (p >= end)
				return -1;
			r->addr = c->fn[*p++];
		} else {
			if (end - p < 8)
				return -1;
			r->addr = fmt_get_u64(p);
			p += 8;
			c->fn[fmt_cache_slot(r->addr)] = r->addr;
		}
	} else if (r->kind == FMT_K_ENTER) {
		if (p >= end)
			return -1;
		r->addr = c->pair[*p][0];
		r->site = c->pair[*p][1];
		p++;
	} else {
		if (p >= end)
			return -1;
		unsigned flags = *p++;
		if (flags & ~(FMT_NEW_FN | FMT_NEW_SITE))
			return -1;
		for (int k = 0; k < 2; k++) {
			uint64_t *cache = k ? c->site : c->fn, v;
			if (flags & (k ? FMT_NEW_SITE : FMT_NEW_FN)) {
				if (end - p < 8)
					return -1;
				v = fmt_get_u64(p);
				p += 8;
				cache[fmt_cache_slot(v)] = v;
			} else {
				if (p >= end)
					return -1;
				v = cache[*p++];
			}
			*(k ? &r->site : &r->addr) = v;
		}
		unsigned ps = fmt_pair_slot(r->addr, r->site);
		c->pair[ps][0] = r->addr;
		c->pair[ps][1] = r->site;
	}
	if (!r->addr)
		return -1;
	*pp = p;
	return 0;
}

/* Chunked layout: move on to the next chunk. */
static inline int fmt_next_chunk(struct fmt_decoder *d, struct fmt_rec *r, uint64_t first, uint64_t max)
{
	if (!d->chunk_end || d->chunk_end >= d->end)
		return 0;
	d->p = d->chunk_end;
	d->chunk++;
	uint64_t size = fmt_chunk_size(d->chunk, first, max);
	d->chunk_end = (uint64_t)(d->end - d->p) > size ? d->p + size : d->end;
	return fmt_decode(d, r);
}

static inline __attribute__((always_inline)) int fmt_decode(struct fmt_decoder *d, struct fmt_rec *r)
{
	const uint8_t *p = d->p, *end = d->chunk_end ? d->chunk_end : d->end;
	if (d->chunk_end && (p >= end || *p == 0 || ((*p & 0xc0) == 0 && (*p & 0x3f) == FMT_X_PAD)))
		return fmt_next_chunk(d, r, FMT_EVENT_FIRST_CHUNK, FMT_EVENT_MAX_CHUNK);
	if (p >= end || *p == 0)
		return 0;
	uint8_t h = *p++;
	r->kind = h >> 6;
	r->addr = 0;
	r->site = 0;
	r->count = 0;
	r->ext = 0;
	if (r->kind != FMT_K_EXT) {
		r->os = !!(h & FMT_OS_BIT);
		r->delta = h & 0xf;
		if (h & FMT_MORE_BIT) {
			uint64_t hi;
			if (fmt_get_varint(&p, end, &hi) < 0)
				return -1;
			r->delta |= hi << 4;
		}
		if (r->kind == FMT_K_ENTER || r->kind == FMT_K_ENTER_NEW) {
			if (fmt_get_enter(d, &p, end, r) < 0)
				return -1;
		}
		d->p = p;
		return 1;
	}
	r->ext = h & 0x3f;
	if (fmt_get_varint(&p, end, &r->delta) < 0 || p >= end)
		return -1;
	r->os = *p++ & 1;
	switch (r->ext) {
	case FMT_X_PAD:
	case FMT_X_END:
	case FMT_X_TICK:
	case FMT_X_OVERHEAD:
		break;
	case FMT_X_EXIT_FN:
	case FMT_X_INHERIT:
		if (end - p < 8)
			return -1;
		r->addr = fmt_get_u64(p);
		p += 8;
		break;
	case FMT_X_LOST:
		if (fmt_get_varint(&p, end, &r->count) < 0)
			return -1;
		break;
	default:
		return -1;
	}
	d->p = p;
	return 1;
}

#endif
