/*
 * test_format.c - the data file: a round trip, and damaged files (truncated
 * at every length, a flipped byte, a foreign file, a future version), and
 * hostile ones: repeated chunks and indices that do not exist.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "evbuild.h"
#include "../../analysis/analysis.h"
#include "../../lib/util.h"

static char path[256];

static void write_sample(void)
{
	static const char *const names[] = {"main", "work"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	for (int i = 0; i < 1000; i++) {
		evb_enter(&b, 10 + 20 * (uint64_t)i, 0x2000, 0);
		evb_exit(&b, 20 + 20 * (uint64_t)i, i % 7 == 0);
	}
	evb_exit(&b, 30000, 0);
	evb_add_thread(&d, &b, 100);
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
}

static long file_size(void)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fclose(f);
	return n;
}

static void test_round_trip(void **state)
{
	(void)state;
	write_sample();
	struct fmt_data d;
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_null(d.damage);
	assert_string_equal(d.method, "instrumentation");
	assert_int_equal(d.nprocs, 1);
	assert_int_equal(d.nthreads, 1);
	assert_int_equal(d.threads[0].nevents, 2002);
	assert_string_equal(d.procs[0].syms[1].name, "work");
	/* compact: this stream is within 4 bytes per event */
	assert_true(d.threads[0].ev_len <= 4 * d.threads[0].nevents);
	struct an_result r;
	struct an_opts o = {0};
	an_instr_run(&d, &o, &r);
	assert_float_equal(r.session.v[AN_EI], 30000 * 1000.0, 1e-3);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* A file of format version 1 (entries without call sites) is still read:
 * its entries decode as before, with site 0; a version 2 file's entries
 * give back the sites they were written with. */
static void test_version1_read(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "work"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	evb_init(&b);
	/* version 1 encoding, by hand: ENTER_NEW is the 8-byte address, ENTER its slot */
	uint8_t a[8], slot = (uint8_t)fmt_cache_slot(0x2000);
	fmt_put_u64(a, 0x1000);
	b.p = fmt_put_common(b.p, FMT_K_ENTER_NEW, 0, 1, a, 8);
	fmt_put_u64(a, 0x2000);
	b.p = fmt_put_common(b.p, FMT_K_ENTER_NEW, 0, 1, a, 8);
	b.p = fmt_put_common(b.p, FMT_K_EXIT, 0, 1, NULL, 0);
	b.p = fmt_put_common(b.p, FMT_K_ENTER, 0, 1, &slot, 1);
	b.p = fmt_put_common(b.p, FMT_K_EXIT, 0, 1, NULL, 0);
	b.p = fmt_put_common(b.p, FMT_K_EXIT, 0, 1, NULL, 0);
	b.n = 6;
	evb_add_thread(&d, &b, 100);
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
	/* made version 1 (the header's version and oldest reader) */
	FILE *f = fopen(path, "r+b");
	uint32_t one[2] = {1, 1};
	fseek(f, 8, SEEK_SET);
	fwrite(one, 4, 2, f);
	fclose(f);
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_true(d.threads[0].nosites);
	struct fmt_decoder dec;
	struct fmt_rec r;
	fmt_thread_decoder(&d.threads[0], &dec);
	uint64_t want[] = {0x1000, 0x2000, 0, 0x2000, 0, 0};
	int n = 0;
	while (fmt_decode(&dec, &r) > 0) {
		assert_true(n < 6);
		assert_int_equal(r.addr, want[n]);
		assert_int_equal(r.site, 0);
		n++;
	}
	assert_int_equal(n, 6);
	struct an_result res;
	struct an_opts o = {0};
	an_instr_run(&d, &o, &res);
	assert_float_equal(res.session.v[AN_EI], 6 * 1000.0, 1e-3);
	an_result_free(&res);
	fmt_data_free(&d);

	/* version 2: the sites come back, through all three caches */
	evb_data(&d, names, 2);
	evb_init(&b);
	uint64_t fns[] = {0x1000, 0x2000, 0x2000, 0x2000, 0x1000};
	uint64_t sites[] = {0x777, 0x1010, 0x1020, 0x1010, 0x1020};
	for (int i = 0; i < 5; i++) {
		evb_enter_at(&b, 2 * (uint64_t)i, fns[i], sites[i], 0);
		evb_exit(&b, 2 * (uint64_t)i + 1, 0);
	}
	evb_add_thread(&d, &b, 100);
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_false(d.threads[0].nosites);
	fmt_thread_decoder(&d.threads[0], &dec);
	n = 0;
	while (fmt_decode(&dec, &r) > 0) {
		if (r.kind == FMT_K_ENTER || r.kind == FMT_K_ENTER_NEW) {
			assert_int_equal(r.addr, fns[n]);
			assert_int_equal(r.site, sites[n]);
			n++;
		}
	}
	assert_int_equal(n, 5);
	fmt_data_free(&d);
}

