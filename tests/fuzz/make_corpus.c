/*
 * make_corpus.c - writes the fuzz target's seed corpus (tests/fuzz/corpus)
 * and the malformed-file corpus of the test suite: small valid data files
 * of both methods ("ok-*.data": every command must succeed, exit 0) and
 * hostile or damaged ones ("bad-*.data": one warning or error line, exit
 * 2 or 3, never a crash).  Run by hand when the format changes:
 *   make_corpus DIR
 * The files are committed, so the tests do not depend on this program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../unit/evbuild.h"
#include "../../format/fmt_sample.h"

static const char *dir;

static char *path_of(const char *name)
{
	static char p[4096];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static uint8_t *load(const char *name, size_t *n)
{
	FILE *f = fopen(path_of(name), "rb");
	if (!f)
		abort();
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*n + 1);
	if (fread(b, 1, *n, f) != *n)
		abort();
	fclose(f);
	return b;
}

static void store(const char *name, const uint8_t *b, size_t n)
{
	FILE *f = fopen(path_of(name), "wb");
	if (!f || fwrite(b, 1, n, f) != n)
		abort();
	fclose(f);
}

/* An instrumentation file: two processes, threads, recursion, a library,
 * an exit after longjmp, a frame inherited across fork, lost events. */
static void write_instr(const char *name, const char *const *names, int nnames)
{
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, nnames);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	for (int i = 0; i < 6; i++)
		evb_enter(&b, 10 + (uint64_t)i, 0x2000, i == 3); /* recursion */
	evb_enter(&b, 30, 0x80000 + 0x1000 * (uint64_t)(nnames - 1), 1); /* into the library */
	evb_exit(&b, 40, 0);
	evb_exit_fn(&b, 50, 0x2000, 0); /* longjmp out of the recursion */
	for (int i = 0; i < 20; i++) {
		evb_enter(&b, 60 + 4 * (uint64_t)i, 0x3000, 0);
		evb_exit(&b, 62 + 4 * (uint64_t)i, i % 3 == 0);
	}
	evb_exit(&b, 200, 0);
	evb_add_thread(&d, &b, 100);
	evb_init(&b);
	evb_inherit(&b, 0x1000);
	evb_enter(&b, 5, 0x3000, 0);
	b.p = fmt_put_ext(b.p, FMT_X_LOST, 0, 3, (const uint8_t[]){7}, 1);
	evb_exit(&b, 9, 0);
	b.p = fmt_put_ext(b.p, FMT_X_END, 0, 1, NULL, 0);
	evb_add_thread(&d, &b, 101);
	d.threads[1].name = (free(d.threads[1].name), strdup("worker"));
	if (fmt_write(&d, path_of(name)) < 0)
		abort();
	fmt_data_free(&d);
}

/* A sampling file with source lines. */
static void write_sampling(const char *name)
{
	static const char *const names[] = {"main", "parse", "recurse", "lib:memcpy"};
	struct fmt_data d;
	evb_data(&d, names, 4);
	free(d.method);
	d.method = strdup("sampling");
	free(d.notes);
	d.notes = strdup("lost=2 cut=1 stack=8192");
	d.rate = 4000;
	d.ns_per_tick = 1;
	struct fmt_process *p = &d.procs[0];
	p->nlines = 3;
	p->lines = calloc(3, sizeof(*p->lines));
	p->lines[0] = (struct fmt_line){.addr = 0x1010, .file = strdup("main.c"), .line = 10};
	p->lines[1] = (struct fmt_line){.addr = 0x2010, .file = strdup("parse.c"), .line = 20};
	p->lines[2] = (struct fmt_line){.addr = 0x3008, .file = strdup("rec.c"), .line = 30};
	uint8_t *buf = malloc(1 << 16), *q = buf;
	uint64_t stacks[][6] = {{0x2010, 0x1011, 0}, {0x3008, 0x3009, 0x3009, 0x2011, 0x1011, 0},
				{0x84000, 0x2011, 0x1011, 0}, {0x1010, 0}, {0x999999, 0}};
	for (int r = 0; r < 10; r++)
		for (size_t s = 0; s < sizeof(stacks) / sizeof(stacks[0]); s++) {
			unsigned n = 0;
			while (stacks[s][n])
				n++;
			q = fmt_put_sample(q, 250000, stacks[s], n, s == 4);
		}
	d.threads = calloc(1, sizeof(*d.threads));
	d.nthreads = 1;
	d.threads[0].tid = 100;
	d.threads[0].name = strdup("main");
	d.threads[0].ev_owned = buf;
	d.threads[0].ev = buf;
	d.threads[0].ev_len = (size_t)(q - buf);
	d.threads[0].nevents = 50;
	if (fmt_write(&d, path_of(name)) < 0)
		abort();
	fmt_data_free(&d);
}

