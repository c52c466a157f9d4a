/*
 * rec_inproc.c - gathering the spool of the in-process sampler
 * (runtime/smp.c): one process per key, one thread per .smp file, whose
 * samples are already in the data file's encoding but for the markers of
 * samples taken in system calls (no frames, "cut"), which are counted and
 * left out.  What the sampler could not see is added to the session's
 * notes for the report's header: threads not sampled (no timer, or far
 * fewer samples than their CPU time), the samples in system calls, and the
 * processes' user and system time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "rec_perf.h"
#include "../format/fmt_sample.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"

/* A thread counts as not sampled when it had at least this many periods of
 * CPU time and fewer than 1/SMP_STARVED of that in samples (its signal was
 * blocked by a means the sampler cannot intercept, such as a raw system
 * call): timers that fire late make up with overruns, so a sampled thread
 * has about one sample per period. */
#define SMP_STARVED_MIN_PERIODS 40
#define SMP_STARVED 8

static uint64_t usage_get(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

int rec_inproc_read(const char *dir, struct fmt_data *d, struct rec_sample_stats *st, char *err,
		    size_t errlen)
{
	struct rec_spool_key *keys;
	uint32_t nkeys;
	if (rec_spool_scan(dir, FMT_SMP_SUFFIX, &keys, &nkeys, err, errlen) < 0)
		return -1;
	d->procs = xcalloc(nkeys, sizeof(*d->procs));
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	uint64_t syscalls = 0, utime = 0, stime = 0, usages = 0;
	unsigned unsampled = 0;
	for (uint32_t k = 0; k < nkeys; k++) {
		if (!keys[k].has_info)
			continue;
		const char *key = keys[k].key;
		struct fmt_process *p = &d->procs[d->nprocs];
		uint64_t *addrs = NULL;
		size_t naddrs = 0, cap = 0;
		uint32_t first = d->nthreads;
		for (uint32_t fi = 0; fi < keys[k].nfiles; fi++) {
			char *path = xasprintf("%s/%s", dir, keys[k].files[fi]);
			size_t len;
			char *buf = util_read_regular(path, REC_SPOOL_BIG_MAX, 1, &len);
			free(path);
			struct fmt_smp_hdr h;
			if (!buf || len < sizeof(h) || memcmp(buf, FMT_SMP_MAGIC, 8) != 0) {
				free(buf);
				continue;
			}
			memcpy(&h, buf, sizeof(h));
			d->threads = xrealloc(d->threads, (d->nthreads + 1) * sizeof(*d->threads));
			struct fmt_thread *t = &d->threads[d->nthreads++];
			memset(t, 0, sizeof(*t));
			t->proc = d->nprocs;
			t->tid = (uint32_t)h.tid;
			t->name = xstrndup(h.name, sizeof(h.name));
			t->start = h.start;
			/* keep whole samples only: a write cut by SIGKILL is dropped;
			 * a system call's marker only adds its time to the next */
			const uint8_t *q = (const uint8_t *)buf + sizeof(h), *end = (const uint8_t *)buf + len;
			uint8_t *out = xmalloc(len - sizeof(h) + 1), *o = out;
			uint64_t dt, carry = 0, taken = 0;
			unsigned n;
			int cut;
			while (fmt_get_sample(&q, end, &dt, pcs, &n, &cut) > 0) {
				taken++;
				if (n == 0 && cut) {
					syscalls++;
					carry += dt;
					continue;
				}
				/* (never longer than what was read: dt + carry is at most
				 * the markers' varints together) */
				o = fmt_put_sample(o, dt + carry, pcs, n, cut);
				carry = 0;
				t->nevents++;
				st->samples++;
				st->unwind_fail += (uint64_t)cut;
				for (unsigned i = 0; i < n; i++) {
					if (naddrs == cap) {
						cap = cap ? cap * 2 : 4096;
						addrs = xrealloc(addrs, cap * sizeof(*addrs));
					}
					addrs[naddrs++] = fmt_caller_pc(pcs[i], i == 0);
				}
			}
			t->ev_owned = out;
			t->ev = t->ev_owned;
			t->ev_len = (size_t)(o - out);
			if ((h.flags & FMT_SMP_NO_TIMER) ||
			    ((h.flags & FMT_SMP_CPU) && d->rate &&
			     (double)h.cpu_ns * (double)d->rate / 1e9 >= SMP_STARVED_MIN_PERIODS &&
			     (double)taken * SMP_STARVED < (double)h.cpu_ns * (double)d->rate / 1e9))
				unsampled++;
			free(buf);
		}
		if (d->nthreads > first) {
			char *f = xasprintf("%s/%s.info", dir, key);
			size_t l;
			char *info = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			const char *pp = info ? strstr(info, "pid ") : NULL, *ppp = info ? strstr(info, "ppid ") : NULL;
			p->pid = pp ? (uint32_t)atoi(pp + 4) : 0;
			p->ppid = ppp ? (uint32_t)atoi(ppp + 5) : 0;
			free(info);
			f = xasprintf("%s/%s.cmdline", dir, key);
			char *cmd = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			if (cmd)
				util_args_joined(cmd, l);
			p->command = cmd ? cmd : xstrdup("");
			p->os = xstrdup("");
			f = xasprintf("%s/%s.maps", dir, key);
			char *maps = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			rec_symbolize_samples(p, maps, maps ? l : 0, addrs, naddrs);
			free(maps);
			d->nprocs++;
		}
		char *f = xasprintf("%s/%s.usage", dir, key);
		size_t ul;
		char *usage = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &ul);
		free(f);
		if (usage) {
			utime += usage_get(usage, "utime_ns ");
			stime += usage_get(usage, "stime_ns ");
			usages++;
		}
		free(usage);
		free(addrs);
	}
	free(pcs);
	rec_spool_keys_free(keys, nkeys);
	/* usage=0: no process ended by exit, so no user and system time */
	util_add_word(&d->notes, "inproc=1 unsampled=%u syscall=%llu usage=%llu utime=%llu stime=%llu", unsampled,
		      (unsigned long long)syscalls, (unsigned long long)usages, (unsigned long long)utime,
		      (unsigned long long)stime);
	return 0;
}