/* Every truncation either fails with a message or reports the damage and
 * keeps what precedes it; never crashes. */
static void test_truncated(void **state)
{
	(void)state;
	write_sample();
	long n = file_size();
	FILE *f = fopen(path, "rb");
	char *buf = malloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	char tpath[300];
	snprintf(tpath, sizeof(tpath), "%s.cut", path);
	int usable = 0;
	for (long cut = 0; cut < n; cut += (cut < 400 ? 1 : 37)) {
		f = fopen(tpath, "wb");
		fwrite(buf, 1, (size_t)cut, f);
		fclose(f);
		struct fmt_data d;
		char err[256] = "";
		int rc = fmt_read(tpath, &d, err, sizeof(err));
		if (rc < 0) {
			assert_true(strlen(err) > 0);
			continue;
		}
		assert_non_null(d.damage);
		assert_true(strstr(d.damage, "truncated") != NULL);
		struct an_result r;
		struct an_opts o = {0};
		an_instr_run(&d, &o, &r);
		usable++;
		an_result_free(&r);
		fmt_data_free(&d);
	}
	assert_true(usable > 10);
	unlink(tpath);
	free(buf);
}

static void test_corrupt_and_foreign(void **state)
{
	(void)state;
	write_sample();
	long n = file_size();
	/* flip a byte inside the events */
	FILE *f = fopen(path, "r+b");
	fseek(f, n - 100, SEEK_SET);
	fputc(0x5a, f);
	fclose(f);
	struct fmt_data d;
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_non_null(d.damage);
	assert_true(strstr(d.damage, "checksum") != NULL);
	fmt_data_free(&d);
	/* a foreign file */
	f = fopen(path, "wb");
	fputs("#!/bin/sh\necho this is not a stint data file at all\n", f);
	fclose(f);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), -1);
	assert_true(strstr(err, "not a stint data file") != NULL);
	/* a future version */
	write_sample();
	f = fopen(path, "r+b");
	uint32_t v[2] = {99, 99};
	fseek(f, 8, SEEK_SET);
	fwrite(v, 4, 2, f);
	fclose(f);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), -1);
	assert_true(strstr(err, "version 99") != NULL);
	/* missing */
	unlink(path);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), -1);
	assert_true(strstr(err, "cannot open") != NULL);
}

/* A read file's map is known by address (for the SIGBUS of a file truncated
 * while read) from fmt_read until fmt_data_free, and only its own bytes. */
static void test_mapped_file_at(void **state)
{
	(void)state;
	write_sample();
	struct fmt_data d;
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	const char *m = d.map;
	assert_non_null(m);
	assert_string_equal(fmt_mapped_file_at(m), path);
	assert_string_equal(fmt_mapped_file_at(m + d.map_len - 1), path);
	assert_null(fmt_mapped_file_at(m + d.map_len));
	assert_null(fmt_mapped_file_at(err));
	fmt_data_free(&d);
	assert_null(fmt_mapped_file_at(m));
	/* a file that is refused leaves nothing behind */
	FILE *f = fopen(path, "wb");
	fputs("not a stint data file", f);
	fclose(f);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), -1);
	for (int i = 0; i < 16; i++) { /* more reads than slots: each one freed */
		write_sample();
		assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
		assert_string_equal(fmt_mapped_file_at(d.map), path);
		fmt_data_free(&d);
	}
	unlink(path);
}

