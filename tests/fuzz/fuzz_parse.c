/*
 * fuzz_parse.c - the lean libFuzzer target: a data file through the reader
 * and the analysis only, nothing written.  fmt_read_mem parses and checks
 * every chunk; then the method's analysis (an_instr_run / an_sample_run,
 * and again with a filter on inputs whose length has bit 1 set), the merged view with its
 * function and module tables, callers and callees and depth-first order,
 * and the raw walks of events and samples the exports use, each with a
 * callback that only looks at what it is handed.  A mutated chunk almost
 * never keeps a valid checksum, and the reader skips a chunk of names whose
 * checksum is wrong, so on inputs of even length the target first sets
 * every chunk's checksum right: the parser of each chunk's contents is
 * fuzzed too, not only its rejection.  With no output to format
 * it runs many times faster than fuzz_reader.c (the full path through
 * every view and export), so a long campaign reaches millions of inputs;
 * the two share the seed corpus.  Built with clang by
 * tests/fuzz/CMakeLists.txt; how to run it is in doc/safety.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../analysis/an_view.h"
#include "../../analysis/an_walk.h"
#include "../../format/format.h"

/* what the walks hand over, summed so that every field is read */
static volatile double fuzz_sink;

static void fuzz_on_event(void *ctx, const struct an_walk_ev *e)
{
	(void)ctx;
	fuzz_sink += e->start + e->end + e->fn + e->depth;
}

static void fuzz_on_sample(void *ctx, const struct an_walk_sample *s)
{
	(void)ctx;
	double t = s->time;
	for (size_t i = 0; i < s->nframes; i++)
		t += s->fn[i] + s->pc_index[i] + s->line[i] + (s->file[i] ? s->file[i][0] : 0);
	for (unsigned i = 0; i < s->npcs; i++)
		t += (double)s->pcs[i];
	fuzz_sink += t;
}

/* the tables and folds views are made of, without formatting them */
static void fuzz_view(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f)
{
	struct an_view v;
	an_view_build(d, r, f, &v);
	struct an_row *rows, self;
	uint32_t n;
	an_view_functions(&v, &rows, &n);
	free(rows);
	an_view_modules(&v, &rows, &n);
	free(rows);
	if (r->nfuncs) {
		uint32_t fn = r->nfuncs / 2;
		an_view_callers(&v, fn, &rows, &n, &self);
		free(rows);
		an_view_callees(&v, fn, &rows, &n);
		free(rows);
	}
	uint32_t *order, *same;
	an_view_preorder(&v, &order, &same);
	free(order);
	free(same);
	an_view_release(&v);
}

static void fuzz_walks(const struct fmt_data *d, struct an_result *r, const struct an_filter *f)
{
	if (r->sampling) {
		an_walk_samples(d, r, f, fuzz_on_sample, NULL);
		return;
	}
	struct an_addr_map *maps = calloc(d->nprocs + 1, sizeof(*maps));
	if (!maps)
		abort();
	for (uint32_t ti = 0; ti < d->nthreads; ti++)
		fuzz_sink += an_walk_events(d, r, &maps[d->threads[ti].proc], ti, 0, fuzz_on_event, NULL);
	for (uint32_t pi = 0; pi < d->nprocs; pi++)
		an_addr_map_free(&maps[pi]);
	free(maps);
}

static void fuzz_analyse(const struct fmt_data *d, const struct an_filter *f)
{
	struct an_result r;
	struct an_opts ao = {.filter = f};
	int sampling = strcmp(d->method, "sampling") == 0;
	if (sampling)
		an_sample_run(d, &ao, &r);
	else
		an_instr_run(d, &ao, &r);
	fuzz_view(d, &r, f);
	fuzz_walks(d, &r, f);
	an_result_free(&r);
}

/* Give every whole chunk of buf the checksum it should have (format.h). */
static void fuzz_fix_checksums(uint8_t *buf, size_t size)
{
	size_t off = FMT_HDR_SIZE;
	while (off < size && size - off >= FMT_CHUNK_HDR) {
		uint32_t tag, crc;
		uint64_t n;
		memcpy(&tag, buf + off, 4);
		memcpy(&n, buf + off + 8, 8);
		off += FMT_CHUNK_HDR;
		if (n > size - off)
			return;
		int events = tag == FMT_EVTS || tag == FMT_EVTC;
		size_t span = events && n > FMT_EVTS_CRC_SPAN ? FMT_EVTS_CRC_SPAN : (size_t)n;
		crc = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), buf + off, span);
		memcpy(buf + off - FMT_CHUNK_HDR + 4, &crc, 4);
		off += (size_t)n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = NULL;
	if (size % 2 == 0 && size > FMT_HDR_SIZE) {
		if (!(copy = malloc(size)))
			abort();
		memcpy(copy, data, size);
		fuzz_fix_checksums(copy, size);
		data = copy;
	}
	struct fmt_data d;
	char err[512];
	if (fmt_read_mem(data, size, "fuzz", &d, err, sizeof(err)) < 0) {
		free(copy);
		return 0;
	}
	if (strcmp(d.method, "sampling") == 0 || strcmp(d.method, "instrumentation") == 0) {
		struct an_filter all = {0};
		fuzz_analyse(&d, &all);
		if (size & 2) {
			/* and on some, one process's threads only */
			uint32_t pid = (size & 4) && d.nprocs ? d.procs[d.nprocs - 1].pid : 0;
			struct an_filter some = {.just_my_code = 1, .function = "*a*", .module = "*", .pid = pid};
			fuzz_analyse(&d, &some);
		}
	}
	fmt_data_free(&d);
	free(copy);
	return 0;
}