struct chunk {
	size_t off;
	uint32_t tag;
	uint64_t len;
};

static int chunks(const uint8_t *b, size_t n, struct chunk *out, int max)
{
	int k = 0;
	for (size_t off = FMT_HDR_SIZE; off + FMT_CHUNK_HDR <= n && k < max; k++) {
		out[k].off = off;
		memcpy(&out[k].tag, b + off, 4);
		memcpy(&out[k].len, b + off + 8, 8);
		off += FMT_CHUNK_HDR + out[k].len;
	}
	return k;
}

static const struct chunk *find(const struct chunk *c, int nc, uint32_t tag)
{
	for (int i = 0; i < nc; i++)
		if (c[i].tag == tag)
			return &c[i];
	abort();
}

static void fix_crc(uint8_t *b, const struct chunk *c)
{
	uint64_t span = c->len;
	if ((c->tag == FMT_EVTS || c->tag == FMT_EVTC) && span > FMT_EVTS_CRC_SPAN)
		span = FMT_EVTS_CRC_SPAN;
	uint32_t crc = (uint32_t)crc32(0L, b + c->off + FMT_CHUNK_HDR, (uInt)span);
	memcpy(b + c->off + 4, &crc, 4);
}

/* from: a copy of the chunk with this tag inserted after it */
static void repeat(const char *from, uint32_t tag, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	struct chunk c[64];
	const struct chunk *x = find(c, chunks(b, n, c, 64), tag);
	size_t clen = FMT_CHUNK_HDR + x->len, at = x->off + clen;
	uint8_t *o = malloc(n + clen);
	memcpy(o, b, at);
	memcpy(o + at, b + x->off, clen);
	memcpy(o + at + clen, b + at, n - at);
	store(to, o, n + clen);
	free(o);
	free(b);
}

/* from: the u32 at payload offset `at` of the chunk with this tag set to v,
 * checksum made valid again (or left, with fix 0) */
static void poke(const char *from, uint32_t tag, size_t at, uint32_t v, int fix, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	struct chunk c[64];
	const struct chunk *x = find(c, chunks(b, n, c, 64), tag);
	memcpy(b + x->off + FMT_CHUNK_HDR + at, &v, 4);
	if (fix)
		fix_crc(b, x);
	store(to, b, n);
	free(b);
}

/* from: the chunk with this tag given another tag (its checksum, of the
 * payload only, stays valid) */
static void retag(const char *from, uint32_t tag, uint32_t newtag, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	struct chunk c[64];
	const struct chunk *x = find(c, chunks(b, n, c, 64), tag);
	memcpy(b + x->off, &newtag, 4);
	store(to, b, n);
	free(b);
}

/* from: without the chunk with this tag */
static void drop(const char *from, uint32_t tag, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	struct chunk c[64];
	const struct chunk *x = find(c, chunks(b, n, c, 64), tag);
	size_t clen = FMT_CHUNK_HDR + x->len;
	memmove(b + x->off, b + x->off + clen, n - x->off - clen);
	store(to, b, n - clen);
	free(b);
}

static void flip(const char *from, uint32_t tag, size_t at, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	struct chunk c[64];
	const struct chunk *x = find(c, chunks(b, n, c, 64), tag);
	b[x->off + FMT_CHUNK_HDR + at] ^= 0x04;
	store(to, b, n);
	free(b);
}