/* The spool's chunked layout (EVTC): a PAD, or a chunk's end, continues at
 * the next chunk, whose size doubles; a zero byte ends the data. */
static void test_chunked_layout(void **state)
{
	(void)state;
	size_t c0 = FMT_EVENT_FIRST_CHUNK, c1 = 2 * c0;
	uint8_t *buf = calloc(1, c0 + c1);
	uint8_t *p = buf;
	struct fmt_caches c;
	memset(&c, 0, sizeof(c));
	uint8_t a[FMT_MAX_ENTER];
	unsigned kind, na = fmt_enter_payload(a, &c, 0x1000, 0x2345, &kind);
	assert_int_equal(kind, FMT_K_ENTER_NEW);
	p = fmt_put_common(p, kind, 0, 5, a, na);
	uint8_t slot[FMT_MAX_ENTER];
	assert_int_equal(fmt_enter_payload(slot, &c, 0x1000, 0x2345, &kind), 1);
	assert_int_equal(kind, FMT_K_ENTER);
	for (int i = 0; i < 100; i++) {
		p = fmt_put_common(p, FMT_K_EXIT, 0, 3, NULL, 0);
		p = fmt_put_common(p, FMT_K_ENTER, 0, 3, slot, 1);
	}
	fmt_put_ext(p, FMT_X_PAD, 0, 0, NULL, 0); /* the rest of chunk 0: skipped */
	memset(buf + c0 - 64, 0x55, 10);          /* garbage after the PAD */
	p = buf + c0;
	for (int i = 0; i < 50; i++) /* chunk 1 continues with the cached slot */
		p = fmt_put_common(p, FMT_K_EXIT, 1, 7, NULL, 0), p = fmt_put_common(p, FMT_K_ENTER, 0, 2, slot, 1);
	struct fmt_thread t = {0};
	t.ev = buf;
	t.ev_len = (size_t)(p - buf);
	t.chunked = 1;
	struct fmt_decoder d;
	struct fmt_rec r;
	fmt_thread_decoder(&t, &d);
	int n = 0, rc;
	while ((rc = fmt_decode(&d, &r)) > 0) {
		n++;
		if (r.kind == FMT_K_ENTER || r.kind == FMT_K_ENTER_NEW) {
			assert_int_equal(r.addr, 0x1000);
			assert_int_equal(r.site, 0x2345);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 1 + 200 + 100);
	free(buf);
}


/* ---- hostile files: the chunks of a file, rewritten ---- */

struct chunk {
	size_t off;      /* of the chunk header */
	uint32_t tag;
	uint64_t len;
};

static uint8_t *load(size_t *n)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*n + 1);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

static void store(const uint8_t *b, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, n, f);
	fclose(f);
}

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

static const struct chunk *find_chunk(const struct chunk *c, int nc, uint32_t tag)
{
	for (int i = 0; i < nc; i++)
		if (c[i].tag == tag)
			return &c[i];
	fail_msg("no chunk with that tag");
	return NULL;
}

static void fix_crc(uint8_t *b, const struct chunk *c)
{
	uint32_t crc = (uint32_t)crc32(0L, b + c->off + FMT_CHUNK_HDR, (uInt)c->len);
	memcpy(b + c->off + 4, &crc, 4);
}

/* Read the file and run everything that reads a data set: must not crash
 * (the sanitizer build checks every access); returns 1 if it was damaged. */
