/*
 * rec_spool.c - gathering what the runtime left in the spool directory
 * (fmt_spool.h) into a struct fmt_data: one process per key, one thread per
 * buffer file, the events copied without the chunk padding, and every
 * function address symbolized now, while the binaries are at hand.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder.h"
#include "../format/fmt_event.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"

struct spool_proc {
	char key[64];
	uint64_t start_ns; /* from the key: orders processes */
	char **bufs;       /* thread buffer file names */
	uint32_t nbufs;
};

static int cmp_proc(const void *a, const void *b)
{
	const struct spool_proc *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct fmt_symbol *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static char *read_spool_file(const char *dir, const char *key, const char *suffix, size_t *len)
{
	char *path = xasprintf("%s/%s%s", dir, key, suffix);
	char *s = util_read_file(path, len);
	free(path);
	return s;
}

static const char *info_get(const char *info, const char *name, char *out, size_t n)
{
	size_t l = strlen(name);
	for (const char *p = info; p && *p;) {
		if (strncmp(p, name, l) == 0 && p[l] == ' ') {
			const char *v = p + l + 1, *e = strchrnul(v, '\n');
			snprintf(out, n, "%.*s", (int)(e - v), v);
			return out;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/*
 * Copy the records of one thread buffer, dropping the chunk padding.
 * Collects the function addresses it names into *addrs.
 */
static void copy_events(const uint8_t *file, size_t flen, struct fmt_thread *t, uint64_t **addrs,
			size_t *naddrs, size_t *capaddrs)
{
	uint8_t *out = xmalloc(flen > FMT_SPOOL_HDR_SIZE ? flen - FMT_SPOOL_HDR_SIZE + 1 : 1);
	size_t n = 0;
	uint64_t off = FMT_SPOOL_HDR_SIZE;
	struct fmt_decoder dec;
	fmt_decoder_init(&dec, NULL, 0);
	for (unsigned chunk = 0; off < flen; chunk++) {
		uint64_t size = fmt_spool_chunk_size(chunk);
		if (size > flen - off)
			size = flen - off;
		dec.p = file + off;
		dec.end = file + off + size;
		struct fmt_rec r;
		int rc, padded = 0;
		const uint8_t *p0 = dec.p;
		while ((rc = fmt_decode(&dec, &r)) > 0) {
			if (r.kind == FMT_K_EXT && r.ext == FMT_X_PAD) {
				padded = 1;
				break;
			}
			size_t len = (size_t)(dec.p - p0);
			memcpy(out + n, p0, len);
			n += len;
			p0 = dec.p;
			t->nevents++;
			if (r.kind == FMT_K_ENTER_NEW || r.kind == FMT_K_EXT) {
				if (!r.addr)
					continue;
				if (*naddrs == *capaddrs) {
					*capaddrs = *capaddrs ? *capaddrs * 2 : 1024;
					*addrs = xrealloc(*addrs, *capaddrs * sizeof(**addrs));
				}
				(*addrs)[(*naddrs)++] = r.addr;
			}
		}
		if (rc < 0)
			t->flags |= FMT_THR_DAMAGED;
		if (!padded)
			break;
		off += fmt_spool_chunk_size(chunk);
	}
	t->ev_owned = out;
	t->ev = out;
	t->ev_len = n;
}

/* "addr name" lines of the hooked library functions. */
static const char *plt_name(const char *plt, uint64_t addr, char *buf, size_t n)
{
	char key[32];
	int kl = snprintf(key, sizeof(key), "%llx ", (unsigned long long)addr);
	for (const char *p = plt; p && *p;) {
		if (strncmp(p, key, (size_t)kl) == 0) {
			const char *v = p + kl, *e = strchrnul(v, '\n');
			snprintf(buf, n, "%.*s", (int)(e - v), v);
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void symbolize(struct fmt_process *p, const char *maps, size_t mlen, const char *plt,
		      uint64_t *addrs, size_t naddrs)
{
	struct sym_proc *sp = sym_proc_open(maps ? maps : "", maps ? mlen : 0);
	if (!sp)
		die("out of memory");
	uint32_t nm;
	const struct fmt_module *mods = sym_proc_modules(sp, &nm);
	p->mods = xcalloc(nm, sizeof(*p->mods));
	for (uint32_t i = 0; i < nm; i++) {
		p->mods[i] = mods[i];
		p->mods[i].path = xstrdup(mods[i].path);
		p->mods[i].build_id = xstrdup(mods[i].build_id);
	}
	p->nmods = nm;
	if (nm && !p->exe[0]) {
		free(p->exe);
		p->exe = xstrdup(mods[0].path);
	}
	qsort(addrs, naddrs, sizeof(*addrs), cmp_u64);
	p->syms = xcalloc(naddrs, sizeof(*p->syms));
	for (size_t i = 0; i < naddrs; i++) {
		if (i && addrs[i] == addrs[i - 1])
			continue;
		struct fmt_symbol *s = &p->syms[p->nsyms++];
		struct sym_info si;
		char pn[512];
		const char *alias = plt ? plt_name(plt, addrs[i], pn, sizeof(pn)) : NULL;
		s->addr = addrs[i];
		s->module = ~0u;
		if (sym_proc_lookup(sp, addrs[i], &si) == 0) {
			s->module = si.module >= 0 ? (uint32_t)si.module : ~0u;
			s->name = alias ? sym_demangle(alias) : xstrdup(si.name ? si.name : "");
			s->size = si.name && si.start == addrs[i] ? si.size : 0;
			s->file = xstrdup(si.file ? si.file : "");
			s->line = si.line;
			sym_info_free(&si);
		} else {
			s->name = alias ? sym_demangle(alias) : xstrdup("");
			s->file = xstrdup("");
		}
	}
	qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_sym);
	sym_proc_close(sp);
}

int rec_spool_read(const char *dir, struct fmt_data *d, char *err, size_t errlen)
{
	DIR *dh = opendir(dir);
	if (!dh) {
		snprintf(err, errlen, "cannot read the spool '%s': %s", dir, strerror(errno));
		return -1;
	}
	struct spool_proc *procs = NULL;
	uint32_t nprocs = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dh))) {
		const char *nm = de->d_name;
		size_t l = strlen(nm);
		if (nm[0] != 'p' || l < 5 || strcmp(nm + l - 4, ".buf") != 0)
			continue;
		const char *dot = strchr(nm, '.');
		if (!dot || (size_t)(dot - nm) >= sizeof(procs->key))
			continue;
		uint32_t i;
		for (i = 0; i < nprocs; i++)
			if (strlen(procs[i].key) == (size_t)(dot - nm) &&
			    strncmp(procs[i].key, nm, (size_t)(dot - nm)) == 0)
				break;
		if (i == nprocs) {
			if (nprocs == cap) {
				cap = cap ? cap * 2 : 8;
				procs = xrealloc(procs, cap * sizeof(*procs));
			}
			memset(&procs[i], 0, sizeof(procs[i]));
			snprintf(procs[i].key, sizeof(procs[i].key), "%.*s", (int)(dot - nm), nm);
			const char *dash = strchr(procs[i].key, '-');
			procs[i].start_ns = dash ? strtoull(dash + 1, NULL, 10) : 0;
			nprocs++;
		}
		procs[i].bufs = xrealloc(procs[i].bufs, (procs[i].nbufs + 1) * sizeof(char *));
		procs[i].bufs[procs[i].nbufs++] = xstrdup(nm);
	}
	closedir(dh);
	qsort(procs, nprocs, sizeof(*procs), cmp_proc);
	d->procs = xcalloc(nprocs, sizeof(*d->procs));
	for (uint32_t pi = 0; pi < nprocs; pi++) {
		struct spool_proc *sp = &procs[pi];
		struct fmt_process *p = &d->procs[d->nprocs];
		size_t ilen = 0, clen = 0, mlen = 0, plen = 0;
		char *info = read_spool_file(dir, sp->key, ".info", &ilen);
		char *cmd = read_spool_file(dir, sp->key, ".cmdline", &clen);
		char *maps = read_spool_file(dir, sp->key, ".maps", &mlen);
		char *plt = read_spool_file(dir, sp->key, ".plt", &plen);
		char v[256];
		p->pid = info && info_get(info, "pid", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
		p->ppid = info && info_get(info, "ppid", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
		p->cost = info && info_get(info, "cost", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		p->os = xstrdup(info && info_get(info, "os", v, sizeof(v)) ? v : "unknown");
		if (cmd) {
			for (size_t k = 0; k + 1 < clen; k++)
				if (!cmd[k])
					cmd[k] = ' ';
			p->command = xstrdup(cmd);
		} else {
			p->command = xstrdup("");
		}
		p->exe = xstrdup("");
		uint64_t *addrs = NULL;
		size_t naddrs = 0, capaddrs = 0;
		uint32_t first_thread = d->nthreads;
		for (uint32_t b = 0; b < sp->nbufs; b++) {
			char *path = xasprintf("%s/%s", dir, sp->bufs[b]);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			free(path);
			struct stat st;
			if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < FMT_SPOOL_HDR_SIZE) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			uint8_t *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			close(fd);
			if (m == MAP_FAILED)
				continue;
			const struct fmt_spool_hdr *h = (const void *)m;
			if (memcmp(h->magic, FMT_SPOOL_MAGIC, 8) != 0 || h->version != FMT_SPOOL_VERSION) {
				munmap(m, (size_t)st.st_size);
				continue;
			}
			d->threads = xrealloc(d->threads, (d->nthreads + 1) * sizeof(*d->threads));
			struct fmt_thread *t = &d->threads[d->nthreads++];
			memset(t, 0, sizeof(*t));
			t->proc = d->nprocs;
			t->tid = (uint32_t)h->tid;
			t->name = xstrndup(h->name, sizeof(h->name));
			t->start = h->start_time;
			if (h->flags & FMT_SPOOL_NOSPACE)
				t->flags |= FMT_THR_NOSPACE;
			if (h->flags & FMT_SPOOL_ENDED)
				t->flags |= FMT_THR_ENDED;
			if (!p->cost && h->calib_ticks)
				p->cost = h->calib_ticks;
			copy_events(m, (size_t)st.st_size, t, &addrs, &naddrs, &capaddrs);
			munmap(m, (size_t)st.st_size);
		}
		/* main thread (tid == pid) first, then by tid */
		for (uint32_t a = first_thread; a < d->nthreads; a++)
			for (uint32_t b = a + 1; b < d->nthreads; b++) {
				struct fmt_thread *x = &d->threads[a], *y = &d->threads[b];
				int xm = x->tid == p->pid, ym = y->tid == p->pid;
				if (ym > xm || (ym == xm && y->tid < x->tid)) {
					struct fmt_thread tmp = *x;
					*x = *y;
					*y = tmp;
				}
			}
		if (d->nthreads > first_thread) {
			symbolize(p, maps, mlen, plt, addrs, naddrs);
			d->nprocs++;
		} else {
			free(p->command);
			free(p->exe);
			free(p->os);
			memset(p, 0, sizeof(*p));
		}
		free(addrs);
		free(info);
		free(cmd);
		free(maps);
		free(plt);
		for (uint32_t b = 0; b < sp->nbufs; b++)
			free(sp->bufs[b]);
		free(sp->bufs);
	}
	free(procs);
	return 0;
}

void rec_spool_remove(const char *dir)
{
	DIR *dh = opendir(dir);
	if (dh) {
		struct dirent *de;
		while ((de = readdir(dh)))
			if (de->d_name[0] != '.') {
				char *path = xasprintf("%s/%s", dir, de->d_name);
				unlink(path);
				free(path);
			}
		closedir(dh);
	}
	rmdir(dir);
}
