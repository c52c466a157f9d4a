/*
 * evbuild.h - builds synthetic event streams and data sets for the unit
 * tests, with the runtime's own encoder (fmt_event.h).
 */
#ifndef STINT_TEST_EVBUILD_H
#define STINT_TEST_EVBUILD_H

#include <stdlib.h>
#include <string.h>
#include "../../format/fmt_event.h"
#include "../../format/format.h"

struct evb {
	uint8_t buf[1 << 16];
	uint8_t *p;
	struct fmt_caches c;
	uint64_t last;
	uint64_t n;
};

static inline void evb_init(struct evb *b)
{
	memset(b, 0, sizeof(*b));
	b->p = b->buf;
}

/* An entry of fn from call site site (a return address; 0: not known). */
static inline void evb_enter_at(struct evb *b, uint64_t t, uint64_t fn, uint64_t site, int os)
{
	uint8_t a[FMT_MAX_ENTER];
	unsigned kind;
	unsigned n = fmt_enter_payload(a, &b->c, fn, site, &kind);
	b->p = fmt_put_common(b->p, kind, os, t - b->last, a, n);
	b->last = t;
	b->n++;
}

static inline void evb_enter(struct evb *b, uint64_t t, uint64_t fn, int os)
{
	evb_enter_at(b, t, fn, 0, os);
}

static inline void evb_exit(struct evb *b, uint64_t t, int os)
{
	b->p = fmt_put_common(b->p, FMT_K_EXIT, os, t - b->last, NULL, 0);
	b->last = t;
	b->n++;
}

static inline void evb_exit_fn(struct evb *b, uint64_t t, uint64_t fn, int os)
{
	uint8_t a[8];
	fmt_put_u64(a, fn);
	b->p = fmt_put_ext(b->p, FMT_X_EXIT_FN, os, t - b->last, a, 8);
	b->last = t;
	b->n++;
}

static inline void evb_inherit(struct evb *b, uint64_t fn)
{
	uint8_t a[8];
	fmt_put_u64(a, fn);
	b->p = fmt_put_ext(b->p, FMT_X_INHERIT, 0, 0, a, 8);
	b->n++;
}

/*
 * A one-process data set whose functions are named by `names` at addresses
 * 0x1000, 0x2000, ...; names[i] with a "lib:" prefix live in module 1.
 */
static inline void evb_data(struct fmt_data *d, const char *const *names, int nnames)
{
	memset(d, 0, sizeof(*d));
	d->method = strdup("instrumentation");
	d->command = strdup("test");
	d->clock = strdup("tsc");
	d->os = strdup("perf");
	d->notes = strdup("");
	d->ns_per_tick = 1000.0; /* ticks are microseconds */
	d->nprocs = 1;
	d->procs = calloc(1, sizeof(*d->procs));
	struct fmt_process *p = &d->procs[0];
	p->pid = 100;
	p->command = strdup("test");
	p->exe = strdup("/bin/test");
	p->os = strdup("perf");
	p->nmods = 2;
	p->mods = calloc(2, sizeof(*p->mods));
	p->mods[0] = (struct fmt_module){.start = 0x1000, .end = 0x80000, .path = strdup("/bin/test"),
					   .build_id = strdup("")};
	p->mods[1] = (struct fmt_module){.start = 0x80000, .end = 0x100000, .path = strdup("/lib/libx.so"),
					   .build_id = strdup("")};
	p->nsyms = (uint32_t)nnames;
	p->syms = calloc((size_t)nnames, sizeof(*p->syms));
	for (int i = 0; i < nnames; i++) {
		int lib = strncmp(names[i], "lib:", 4) == 0;
		p->syms[i].addr = lib ? 0x80000 + 0x1000 * (uint64_t)i : 0x1000 * (uint64_t)(i + 1);
		p->syms[i].size = 0x100;
		p->syms[i].name = strdup(names[i] + (lib ? 4 : 0));
		p->syms[i].module = lib ? 1 : 0;
		p->syms[i].file = strdup("");
	}
}

/* Add a thread with the events of b. */
static inline void evb_add_thread(struct fmt_data *d, struct evb *b, uint32_t tid)
{
	d->threads = realloc(d->threads, (d->nthreads + 1) * sizeof(*d->threads));
	struct fmt_thread *t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->name = strdup("t");
	t->ev_len = (size_t)(b->p - b->buf);
	t->ev_owned = malloc(t->ev_len + 1);
	memcpy(t->ev_owned, b->buf, t->ev_len);
	t->ev = t->ev_owned;
	t->nevents = b->n;
}

#endif