static int read_all(void)
{
	struct fmt_data d;
	char err[256];
	if (fmt_read(path, &d, err, sizeof(err)) < 0)
		return 1;
	struct an_result r;
	struct an_opts o = {0};
	int damaged = d.damage != NULL;
	if (strcmp(d.method, "instrumentation") == 0) {
		an_instr_run(&d, &o, &r);
		damaged |= r.damaged_threads > 0;
		an_result_free(&r);
	}
	fmt_data_free(&d);
	return damaged;
}

/* A copy of one chunk inserted right after it (valid checksum). */
static void repeat_chunk(uint32_t tag)
{
	write_sample();
	size_t n;
	uint8_t *b = load(&n);
	struct chunk c[64];
	int nc = chunks(b, n, c, 64);
	const struct chunk *x = find_chunk(c, nc, tag);
	size_t clen = FMT_CHUNK_HDR + x->len, at = x->off + clen;
	uint8_t *o = malloc(n + clen);
	memcpy(o, b, at);
	memcpy(o + at, b + x->off, clen);
	memcpy(o + at + clen, b + at, n - at);
	store(o, n + clen);
	assert_true(read_all());
	free(o);
	free(b);
}

static void test_repeated_chunks(void **state)
{
	(void)state;
	static const uint32_t tags[] = {FMT_SESS, FMT_PROC, FMT_MODS, FMT_SYMS, FMT_THRD, FMT_EVTS};
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		repeat_chunk(tags[i]);
}

/* A thread's events chunk renamed SKIP (filler), its checksum made valid
 * for the whole payload as SKIP's is: the events vanished, the file read as
 * whole.  Now it is damaged, the thread named. */
static void test_events_renamed_filler(void **state)
{
	(void)state;
	write_sample();
	size_t n;
	uint8_t *b = load(&n);
	struct chunk c[64];
	int nc = chunks(b, n, c, 64);
	const struct chunk *x = find_chunk(c, nc, FMT_EVTS);
	uint32_t tag = FMT_SKIP;
	memcpy(b + x->off, &tag, 4);
	fix_crc(b, x);
	store(b, n);
	struct fmt_data d;
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_non_null(d.damage);
	assert_non_null(strstr(d.damage, "SKIP"));
	assert_true(d.threads[0].flags & FMT_THR_DAMAGED);
	fmt_data_free(&d);
	/* the chunk cut out, the end marker's count made to agree */
	memcpy(b + x->off, &(uint32_t){FMT_EVTS}, 4);
	size_t clen = FMT_CHUNK_HDR + x->len;
	memmove(b + x->off, b + x->off + clen, n - x->off - clen);
	n -= clen;
	nc = chunks(b, n, c, 64);
	const struct chunk *e = find_chunk(c, nc, FMT_ENDF);
	uint32_t count;
	memcpy(&count, b + e->off + FMT_CHUNK_HDR, 4);
	count--;
	memcpy(b + e->off + FMT_CHUNK_HDR, &count, 4);
	fix_crc(b, e);
	store(b, n);
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_non_null(d.damage);
	assert_non_null(strstr(d.damage, "thread 100 has no events chunk"));
	fmt_data_free(&d);
	free(b);
}

/* Each index field (the first u32 of the payload) set to values that name
 * nothing, with the checksum made valid again. */
static void test_bad_indices(void **state)
{
	(void)state;
	static const uint32_t tags[] = {FMT_PROC, FMT_MODS, FMT_SYMS, FMT_THRD, FMT_EVTS};
	static const uint32_t bad[] = {1, 2, 7, 0x7fffffff, 0xffffffff};
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			write_sample();
			size_t n;
			uint8_t *b = load(&n);
			struct chunk c[64];
			int nc = chunks(b, n, c, 64);
			const struct chunk *x = find_chunk(c, nc, tags[i]);
			memcpy(b + x->off + FMT_CHUNK_HDR, &bad[k], 4);
			if (tags[i] != FMT_EVTS)
				fix_crc(b, x);
			else { /* the EVTS checksum spans its first 64 KiB */
				uint32_t crc = (uint32_t)crc32(0L, b + x->off + FMT_CHUNK_HDR,
							       (uInt)(x->len < FMT_EVTS_CRC_SPAN ? x->len : FMT_EVTS_CRC_SPAN));
				memcpy(b + x->off + 4, &crc, 4);
			}
			store(b, n);
			assert_true(read_all());
			free(b);
		}
	/* THRD's process index (its second field is the thread's) */
	write_sample();
	size_t n;
	uint8_t *b = load(&n);
	struct chunk c[64];
	int nc = chunks(b, n, c, 64);
	const struct chunk *x = find_chunk(c, nc, FMT_THRD);
	uint32_t v = 5;
	memcpy(b + x->off + FMT_CHUNK_HDR + 4, &v, 4);
	fix_crc(b, x);
	store(b, n);
	assert_true(read_all());
	free(b);
}

