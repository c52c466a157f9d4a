/*
 * rec_inproc.c - gathering the spool of the in-process sampler
 * (runtime/smp.c): one process per key, one thread per .smp file, whose
 * samples are already in the data file's encoding.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "rec_perf.h"
#include "../format/fmt_sample.h"
#include "../lib/util.h"

struct smp_file_hdr {
	char magic[8];
	int32_t pid, tid;
	uint64_t start;
	char name[16];
};

static int cmp_key(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	const char *dx = strchr(x, '-'), *dy = strchr(y, '-');
	unsigned long long nx = dx ? strtoull(dx + 1, NULL, 10) : 0, ny = dy ? strtoull(dy + 1, NULL, 10) : 0;
	return nx < ny ? -1 : nx > ny;
}

int rec_inproc_read(const char *dir, struct fmt_data *d, struct rec_sample_stats *st, char *err,
		    size_t errlen)
{
	DIR *dh = opendir(dir);
	if (!dh) {
		snprintf(err, errlen, "cannot read the spool '%s': %s", dir, strerror(errno));
		return -1;
	}
	char **keys = NULL;
	size_t nkeys = 0;
	struct dirent *de;
	while ((de = readdir(dh))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] != 'p' || l < 6 || strcmp(de->d_name + l - 5, ".info") != 0)
			continue;
		keys = xrealloc(keys, (nkeys + 1) * sizeof(*keys));
		keys[nkeys++] = xstrndup(de->d_name, l - 5);
	}
	closedir(dh);
	qsort(keys, nkeys, sizeof(*keys), cmp_key);
	d->procs = xcalloc(nkeys, sizeof(*d->procs));
	uint64_t *pcs = xmalloc(FMT_SAMPLE_MAX_FRAMES * sizeof(*pcs));
	for (size_t k = 0; k < nkeys; k++) {
		struct fmt_process *p = &d->procs[d->nprocs];
		uint64_t *addrs = NULL;
		size_t naddrs = 0, cap = 0;
		uint32_t first = d->nthreads;
		dh = opendir(dir);
		while (dh && (de = readdir(dh))) {
			size_t kl = strlen(keys[k]), l = strlen(de->d_name);
			if (strncmp(de->d_name, keys[k], kl) != 0 || de->d_name[kl] != '.' || l < 4 ||
			    strcmp(de->d_name + l - 4, ".smp") != 0)
				continue;
			char *path = xasprintf("%s/%s", dir, de->d_name);
			size_t len;
			char *buf = util_read_regular(path, REC_SPOOL_BIG_MAX, 1, &len);
			free(path);
			struct smp_file_hdr h;
			if (!buf || len < sizeof(h) || memcmp(buf, "STINTSMP", 8) != 0) {
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
			/* keep whole samples only: a write cut by SIGKILL is dropped */
			const uint8_t *q = (const uint8_t *)buf + sizeof(h), *end = (const uint8_t *)buf + len;
			const uint8_t *good = q;
			uint64_t dt;
			unsigned n;
			int cut;
			while (fmt_get_sample(&q, end, &dt, pcs, &n, &cut) > 0) {
				good = q;
				t->nevents++;
				st->samples++;
				st->unwind_fail += (uint64_t)cut;
				for (unsigned i = 0; i < n; i++) {
					if (naddrs == cap) {
						cap = cap ? cap * 2 : 4096;
						addrs = xrealloc(addrs, cap * sizeof(*addrs));
					}
					addrs[naddrs++] = i ? pcs[i] - 1 : pcs[i];
				}
			}
			size_t keep = (size_t)(good - ((const uint8_t *)buf + sizeof(h)));
			t->ev_owned = xmalloc(keep + 1);
			memcpy(t->ev_owned, buf + sizeof(h), keep);
			t->ev = t->ev_owned;
			t->ev_len = keep;
			free(buf);
		}
		if (dh)
			closedir(dh);
		if (d->nthreads > first) {
			char *f = xasprintf("%s/%s.info", dir, keys[k]);
			size_t l;
			char *info = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			const char *pp = info ? strstr(info, "pid ") : NULL, *ppp = info ? strstr(info, "ppid ") : NULL;
			p->pid = pp ? (uint32_t)atoi(pp + 4) : 0;
			p->ppid = ppp ? (uint32_t)atoi(ppp + 5) : 0;
			free(info);
			f = xasprintf("%s/%s.cmdline", dir, keys[k]);
			char *cmd = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			if (cmd)
				for (size_t i = 0; i + 1 < l; i++)
					if (!cmd[i])
						cmd[i] = ' ';
			p->command = cmd ? cmd : xstrdup("");
			p->os = xstrdup("");
			f = xasprintf("%s/%s.maps", dir, keys[k]);
			char *maps = util_read_regular(f, REC_SPOOL_SMALL_MAX, 1, &l);
			free(f);
			rec_symbolize_samples(p, maps, maps ? l : 0, addrs, naddrs);
			free(maps);
			d->nprocs++;
		}
		free(addrs);
		free(keys[k]);
	}
	free(pcs);
	free(keys);
	return 0;
}