static void cut(const char *from, size_t keep, const char *to)
{
	size_t n;
	uint8_t *b = load(from, &n);
	store(to, b, keep < n ? keep : n);
	free(b);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc % 2) {
		fprintf(stderr, "usage: make_corpus DIR [REAL.data NAME]...\n");
		return 2;
	}
	dir = argv[1];
	for (int a = 2; a + 1 < argc; a += 2) {
		struct fmt_data d;
		char err[512], name[256];
		if (fmt_read(argv[a], &d, err, sizeof(err)) < 0 || d.damage) {
			fprintf(stderr, "make_corpus: %s\n", d.damage ? d.damage : err);
			return 1;
		}
		/* events within the spool's first chunk read the same flat */
		for (uint32_t t = 0; t < d.nthreads; t++) {
			if (d.threads[t].chunked && d.threads[t].ev_len > FMT_EVENT_FIRST_CHUNK) {
				fprintf(stderr, "make_corpus: %s: too many events for a seed\n", argv[a]);
				return 1;
			}
			d.threads[t].chunked = 0;
		}
		snprintf(name, sizeof(name), "ok-real-%s.data", argv[a + 1]);
		if (fmt_write(&d, path_of(name)) < 0)
			abort();
		fmt_data_free(&d);
	}
	static const char *const plain[] = {"main", "recurse", "work", "lib:read"};
	static const char *const letters[] = {"m", "r", "w", "lib:x"};
	/* names no one should print raw: bytes that are not UTF-8, a
	 * terminal escape, quotes, separators, a valid non-ASCII name */
	static const char *const hostile[] = {"ma\xff\xfein", "rec\x1b]0;owned\x07urse", "w\"o,r;k\\\n<b>&",
					      "lib:r\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x64"};
	write_instr("ok-instr.data", plain, 4);
	write_instr("ok-instr-one-letter-names.data", letters, 4);
	write_instr("ok-instr-hostile-names.data", hostile, 4);
	write_sampling("ok-sampling.data");
	const char *i = "ok-instr.data", *s = "ok-sampling.data";
	repeat(i, FMT_SESS, "bad-repeated-sess.data");
	repeat(i, FMT_PROC, "bad-repeated-proc.data");
	repeat(i, FMT_MODS, "bad-repeated-mods.data");
	repeat(i, FMT_SYMS, "bad-repeated-syms.data");
	repeat(i, FMT_THRD, "bad-repeated-thrd.data");
	repeat(i, FMT_EVTS, "bad-repeated-evts.data");
	repeat(s, FMT_LINS, "bad-repeated-lins.data");
	/* an end marker where a process was; a thread's events gone; a line
	 * number html once counted up to one by one */
	retag(i, FMT_PROC, FMT_ENDF, "bad-endf-early.data");
	drop(i, FMT_EVTS, "bad-evts-removed.data");
	poke(s, FMT_LINS, 23, 0xffffffffu, 1, "ok-sampling-line-max.data");
	poke(i, FMT_MODS, 0, 1, 1, "bad-mods-process-index.data");
	poke(i, FMT_SYMS, 0, 0xffffffffu, 1, "bad-syms-process-index.data");
	poke(s, FMT_LINS, 0, 3, 1, "bad-lins-process-index.data");
	poke(i, FMT_THRD, 0, 9, 1, "bad-thrd-process-index.data");
	poke(i, FMT_THRD, 4, 7, 1, "bad-thrd-thread-index.data");
	poke(i, FMT_EVTS, 0, 2, 1, "bad-evts-thread-index.data");
	poke(i, FMT_PROC, 0, 3, 1, "bad-proc-index.data");
	poke(i, FMT_SYMS, 4, 0x7fffffffu, 1, "bad-syms-count.data");
	poke(i, FMT_MODS, 4, 1000, 1, "bad-mods-count.data");
	poke(s, FMT_LINS, 4, 0xffffffffu, 1, "bad-lins-count.data");
	poke(i, FMT_SYMS, 8 + 8 + 8 + 5, 77, 1, "bad-syms-module-index.data");
	flip(i, FMT_SYMS, 30, "bad-syms-bit-flip.data");
	flip(i, FMT_MODS, 12, "bad-mods-bit-flip.data");
	flip(i, FMT_PROC, 9, "bad-proc-bit-flip.data");
	flip(i, FMT_THRD, 9, "bad-thrd-bit-flip.data");
	flip(i, FMT_EVTS, 12, "bad-evts-bit-flip.data");
	flip(s, FMT_EVTS, 9, "bad-sampling-evts-bit-flip.data");
	flip(s, FMT_LINS, 10, "bad-lins-bit-flip.data");
	/* ns per tick (after "instrumentation", "test", two u64): +infinity */
	poke(i, FMT_SESS, 16 + 5 + 8 + 8 + 4, 0x7ff00000u, 1, "bad-sess-clock.data");
	size_t n;
	free(load(i, &n));
	cut(i, n / 2, "bad-truncated-half.data");
	cut(i, n - 3, "bad-truncated-end.data");
	cut(i, 40, "bad-truncated-sess.data");
	cut(i, 20, "bad-truncated-header.data");
	store("bad-empty.data", (const uint8_t *)"", 0);
	store("bad-foreign.data", (const uint8_t *)"#!/bin/sh\necho not a stint file\n", 32);
	return 0;
}