/* One-letter names, no source files: 27 bytes a symbol, a valid file. */
static void test_short_symbols(void **state)
{
	(void)state;
	static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
					    "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w", "x"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 24);
	evb_init(&b);
	for (int i = 0; i < 24; i++) {
		evb_enter(&b, 10 * (uint64_t)i, 0x1000 * (uint64_t)(i + 1), 0);
		evb_exit(&b, 10 * (uint64_t)i + 5, 0);
	}
	evb_add_thread(&d, &b, 100);
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_null(d.damage);
	assert_int_equal(d.procs[0].nsyms, 24);
	assert_string_equal(d.procs[0].syms[23].name, "x");
	fmt_data_free(&d);
}

/* A flipped bit in the names: the events are still reported, by address. */
static void test_flipped_symbols(void **state)
{
	(void)state;
	write_sample();
	size_t n;
	uint8_t *b = load(&n);
	struct chunk c[64];
	int nc = chunks(b, n, c, 64);
	const struct chunk *x = find_chunk(c, nc, FMT_SYMS);
	b[x->off + FMT_CHUNK_HDR + 12] ^= 0x10;
	store(b, n);
	free(b);
	struct fmt_data d;
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_non_null(d.damage);
	assert_non_null(strstr(d.damage, "SYMS"));
	assert_int_equal(d.nthreads, 1);
	struct an_result r;
	struct an_opts o = {0};
	an_instr_run(&d, &o, &r);
	assert_int_equal(r.events, 2002);
	assert_float_equal(r.session.v[AN_EI], 30000 * 1000.0, 1e-3);
	int by_address = 0;
	for (uint32_t i = 0; i < r.nfuncs; i++)
		by_address += strncmp(r.funcs[i].name, "0x", 2) == 0;
	assert_int_equal(by_address, 2);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* What counts as UTF-8 (names are written into JSON and CSV as they are only
 * if they are): overlong forms, surrogates, stray and missing continuation
 * bytes and code points beyond U+10FFFF are not. */
/* UTIL_GROW1: every element kept while the array doubles; fmt_module_at: the first module over an address. */
static void test_grow_and_module_at(void **state)
{
	(void)state;
	uint32_t *a = NULL;
	size_t n = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		UTIL_GROW1(a, n);
		a[n++] = i * 3;
	}
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(a[i], i * 3);
	free(a);
	struct fmt_module mods[2] = {{.start = 0x1000, .end = 0x2000}, {.start = 0x1800, .end = 0x3000}};
	struct fmt_process p = {.mods = mods, .nmods = 2};
	assert_int_equal(fmt_module_at(&p, 0xfff), -1);
	assert_int_equal(fmt_module_at(&p, 0x1000), 0);
	assert_int_equal(fmt_module_at(&p, 0x1900), 0);
	assert_int_equal(fmt_module_at(&p, 0x2000), 1);
	assert_int_equal(fmt_module_at(&p, 0x3000), -1);
}

static void test_utf8(void **state)
{
	(void)state;
	assert_int_equal(util_utf8_len("a"), 1);
	assert_int_equal(util_utf8_len("\xc3\xa9"), 2);         /* e acute */
	assert_int_equal(util_utf8_len("\xe2\x82\xac"), 3);     /* euro sign */
	assert_int_equal(util_utf8_len("\xf0\x9f\x98\x80"), 4); /* an emoji */
	assert_int_equal(util_utf8_len("\xc0\xaf"), 0);         /* overlong '/' */
	assert_int_equal(util_utf8_len("\xe0\x80\xaf"), 0);     /* overlong, 3 bytes */
	assert_int_equal(util_utf8_len("\xed\xa0\x80"), 0);     /* a UTF-16 surrogate */
	assert_int_equal(util_utf8_len("\xf4\x90\x80\x80"), 0); /* beyond U+10FFFF */
	assert_int_equal(util_utf8_len("\x80"), 0);             /* a stray continuation */
	assert_int_equal(util_utf8_len("\xe2\x82"), 0);         /* cut short */
	assert_int_equal(util_utf8_len("\xff"), 0);
	/* the reader cleans names: control characters become '?', bytes that
	 * are not UTF-8 become U+FFFD */
	static const char *const names[] = {"a\x1b[2Jb", "c\xff\x64", "\xc2\x9b"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 3);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	evb_exit(&b, 1, 0);
	evb_add_thread(&d, &b, 100);
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_string_equal(d.procs[0].syms[0].name, "a?[2Jb");
	assert_string_equal(d.procs[0].syms[1].name, "c\xef\xbf\xbd" "d");
	assert_string_equal(d.procs[0].syms[2].name, "?");
	fmt_data_free(&d);
}

/* Source lines and the inline chains at them (LINS, INLN) survive a round trip. */
static void test_inline_round_trip(void **state)
{
	(void)state;
	static const char *const names[] = {"main"};
	struct fmt_data d;
	evb_data(&d, names, 1);
	struct fmt_process *p = &d.procs[0];
	p->nlines = 2;
	p->lines = calloc(2, sizeof(*p->lines));
	p->lines[0] = (struct fmt_line){0x1010, strdup("a.c"), 3, NULL, 0};
	p->lines[1] = (struct fmt_line){0x1020, strdup("a.c"), 9, calloc(2, sizeof(struct fmt_inline)), 2};
	p->lines[1].inl[0] = (struct fmt_inline){strdup("outer_inl"), strdup("a.c"), 5, strdup("a.c"), 30};
	p->lines[1].inl[1] = (struct fmt_inline){strdup("inner_inl"), strdup("b.h"), 1, strdup("a.c"), 7};
	assert_int_equal(fmt_write(&d, path), 0);
	fmt_data_free(&d);
	char err[256];
	assert_int_equal(fmt_read(path, &d, err, sizeof(err)), 0);
	assert_null(d.damage);
	const struct fmt_line *l = fmt_line_at(&d.procs[0], 0x1020);
	assert_non_null(l);
	assert_int_equal(l->line, 9);
	assert_int_equal(l->ninl, 2);
	assert_string_equal(l->inl[0].name, "outer_inl");
	assert_int_equal(l->inl[0].call_line, 30);
	assert_string_equal(l->inl[1].name, "inner_inl");
	assert_string_equal(l->inl[1].file, "b.h");
	assert_string_equal(l->inl[1].call_file, "a.c");
	assert_int_equal(l->inl[1].call_line, 7);
	assert_int_equal(fmt_line_at(&d.procs[0], 0x1010)->ninl, 0);
	fmt_data_free(&d);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/stint-test-format-%d.data", (int)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_version1_read),
		cmocka_unit_test(test_corrupt_and_foreign),
		cmocka_unit_test(test_mapped_file_at),
		cmocka_unit_test(test_chunked_layout),
		cmocka_unit_test(test_repeated_chunks),
		cmocka_unit_test(test_bad_indices),
		cmocka_unit_test(test_events_renamed_filler),
		cmocka_unit_test(test_short_symbols),
		cmocka_unit_test(test_flipped_symbols),
		cmocka_unit_test(test_inline_round_trip),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_grow_and_module_at),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(path);
	return rc;
}
