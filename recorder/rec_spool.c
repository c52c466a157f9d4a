/*
 * rec_spool.c - gathering what the runtime left in the spool directory
 * (fmt_spool.h) into a struct fmt_data: one process per key, one thread per
 * buffer file, the events copied without the chunk padding, and every
 * function address symbolized now, while the binaries are at hand.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder.h"
#include "../format/fmt_event.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"
#include "../symbol/symbol.h"

static int cmp_key(const void *a, const void *b)
{
	const struct rec_spool_key *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

int rec_spool_scan(const char *dir, const char *suffix, struct rec_spool_key **out, uint32_t *nout, char *err,
		   size_t errlen)
{
	*out = NULL;
	*nout = 0;
	DIR *dh = opendir(dir);
	if (!dh) {
		snprintf(err, errlen, "cannot read the spool '%s': %s", dir, strerror(errno));
		return -1;
	}
	struct rec_spool_key *keys = NULL;
	uint32_t n = 0, cap = 0;
	size_t sl = strlen(suffix);
	struct dirent *de;
	while ((de = readdir(dh))) {
		const char *nm = de->d_name, *dot = strchr(nm, '.');
		size_t l = strlen(nm);
		if (nm[0] != 'p' || !dot || (size_t)(dot - nm) >= sizeof(keys->key))
			continue;
		int info = strcmp(dot, ".info") == 0;
		int file = !info && l >= sl && strcmp(nm + l - sl, suffix) == 0;
		if (!info && !file)
			continue;
		uint32_t i;
		for (i = 0; i < n; i++)
			if (strlen(keys[i].key) == (size_t)(dot - nm) && strncmp(keys[i].key, nm, (size_t)(dot - nm)) == 0)
				break;
		if (i == n) {
			if (n == cap) {
				cap = cap ? cap * 2 : 8;
				keys = xrealloc(keys, cap * sizeof(*keys));
			}
			memset(&keys[i], 0, sizeof(keys[i]));
			snprintf(keys[i].key, sizeof(keys[i].key), "%.*s", (int)(dot - nm), nm);
			const char *dash = strchr(keys[i].key, '-');
			keys[i].order = dash ? strtoull(dash + 1, NULL, 10) : 0;
			n++;
		}
		if (info) {
			keys[i].has_info = 1;
			continue;
		}
		UTIL_GROW1(keys[i].files, keys[i].nfiles);
		keys[i].files[keys[i].nfiles++] = xstrdup(nm);
	}
	closedir(dh);
	if (n > 1)
		qsort(keys, n, sizeof(*keys), cmp_key);
	*out = keys;
	*nout = n;
	return 0;
}

void rec_spool_keys_free(struct rec_spool_key *keys, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t f = 0; f < keys[i].nfiles; f++)
			free(keys[i].files[f]);
		free(keys[i].files);
	}
	free(keys);
}

static char *read_spool_file(const char *dir, const char *key, const char *suffix, size_t *len)
{
	char *path = xasprintf("%s/%s%s", dir, key, suffix);
	char *s = util_read_regular(path, REC_SPOOL_SMALL_MAX, 1, len);
	free(path);
	return s;
}

const char *rec_info_get(const char *info, const char *name, char *out, size_t n)
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
 * The events of one thread buffer as segments of its file: the used bytes
 * of each finished chunk, as the runtime wrote them down, and of the last
 * chunk, found by decoding it up to its end (the runtime may have died
 * there).  Nothing is copied here; fmt_write() copies file to file.
 */
static void event_segments(int fd, uint64_t flen, const struct fmt_spool_hdr *h,
			   struct fmt_thread *t)
{
	uint64_t off = FMT_SPOOL_DATA_OFF;
	uint32_t nused = h->nused <= FMT_SPOOL_MAX_CHUNKS ? h->nused : FMT_SPOOL_MAX_CHUNKS;
	int ended = (h->flags & FMT_SPOOL_ENDED) != 0;
	/* past the header's table, every chunk is decoded for its end */
	int untabled = (h->flags & FMT_SPOOL_UNTABLED) != 0;
	uint32_t cap = nused + 2;
	t->segs = xcalloc(cap, sizeof(*t->segs));
	for (unsigned chunk = 0; off < flen; chunk++) {
		uint64_t size = fmt_spool_chunk_size(chunk);
		uint64_t have = flen - off < size ? flen - off : size;
		uint64_t used;
		int padded = 0;
		/* the runtime allocates each chunk whole before writing it:
		 * a file that ends inside one was cut short (copied in part,
		 * truncated), and records are missing */
		if ((have < size && !(h->flags & (FMT_SPOOL_NOSPACE | FMT_SPOOL_FILELIMIT | FMT_SPOOL_LEFTPROBE))) ||
		    (chunk < nused && h->used[chunk] > have))
			t->flags |= FMT_THR_DAMAGED;
		if (chunk < nused) {
			used = h->used[chunk] <= have ? h->used[chunk] : have;
		} else {
			/* unfinished: decode to the first zero byte or bad record */
			uint8_t *buf = xmalloc(have ? have : 1);
			ssize_t r = pread(fd, buf, have, (off_t)off);
			struct fmt_decoder dec;
			fmt_decoder_init(&dec, buf, r > 0 ? (size_t)r : 0);
			/* only the records' lengths matter here: the address
			 * cache filled in earlier chunks is not known */
			for (unsigned k = 0; k < FMT_CACHE_SLOTS; k++)
				dec.c.fn[k] = dec.c.pair[k][0] = 1;
			struct fmt_rec rec;
			int rc;
			while ((rc = fmt_decode(&dec, &rec)) > 0 &&
			       !(rec.kind == FMT_K_EXT && rec.ext == FMT_X_PAD))
				;
			if (rc < 0)
				t->flags |= FMT_THR_DAMAGED;
			used = (uint64_t)(dec.p - buf);
			if (rc > 0) { /* stopped at a PAD: leave it out */
				used -= 3;
				padded = 1;
			}
			free(buf);
		}
		if (used) {
			if (t->nsegs == cap) {
				cap *= 2;
				t->segs = xrealloc(t->segs, cap * sizeof(*t->segs));
			}
			t->segs[t->nsegs++] = (struct fmt_segment){fd, off, used};
			t->ev_len += used;
		}
		if (chunk >= nused ? !(untabled && padded) : ended && !untabled && chunk + 1 >= nused)
			break;
		off += size;
	}
	/* no chunk at all, though chunks were finished or functions told */
	if (flen <= FMT_SPOOL_DATA_OFF && (h->nused || h->notes_n))
		t->flags |= FMT_THR_DAMAGED;
	if (!t->nsegs) {
		free(t->segs);
		t->segs = NULL;
	}
}

/* How many thread buffers are read with their descriptor kept open for
 * the writer: 256, or a quarter of what RLIMIT_NOFILE allows. */
static uint32_t fds_kept(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 1024)
		return 256;
	return (uint32_t)(rl.rlim_cur / 4);
}

/* A thread buffer's flags (fmt_spool.h) as the data file's (format.h). */
static const struct {
	uint32_t spool, thread;
} thread_flags[] = {
	{FMT_SPOOL_NOSPACE, FMT_THR_NOSPACE},   {FMT_SPOOL_FULL, FMT_THR_CAPPED},
	{FMT_SPOOL_ORPHANED, FMT_THR_ORPHANED}, {FMT_SPOOL_NOFILES, FMT_THR_NOFILES},
	{FMT_SPOOL_NOACCESS, FMT_THR_NOACCESS}, {FMT_SPOOL_SECCOMP, FMT_THR_SECCOMP},
	{FMT_SPOOL_SHAREDTLS, FMT_THR_SHAREDTLS}, {FMT_SPOOL_LEFTPROBE, FMT_THR_LEFTPROBE},
	{FMT_SPOOL_NOCLOCK, FMT_THR_NOCLOCK}, {FMT_SPOOL_FILELIMIT, FMT_THR_FILELIMIT},
	{FMT_SPOOL_ENDED, FMT_THR_ENDED},
};

/* Room for n more addresses in *addrs. */
static void addrs_reserve(uint64_t **addrs, size_t naddrs, size_t *capaddrs, size_t n)
{
	if (naddrs + n > *capaddrs) {
		*capaddrs = (naddrs + n) * 2 + 1024;
		*addrs = xrealloc(*addrs, *capaddrs * sizeof(**addrs));
	}
}

/* The function addresses a thread's .fns file lists. */
static void read_fns(const char *dir, const char *bufname, uint64_t **addrs, size_t *naddrs,
		     size_t *capaddrs)
{
	char *path = xasprintf("%s/%.*s.fns", dir, (int)(strlen(bufname) - 4), bufname);
	size_t len = 0;
	char *data = util_read_regular(path, REC_SPOOL_SMALL_MAX, 1, &len);
	free(path);
	if (!data)
		return;
	size_t n = len / 8;
	if (n) {
		addrs_reserve(addrs, *naddrs, capaddrs, n);
		for (size_t i = 0; i < n; i++) { /* (zeros: a window's unused end) */
			uint64_t a;
			memcpy(&a, data + 8 * i, 8);
			if (a)
				(*addrs)[(*naddrs)++] = a;
		}
	}
	free(data);
}

/* The function addresses in a thread's notes area (fmt_spool.h). */
static void read_note_area(int fd, uint64_t flen, const struct fmt_spool_hdr *h, uint64_t **addrs, size_t *naddrs,
			   size_t *capaddrs)
{
	uint64_t n = h->notes_n;
	if (n > FMT_SPOOL_NOTES_MAX)
		n = FMT_SPOOL_NOTES_MAX;
	if (flen < FMT_SPOOL_NOTES_OFF + n * 8)
		n = flen > FMT_SPOOL_NOTES_OFF ? (flen - FMT_SPOOL_NOTES_OFF) / 8 : 0;
	if (!n)
		return;
	addrs_reserve(addrs, *naddrs, capaddrs, n);
	ssize_t got = pread(fd, *addrs + *naddrs, n * 8, FMT_SPOOL_NOTES_OFF);
	if (got > 0)
		*naddrs += (size_t)got / 8;
}

/*
 * The calibrated probe cost, corrected by what the probes cost in this
 * run: the runtime timed the tails of a sample of the run's probes and of
 * the calibration's (runtime/rt.c, rt_after_lean), and the difference of
 * the averages is what the program's cache and branch state added to each
 * probe.  All in 1/1024 ticks; never below half the calibrated cost, nor
 * above twice it.  A tail starts at a clock read that does not wait for the
 * program's work still in flight (rdtsc is not ordered): after a loop of
 * divisions the tails held the divider's backlog, 226-245 ticks on average
 * against the calibration's 74, and the cost came out at 185 ns against 17.5
 * calibrated, which no interval of the run had room for (the tiny calls
 * between lost all their time).  The real programs measured before were at
 * or near the bound (cc1plus 56 -> 109 ticks; Lua 20-50 ticks on 45, whose
 * largest it trims).
 */
static uint64_t adjusted_cost(uint64_t cost, uint64_t calib_tail, uint64_t tail_sum, uint64_t tail_n)
{
	if (!cost || !calib_tail || tail_n < 64)
		return cost;
	int64_t c = (int64_t)cost + (int64_t)((tail_sum << 10) / tail_n) - (int64_t)calib_tail;
	if (c > (int64_t)(2 * cost))
		return 2 * cost;
	return c < (int64_t)(cost / 2) ? cost / 2 : (uint64_t)c;
}

/* The addresses of the "addr name" lines of the hooked library functions. */
static void plt_addresses(const char *plt, struct fmt_process *p)
{
	size_t cap = 0;
	for (const char *q = plt; q && *q;) {
		char *end;
		uint64_t a = strtoull(q, &end, 16);
		if (end != q && *end == ' ') {
			if (p->nlib_fns == cap) {
				cap = cap ? 2 * cap : 256;
				p->lib_fns = xrealloc(p->lib_fns, cap * sizeof(*p->lib_fns));
			}
			p->lib_fns[p->nlib_fns++] = a;
		}
		q = strchr(q, '\n');
		if (q)
			q++;
	}
	util_sort_u64(p->lib_fns, p->nlib_fns);
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nlib_fns; i++)
		if (!n || p->lib_fns[i] != p->lib_fns[n - 1])
			p->lib_fns[n++] = p->lib_fns[i];
	p->nlib_fns = n;
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

/* A snapshot of a process's maps (<key>.maps, <key>.maps.<n>). */
struct maps_epoch {
	uint64_t when; /* ticks from which it holds (0: the start) */
	unsigned seq;
	char *text;    /* the maps, without the "@<ticks>" line */
	size_t len;
};

static int cmp_epoch(const void *a, const void *b)
{
	const struct maps_epoch *x = a, *y = b;
	if (x->when != y->when)
		return x->when < y->when ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The snapshots the runtime wrote after dlopen/dlclose, in time order. */
static struct maps_epoch *read_epochs(const char *dir, const char *key, uint32_t *n)
{
	*n = 0;
	struct maps_epoch *e = NULL;
	DIR *dh = opendir(dir);
	if (!dh)
		return NULL;
	size_t kl = strlen(key);
	struct dirent *de;
	while ((de = readdir(dh))) {
		const char *nm = de->d_name;
		if (strncmp(nm, key, kl) != 0 || strncmp(nm + kl, ".maps.", 6) != 0)
			continue;
		char *end;
		unsigned long seq = strtoul(nm + kl + 6, &end, 10);
		if (*end || end == nm + kl + 6) /* not "<key>.maps.<n>" (a .tmp one) */
			continue;
		size_t len;
		char *path = xasprintf("%s/%s", dir, nm);
		char *text = util_read_regular(path, REC_SPOOL_SMALL_MAX, 1, &len);
		free(path);
		char *nl = text && text[0] == '@' ? strchr(text, '\n') : NULL;
		if (!nl) {
			free(text);
			continue;
		}
		UTIL_GROW1(e, *n);
		struct maps_epoch *x = &e[(*n)++];
		x->when = strtoull(text + 1, NULL, 10);
		x->seq = (unsigned)seq;
		x->len = len - (size_t)(nl + 1 - text);
		x->text = xstrndup(nl + 1, x->len);
		free(text);
	}
	closedir(dh);
	if (*n > 1)
		qsort(e, *n, sizeof(*e), cmp_epoch);
	return e;
}

static int same_module(const struct fmt_module *a, const struct fmt_module *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       strcmp(a->path, b->path) == 0;
}

/* Name addr with sp (whose module m is the process's module pm). */
static void add_symbol(struct fmt_process *p, struct sym_proc *sp, const char *plt, uint64_t addr,
		       uint32_t pm)
{
	struct fmt_symbol *s = &p->syms[p->nsyms++];
	struct sym_info si;
	char pn[512];
	const char *alias = plt ? plt_name(plt, addr, pn, sizeof(pn)) : NULL;
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->module = pm;
	if (alias) {
		/* a library function called through the PLT: its name is the
		 * one the program called; no need for the library's DWARF */
		s->name = sym_demangle(alias);
		s->file = xstrdup("");
		/* the runtime's own dlopen, dlclose and pthread_setname_np pass
		 * the call on to the C library's: named as the C library's */
		const char *base = pm < p->nmods ? strrchr(p->mods[pm].path, '/') : NULL;
		if (base && strcmp(base, "/libstint-rt.so") == 0)
			for (uint32_t m = 0; m < p->nmods; m++) {
				const char *b = strrchr(p->mods[m].path, '/');
				if (b && strncmp(b, "/libc.so", 8) == 0) {
					s->module = m;
					break;
				}
			}
	} else if (pm != ~0u && sym_proc_lookup(sp, addr, &si) == 0) {
		s->name = xstrdup(si.name ? si.name : "");
		s->size = si.name && si.start == addr ? si.size : 0;
		s->file = xstrdup(si.file ? si.file : "");
		s->line = si.line;
		sym_info_free(&si);
	} else {
		s->name = xstrdup("");
		s->file = xstrdup("");
	}
}

/*
 * Name the function addresses of a process.  Its modules are those of every
 * snapshot of its maps, each with the time it was loaded and unloaded; an
 * address is named once in each module that ever held it, by the snapshot
 * in which that module appeared (a library unloaded and another loaded at
 * its address give two symbols; the reader picks by the event's time).
 */
/*
 * The source line (and inline chain) of call site a, looked up at a - 1,
 * the call instruction (doc/numbers.md: a call's line), into p->lines.
 */
static void add_site_line(struct fmt_process *p, struct sym_proc *sp, uint64_t a, uint32_t *cap)
{
	const char *file;
	uint32_t line;
	if (!a || sym_proc_line(sp, a - 1, &file, &line) != 0)
		return;
	if (p->nlines == *cap) {
		*cap = *cap * 2 + 64;
		p->lines = xrealloc(p->lines, *cap * sizeof(*p->lines));
	}
	struct fmt_line *l = &p->lines[p->nlines++];
	memset(l, 0, sizeof(*l));
	l->addr = a - 1;
	l->file = xstrdup(file);
	l->line = line;
	struct sym_inline *inl;
	uint32_t ni = sym_proc_inlines(sp, a - 1, &inl);
	if (ni) {
		l->inl = xcalloc(ni, sizeof(*l->inl));
		for (uint32_t k = 0; k < ni; k++)
			l->inl[k] = (struct fmt_inline){inl[k].name, inl[k].file, inl[k].line, inl[k].call_file,
							inl[k].call_line};
		l->ninl = ni;
		free(inl); /* the strings moved to l->inl */
	}
}

static int cmp_line_addr(const void *a, const void *b)
{
	const struct fmt_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Name the functions at addrs, and give the call sites at sites their
 * lines, each in the first module snapshot that maps it.
 */
static void symbolize(struct fmt_process *p, const char *maps, size_t mlen, struct maps_epoch *ep,
		      uint32_t nep, const char *plt, uint64_t *addrs, size_t naddrs, uint64_t *sites,
		      size_t nsites)
{
	util_sort_u64(sites, nsites);
	size_t ns = 0;
	for (size_t i = 0; i < nsites; i++)
		if (!i || sites[i] != sites[i - 1])
			sites[ns++] = sites[i];
	nsites = ns;
	uint8_t *sited = xcalloc(nsites + 1, 1);
	uint32_t caplines = 0;
	util_sort_u64(addrs, naddrs);
	size_t nu = 0;
	for (size_t i = 0; i < naddrs; i++)
		if (!i || addrs[i] != addrs[i - 1])
			addrs[nu++] = addrs[i];
	naddrs = nu;
	uint8_t *named = xcalloc(naddrs ? naddrs : 1, 1);
	size_t capsyms = naddrs + 16;
	p->syms = xcalloc(capsyms, sizeof(*p->syms));
	uint32_t *live = NULL, nlive = 0, capmods = 0; /* modules of the last snapshot */
	for (uint32_t k = 0; k <= nep; k++) {
		struct sym_proc *sp;
		uint64_t when = k ? ep[k - 1].when : 0;
		if (k == 0) {
			sp = rec_open_process(p, maps, mlen); /* p->mods: the first snapshot's */
			capmods = p->nmods;
			live = xcalloc(p->nmods + 1, sizeof(*live));
			for (uint32_t i = 0; i < p->nmods; i++)
				live[nlive++] = i;
		} else {
			sp = sym_proc_open(ep[k - 1].text, ep[k - 1].len);
			if (!sp)
				die("out of memory");
		}
		uint32_t nm;
		const struct fmt_module *mods = sym_proc_modules(sp, &nm);
		uint32_t *pm = xcalloc(nm + 1, sizeof(*pm)); /* sp's module -> p's */
		uint8_t *fresh = xcalloc(nm + 1, 1);
		uint8_t *kept = xcalloc(nlive + 1, 1);
		for (uint32_t i = 0; i < nm; i++) {
			uint32_t j;
			for (j = 0; j < nlive; j++)
				if (same_module(&p->mods[live[j]], &mods[i]))
					break;
			if (k == 0 || j < nlive) {
				pm[i] = k == 0 ? i : live[j];
				if (k)
					kept[j] = 1;
				fresh[i] = k == 0;
				continue;
			}
			/* the same file mapped again where it was (a plugin loaded
			 * and unloaded in a loop): the module it was, mapped from
			 * its first load on, already named (the reader takes the
			 * latest load mapped at an event's time) */
			for (j = 0; j < p->nmods; j++)
				if (p->mods[j].unload && same_module(&p->mods[j], &mods[i]))
					break;
			if (j < p->nmods) {
				p->mods[j].unload = 0;
				pm[i] = j;
				fresh[i] = 0;
				continue;
			}
			if (p->nmods == capmods) {
				capmods = capmods * 2 + 8;
				p->mods = xrealloc(p->mods, capmods * sizeof(*p->mods));
			}
			struct fmt_module *nmod = &p->mods[p->nmods];
			*nmod = mods[i];
			nmod->path = xstrdup(mods[i].path);
			nmod->build_id = xstrdup(mods[i].build_id);
			nmod->load = when;
			nmod->unload = 0;
			pm[i] = p->nmods++;
			fresh[i] = 1;
		}
		if (k) {
			for (uint32_t j = 0; j < nlive; j++)
				if (!kept[j])
					p->mods[live[j]].unload = when;
			live = xrealloc(live, (nm + 1) * sizeof(*live));
			for (uint32_t i = 0; i < nm; i++)
				live[i] = pm[i];
			nlive = nm;
		}
		for (size_t i = 0; i < naddrs; i++) {
			int m = sym_proc_module_of(sp, addrs[i]);
			if (m < 0 || !fresh[m])
				continue;
			if (p->nsyms == capsyms) {
				capsyms *= 2;
				p->syms = xrealloc(p->syms, capsyms * sizeof(*p->syms));
			}
			add_symbol(p, sp, plt, addrs[i], pm[m]);
			named[i] = 1;
		}
		/* call sites get lines in the modules that hold instrumented
		 * functions only: the calls made in a library's own code (libc
		 * calling main, qsort calling its comparator) would cost the
		 * library's DWARF, for lines no view charges anything to */
		uint8_t *instr = xcalloc(nm + 1, 1);
		for (size_t i = 0; i < naddrs; i++) {
			int m = sym_proc_module_of(sp, addrs[i]);
			if (m >= 0 && !fmt_is_lib_fn(p, addrs[i]))
				instr[m] = 1;
		}
		for (size_t i = 0; i < nsites; i++) {
			int m = sym_proc_module_of(sp, sites[i] - 1);
			if (sited[i] || m < 0 || !fresh[m] || !instr[m])
				continue;
			add_site_line(p, sp, sites[i], &caplines);
			sited[i] = 1;
		}
		free(instr);
		free(pm);
		free(fresh);
		free(kept);
		sym_proc_close(sp);
	}
	for (size_t i = 0; i < naddrs; i++)
		if (!named[i]) { /* in no module: kept, unnamed */
			if (p->nsyms == capsyms) {
				capsyms *= 2;
				p->syms = xrealloc(p->syms, capsyms * sizeof(*p->syms));
			}
			add_symbol(p, NULL, plt, addrs[i], ~0u);
		}
	free(named);
	free(sited);
	free(live);
	fmt_sort_symbols(p);
	if (p->nlines) { /* one line per address: the first snapshot's */
		qsort(p->lines, p->nlines, sizeof(*p->lines), cmp_line_addr);
		uint32_t n = 0;
		for (uint32_t i = 0; i < p->nlines; i++) {
			if (n && p->lines[n - 1].addr == p->lines[i].addr) {
				free(p->lines[i].file);
				fmt_inline_free(p->lines[i].inl, p->lines[i].ninl);
				continue;
			}
			p->lines[n++] = p->lines[i];
		}
		p->nlines = n;
	}
}

/* The ticks a thread's events end at: its start plus every record's delta
 * (only the records' lengths and deltas matter, as in event_segments).
 * 0 when a segment cannot be read or decoded. */
static uint64_t events_end(const struct fmt_thread *t, int fd)
{
	uint64_t ticks = t->start;
	for (uint32_t i = 0; i < t->nsegs; i++) {
		uint8_t *buf = xmalloc(t->segs[i].len ? t->segs[i].len : 1);
		ssize_t r = pread(fd, buf, t->segs[i].len, (off_t)t->segs[i].off);
		struct fmt_decoder dec;
		fmt_decoder_init(&dec, buf, r == (ssize_t)t->segs[i].len ? (size_t)r : 0);
		for (unsigned k = 0; k < FMT_CACHE_SLOTS; k++)
			dec.c.fn[k] = dec.c.pair[k][0] = 1;
		struct fmt_rec rec;
		int rc;
		while ((rc = fmt_decode(&dec, &rec)) > 0)
			ticks += rec.delta;
		int whole = r == (ssize_t)t->segs[i].len && rc == 0 && dec.p == buf + r;
		free(buf);
		if (!whole)
			return 0;
	}
	return ticks;
}

/*
 * A process that ended with threads still running (exit() or a fatal signal
 * in one of them) left "<key>.exit" (runtime/rt.c, rt_note_process_end):
 * its end in ticks and the threads then off the CPU.  Those threads had no
 * last record: each gets one, the thread's end at the process's, written
 * into its buffer after its events (bytes no record used), so that their
 * open frames close when the process ended, not at their last probe.  The
 * interval to it is OS time for a thread that was off the CPU.  Threads
 * whose recording stopped early for another reason are left as they are.
 */
static void close_at_process_end(const char *dir, const char *key, struct fmt_data *d, uint32_t first)
{
	size_t len = 0;
	char *info = read_spool_file(dir, key, ".exit", &len);
	char v[32];
	uint64_t end = info && rec_info_get(info, "end", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	for (uint32_t i = first; end && i < d->nthreads; i++) {
		struct fmt_thread *t = &d->threads[i];
		if (t->flags || !t->nsegs || !t->spool_path)
			continue;
		int off_cpu = 0;
		for (const char *p = info; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (strncmp(p, "off ", 4) == 0 && strtoul(p + 4, NULL, 10) == t->tid)
				off_cpu = 1;
		int fd = open(t->spool_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		uint64_t last = events_end(t, fd);
		struct fmt_segment *s = &t->segs[t->nsegs - 1];
		/* the chunk the last segment starts: records never cross one */
		uint64_t chunk_off = FMT_SPOOL_DATA_OFF;
		unsigned chunk = 0;
		while (chunk_off < s->off)
			chunk_off += fmt_spool_chunk_size(chunk++);
		uint8_t rec[FMT_MAX_RECORD + 4];
		uint8_t *q = fmt_put_ext(rec, FMT_X_END, off_cpu, end - last, NULL, 0);
		uint64_t at = s->off + s->len;
		/* a PAD after it keeps the chunk's layout for a later read */
		uint8_t *pad = fmt_put_ext(q, FMT_X_PAD, 0, 0, NULL, 0);
		if (last && end > last && chunk_off == s->off &&
		    at + (uint64_t)(pad - rec) <= s->off + fmt_spool_chunk_size(chunk) &&
		    pwrite(fd, rec, (size_t)(pad - rec), (off_t)at) == pad - rec) {
			s->len += (uint64_t)(q - rec);
			t->ev_len += (uint64_t)(q - rec);
			t->flags |= FMT_THR_ENDED;
		}
		close(fd);
	}
	free(info);
}

int rec_spool_read(const char *dir, struct fmt_data *d, char *err, size_t errlen)
{
	struct rec_spool_key *procs;
	uint32_t nprocs;
	if (rec_spool_scan(dir, ".buf", &procs, &nprocs, err, errlen) < 0)
		return -1;
	d->procs = xcalloc(nprocs, sizeof(*d->procs));
	uint64_t unrecorded = 0, unrecorded_procs = 0;
	uint32_t open_fds = fds_kept();
	for (uint32_t pi = 0; pi < nprocs; pi++) {
		struct rec_spool_key *sp = &procs[pi];
		struct fmt_process *p = &d->procs[d->nprocs];
		if (!sp->nfiles)
			continue; /* no thread buffer (the sampler's keys have none) */
		size_t ilen = 0, clen = 0, mlen = 0, plen = 0;
		char *info = read_spool_file(dir, sp->key, ".info", &ilen);
		char *cmd = read_spool_file(dir, sp->key, ".cmdline", &clen);
		char *maps = read_spool_file(dir, sp->key, ".maps", &mlen);
		char *plt = read_spool_file(dir, sp->key, ".plt", &plen);
		char v[256];
		p->pid = info && rec_info_get(info, "pid", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
		p->ppid = info && rec_info_get(info, "ppid", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
		p->cost = info && rec_info_get(info, "cost", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		p->os = xstrdup(info && rec_info_get(info, "os", v, sizeof(v)) ? v : "unknown");
		if (cmd)
			util_args_joined(cmd, clen);
		p->command = xstrdup(cmd ? cmd : "");
		p->exe = xstrdup("");
		uint64_t calib_tail = info && rec_info_get(info, "calib_tail", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		uint64_t tail_sum = 0, tail_n = 0;
		uint64_t *addrs = NULL;
		size_t naddrs = 0, capaddrs = 0;
		uint32_t first_thread = d->nthreads;
		for (uint32_t b = 0; b < sp->nfiles; b++) {
			char *path = xasprintf("%s/%s", dir, sp->files[b]);
			int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
			free(path);
			struct stat st;
			struct fmt_spool_hdr *h = xmalloc(sizeof(*h));
			if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < FMT_SPOOL_HDR_SIZE ||
			    pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) ||
			    memcmp(h->magic, FMT_SPOOL_MAGIC, 8) != 0 || h->version != FMT_SPOOL_VERSION) {
				if (fd >= 0)
					close(fd);
				free(h);
				continue;
			}
			d->threads = xrealloc(d->threads, (d->nthreads + 1) * sizeof(*d->threads));
			struct fmt_thread *t = &d->threads[d->nthreads++];
			memset(t, 0, sizeof(*t));
			t->proc = d->nprocs;
			t->tid = (uint32_t)h->tid;
			t->name = xstrndup(h->name, sizeof(h->name));
			t->start = h->start_time;
			for (size_t k = 0; k < sizeof(thread_flags) / sizeof(thread_flags[0]); k++)
				if (h->flags & thread_flags[k].spool)
					t->flags |= thread_flags[k].thread;
			unrecorded += h->unrecorded;
			unrecorded_procs += h->unrecorded_procs;
			if (!p->cost && h->calib_ticks)
				p->cost = h->calib_ticks;
			tail_sum += h->tail_sum;
			tail_n += h->tail_n;
			event_segments(fd, (uint64_t)st.st_size, h, t);
			read_note_area(fd, (uint64_t)st.st_size, h, &addrs, &naddrs, &capaddrs);
			/* past the first threads, the writer opens each buffer
			 * when it copies it: one descriptor per thread ran out
			 * (32,000 threads of a program whose thread ids wrapped);
			 * a buffer without events is not copied at all */
			if (!t->nsegs) {
				close(fd);
			} else if (d->nthreads > open_fds) {
				close(fd);
				for (uint32_t k = 0; k < t->nsegs; k++)
					t->segs[k].fd = -1;
			}
			t->spool_path = xasprintf("%s/%s", dir, sp->files[b]);
			free(h);
			read_fns(dir, sp->files[b], &addrs, &naddrs, &capaddrs);
		}
		close_at_process_end(dir, sp->key, d, first_thread);
		uint64_t calibrated = p->cost;
		p->cost = adjusted_cost(p->cost, calib_tail, tail_sum, tail_n);
		/* the run's extra per probe falls after its clock read, into the
		 * interval inside a call as into every other */
		uint64_t inner = info && rec_info_get(info, "cost_inner", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		if (inner && p->cost) {
			int64_t in = (int64_t)inner + (int64_t)p->cost - (int64_t)calibrated;
			p->cost_inner = in <= 0 ? 1 : (uint64_t)in > 2 * p->cost ? 2 * p->cost : (uint64_t)in;
		}
		/* how many calibrations of the run the cost is the median of, and
		 * their range, moved as the cost was */
		uint32_t ns = info && rec_info_get(info, "cost_samples", v, sizeof(v)) ? (uint32_t)strtoul(v, NULL, 10) : 0;
		uint64_t lo = ns && rec_info_get(info, "cost_min", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		uint64_t hi = ns && rec_info_get(info, "cost_max", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		if (ns && p->cost && lo <= calibrated && calibrated <= hi) {
			int64_t shift = (int64_t)p->cost - (int64_t)calibrated;
			p->cost_samples = ns;
			p->cost_min = (int64_t)lo + shift > 0 ? (uint64_t)((int64_t)lo + shift) : 0;
			p->cost_max = (uint64_t)((int64_t)hi + shift);
		}
		p->lib_cost = info && rec_info_get(info, "lib_cost", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
		p->cost_patched = info && rec_info_get(info, "cost_path", v, sizeof(v)) && strcmp(v, "patched") == 0;
		plt_addresses(plt, p);
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
			uint32_t nep;
			struct maps_epoch *ep = read_epochs(dir, sp->key, &nep);
			/* the .fns files list call sites too, marked */
			uint64_t *sites = xcalloc(naddrs + 1, sizeof(*sites));
			size_t nsites = 0, nf = 0;
			for (size_t i = 0; i < naddrs; i++)
				if (addrs[i] & FMT_SPOOL_SITE_BIT)
					sites[nsites++] = addrs[i] & ~FMT_SPOOL_SITE_BIT;
				else
					addrs[nf++] = addrs[i];
			symbolize(p, maps, mlen, ep, nep, plt, addrs, nf, sites, nsites);
			free(sites);
			for (uint32_t k = 0; k < nep; k++)
				free(ep[k].text);
			free(ep);
			d->nprocs++;
		} else {
			free(p->command);
			free(p->exe);
			free(p->os);
			free(p->lib_fns);
			memset(p, 0, sizeof(*p));
		}
		free(addrs);
		free(info);
		free(cmd);
		free(maps);
		free(plt);
	}
	rec_spool_keys_free(procs, nprocs);
	if (unrecorded) /* the report says how many threads are missing */
		util_add_word(&d->notes, "unrecorded=%llu", (unsigned long long)unrecorded);
	if (unrecorded_procs) /* and processes */
		util_add_word(&d->notes, "unrecorded_procs=%llu", (unsigned long long)unrecorded_procs);
	return 0;
}

/* Whether name is a thread's buffer file, "p<pid>-<ns>.t<tid>.buf" (not a
 * spare, ".s<k>.buf", which no thread may have taken). */
static int thread_buf_name(const char *name)
{
	const char *t = strstr(name, ".t");
	size_t l = strlen(name);
	if (name[0] != 'p' || !t || l < 5 || strcmp(name + l - 4, ".buf") != 0)
		return 0;
	for (t += 2; isdigit((unsigned char)*t); t++)
		;
	return strcmp(t, ".buf") == 0;
}

/* A spool file's size and first 8 bytes, opened without following a link
 * nor waiting; -1 if it is no regular file. */
static int spool_file_head(const char *dir, const char *name, uint64_t *size, char head[8])
{
	char *path = xasprintf("%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	free(path);
	struct stat st;
	int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	memset(head, 0, 8);
	if (ok) {
		*size = (uint64_t)st.st_size;
		if (pread(fd, head, 8, 0) < 0)
			memset(head, 0, 8);
	}
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

char *rec_spool_inplace_file(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	char *found = NULL;
	while (dh && !found && (de = readdir(dh))) {
		uint64_t size;
		char head[8];
		if (thread_buf_name(de->d_name) && spool_file_head(dir, de->d_name, &size, head) == 0 &&
		    memcmp(head, FMT_MAGIC, 8) == 0)
			found = xasprintf("%s/%s", dir, de->d_name);
	}
	if (dh)
		closedir(dh);
	return found;
}

uint32_t rec_spool_no_room(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	uint32_t n = 0;
	while (dh && (de = readdir(dh))) {
		if (!thread_buf_name(de->d_name))
			continue;
		char *path = xasprintf("%s/%s", dir, de->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		free(path);
		struct stat st;
		uint32_t flags = 0;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		/* a header that could not be allocated, or one that says so */
		if (st.st_size < FMT_SPOOL_HDR_SIZE ||
		    (pread(fd, &flags, sizeof(flags), offsetof(struct fmt_spool_hdr, flags)) == sizeof(flags) &&
		     (flags & FMT_SPOOL_NOSPACE)))
			n++;
		close(fd);
	}
	if (dh)
		closedir(dh);
	return n;
}

uint32_t rec_spool_unread(const char *dir, const struct fmt_data *d, char *first, size_t n)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	uint32_t unread = 0;
	size_t dl = strlen(dir);
	while (dh && (de = readdir(dh))) {
		uint64_t size;
		char head[8];
		if (!thread_buf_name(de->d_name) || spool_file_head(dir, de->d_name, &size, head) < 0 ||
		    size <= FMT_SPOOL_DATA_OFF)
			continue; /* (no byte of events: a thread that never started) */
		int read = 0;
		for (uint32_t i = 0; i < d->nthreads && !read; i++) {
			const char *sp = d->threads[i].spool_path;
			read = sp && strncmp(sp, dir, dl) == 0 && sp[dl] == '/' && strcmp(sp + dl + 1, de->d_name) == 0;
		}
		if (!read && !unread++ && n)
			snprintf(first, n, "%s", de->d_name);
	}
	if (dh)
		closedir(dh);
	return unread;
}

/* ------------------------------------------------------------------------
 * The spool directory, held by descriptor (recorder.h says why)
 * --------------------------------------------------------------------- */

DIR *rec_dir_list(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* Past "cs.<16 hex digits>" or "got.<...>", runtime/rt_kept.c's names of
 * results worked out from modules' code: what follows, or NULL. */
static const char *kept_suffix(const char *n)
{
	const char *t = strncmp(n, "cs.", 3) == 0 ? n + 3 : strncmp(n, "got.", 4) == 0 ? n + 4 : NULL;
	for (int i = 0; t && i < 16; i++)
		if (!isxdigit((unsigned char)t[i]) || isupper((unsigned char)t[i]))
			return NULL;
	return t ? t + 16 : NULL;
}

int rec_spool_kept_name(const char *n)
{
	const char *t = kept_suffix(n);
	return t && !*t;
}

/* "unrec.<pid>.<n>": a program a process ran that loads no runtime. */
static int unrec_name(const char *n)
{
	if (strncmp(n, "unrec.", 6) != 0)
		return 0;
	const char *p = n + 6;
	size_t d1 = strspn(p, "0123456789");
	if (!d1 || p[d1] != '.')
		return 0;
	p += d1 + 1;
	size_t d2 = strspn(p, "0123456789");
	return d2 && !p[d2];
}

char *rec_unrecorded_programs(int dirfd)
{
	DIR *d = rec_dir_list(dirfd);
	if (!d)
		return NULL;
	char *list = NULL;
	unsigned n = 0, shown = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!unrec_name(e->d_name))
			continue;
		int f = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		char buf[1200];
		ssize_t r = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
		if (f >= 0)
			close(f);
		if (r <= 0)
			continue;
		buf[r] = 0;
		char *tab = strchr(buf, '\t'), *nl = strchr(buf, '\n');
		if (!tab || !nl || nl < tab)
			continue;
		*tab = *nl = 0;
		const char *why = strcmp(buf, "setuid") == 0   ? "set-user-ID"
				  : strcmp(buf, "setgid") == 0 ? "set-group-ID"
				  : strcmp(buf, "static") == 0 ? "statically linked"
				  : strcmp(buf, "elf32") == 0  ? "32-bit"
				  : strcmp(buf, "libc") == 0   ? "another C library's loader"
							       : NULL;
		if (!why)
			continue;
		n++;
		if (shown < 3) {
			char *l = xasprintf("%s%s%s (%s)", list ? list : "", list ? ", " : "", tab + 1, why);
			free(list);
			list = l;
			shown++;
		}
	}
	closedir(d);
	if (!n)
		return NULL;
	char *more = n > shown ? xasprintf(", and %u more", n - shown) : xstrdup("");
	char *msg = xasprintf("%u program%s it ran %s not recorded, %s%s: the dynamic loader loads no "
			      "preloaded library into a set-user-ID or set-group-ID program run by another user, a "
			      "statically linked program has no loader, and stint's runtime is for 64-bit glibc "
			      "programs (-m sample records the others)",
			      n, n == 1 ? "" : "s", n == 1 ? "was" : "were", list, more);
	free(more);
	free(list);
	return msg;
}

/* Whether s (n bytes) has the line line (without its newline). */
static int has_line(const char *s, size_t n, const char *line)
{
	size_t l = strlen(line);
	for (const char *p = s; p && p + l <= s + n;) {
		if (strncmp(p, line, l) == 0 && (p + l == s + n || p[l] == '\n'))
			return 1;
		p = memchr(p, '\n', (size_t)(s + n - p));
		if (p)
			p++;
	}
	return 0;
}

char *rec_unprobed_calls(int dirfd, unsigned *count)
{
	*count = 0;
	DIR *d = rec_dir_list(dirfd);
	if (!d)
		return NULL;
	char *seen = NULL; /* "module<TAB>name" lines, each once */
	size_t len = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] != 'p' || l < 10 || strcmp(e->d_name + l - 9, ".unprobed") != 0)
			continue;
		int f = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (f < 0 || fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > (1 << 22)) {
			if (f >= 0)
				close(f);
			continue;
		}
		char *buf = xmalloc((size_t)st.st_size + 1);
		ssize_t r = read(f, buf, (size_t)st.st_size);
		close(f);
		buf[r > 0 ? r : 0] = 0;
		for (char *line = buf; r > 0 && *line;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			if (strchr(line, '\t') && !(seen && has_line(seen, len, line))) { /* ("\tname": the program's) */
				size_t k = strlen(line);
				seen = xrealloc(seen, len + k + 2);
				memcpy(seen + len, line, k);
				seen[len + k] = '\n';
				len += k + 1;
				seen[len] = 0;
				(*count)++;
			}
			if (!nl)
				break;
			line = nl + 1;
		}
		free(buf);
	}
	closedir(d);
	if (!*count)
		return NULL;
	/* "in rg: read, openat, statx; in libfoo.so: bar, and 34 more" */
	char *list = xstrdup(""), *module = NULL;
	unsigned shown = 0;
	for (char *line = seen; *line && shown < 8; shown++) {
		char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
		*nl = *tab = 0;
		char *name = sym_demangle(tab + 1); /* as the report names them */
		char *l = module && strcmp(module, line) == 0
				  ? xasprintf("%s, %s", list, name)
				  : xasprintf("%s%sin %s: %s", list, *list ? "; " : "", *line ? line : "the program", name);
		free(name);
		free(list);
		list = l;
		module = line;
		line = nl + 1;
	}
	char *more = *count > shown ? xasprintf(", and %u more", *count - shown) : xstrdup("");
	char *msg = xasprintf("the calls of %u library function%s are not recorded: the code also reads %s GOT "
			      "entr%s as data (to call through a register, or as the function's address), where a "
			      "probe's address could change what the program computes; %s%s",
			      *count, *count == 1 ? "" : "s", *count == 1 ? "its" : "their", *count == 1 ? "y" : "ies", list,
			      more);
	free(more);
	free(list);
	free(seen);
	return msg;
}

int rec_spool_own_name(const char *n)
{
	if (strcmp(n, "session") == 0 || strcmp(n, "session.tmp") == 0 || strcmp(n, "attach.frames") == 0)
		return 1; /* (attach.frames: the frames open at stint record -p, rec_inject.c) */
	if (unrec_name(n))
		return 1; /* runtime/rt_exec.c: a program that loads no runtime */
	/* what the first process measured or found, for the others: the
	 * probes' costs (runtime/rt.c) and results worked out from modules'
	 * code (runtime/rt_kept.c, "cs.<16 hex digits>", "got.<...>");
	 * "<name>.tmp<tid>" while one writes it */
	const char *t = strncmp(n, "calib", 5) == 0 ? n + 5 : kept_suffix(n);
	if (t) {
		if (!*t)
			return 1;
		if (strncmp(t, ".tmp", 4) != 0 || !t[4])
			return 0;
		for (t += 4; *t; t++)
			if (!isdigit((unsigned char)*t))
				return 0;
		return 1;
	}
	/* p<pid>-<ns>.<suffix>: .info .cmdline .maps .plt .t<tid>.buf .fns
	 * .smp, and the runtime's "<file>.tmp<tid>" while it writes one */
	const char *q = n;
	if (*q++ != 'p' || !isdigit((unsigned char)*q))
		return 0;
	while (isdigit((unsigned char)*q))
		q++;
	if (*q++ != '-' || !isdigit((unsigned char)*q))
		return 0;
	while (isdigit((unsigned char)*q))
		q++;
	if (*q++ != '.' || !*q)
		return 0;
	for (; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '.')
			return 0;
	return 1;
}

/* Reach the directory held as fd by "/proc/self/fd/N", checked to be it. */
static int spool_proc_path(struct rec_spool *s, char *err, size_t errlen)
{
	struct stat a, b;
	s->path = xasprintf("/proc/self/fd/%d", s->dirfd);
	s->child_path = xasprintf("/proc/%d/fd/%d", (int)getpid(), s->dirfd);
	if (fstat(s->dirfd, &a) < 0 || stat(s->path, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		snprintf(err, errlen, "cannot reach the spool directory '%s' through /proc (is /proc mounted?)",
			 s->shown);
		return -1;
	}
	return 0;
}

static void spool_reset(struct rec_spool *s)
{
	memset(s, 0, sizeof(*s));
	s->dirfd = s->parentfd = -1;
}

int rec_spool_create(struct rec_spool *s, const char *dir, char *err, size_t errlen)
{
	spool_reset(s);
	s->parentfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->parentfd < 0) {
		snprintf(err, errlen, "cannot write to '%s': %s", dir, strerror(errno));
		return -1;
	}
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	for (int tries = 0;; tries++) {
		unsigned char rnd[12];
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			snprintf(err, errlen, "cannot make a spool name: %s", strerror(errno));
			goto fail;
		}
		char name[32] = ".stint-spool-";
		size_t l = strlen(name);
		for (size_t i = 0; i < sizeof(rnd); i++)
			name[l++] = letters[rnd[i] % 36];
		name[l] = 0;
		if (mkdirat(s->parentfd, name, 0700) == 0) {
			s->name = xstrdup(name);
			break;
		}
		if (errno != EEXIST || tries > 100) {
			snprintf(err, errlen, "cannot write to '%s': %s", dir, strerror(errno));
			goto fail;
		}
	}
	char *real = realpath(dir, NULL);
	s->shown = xasprintf("%s/%s", real ? real : dir, s->name);
	free(real);
	/* what is there now must be the directory just made, and ours: a
	 * link or someone else's directory put in its place is refused */
	s->dirfd = openat(s->parentfd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (s->dirfd < 0 || fstat(s->dirfd, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, errlen, "the new spool directory '%s' was replaced by another file: refusing it",
			 s->shown);
		goto fail;
	}
	if (spool_proc_path(s, err, errlen) < 0) {
		unlinkat(s->parentfd, s->name, AT_REMOVEDIR);
		goto fail;
	}
	return 0;
fail:
	rec_spool_close(s);
	return -1;
}

int rec_spool_open(struct rec_spool *s, const char *dir, char *err, size_t errlen)
{
	spool_reset(s);
	char *copy = xstrdup(dir);
	size_t l = strlen(copy);
	while (l > 1 && copy[l - 1] == '/') /* "spool/" would follow a link */
		copy[--l] = 0;
	char *c1 = xstrdup(copy), *c2 = xstrdup(copy);
	s->name = xstrdup(basename(c1));
	s->parentfd = open(dirname(c2), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(c1);
	free(c2);
	char *real = realpath(copy, NULL);
	s->shown = xstrdup(real ? real : copy);
	free(real);
	s->dirfd = open(copy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	free(copy);
	struct stat st;
	if (s->dirfd < 0) {
		snprintf(err, errlen, "'%s' is not a stint spool directory: %s", dir,
			 errno == ELOOP || errno == ENOTDIR ? "not a directory (a link to one is not followed)"
							     : strerror(errno));
		goto fail;
	}
	if (fstat(s->dirfd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "'%s' is not a spool of yours: stint made its spools mode 0700, owned by the user "
			 "who recorded (it belongs to uid %u, mode %03o)",
			 dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		goto fail;
	}
	if (spool_proc_path(s, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rec_spool_close(s);
	return -1;
}

void rec_spool_close(struct rec_spool *s)
{
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->parentfd >= 0)
		close(s->parentfd);
	free(s->name);
	free(s->path);
	free(s->child_path);
	free(s->shown);
	spool_reset(s);
}

void rec_spool_remove(struct rec_spool *s)
{
	DIR *dh = s->dirfd >= 0 ? rec_dir_list(s->dirfd) : NULL;
	if (dh) {
		struct dirent *de;
		while ((de = readdir(dh)))
			if (rec_spool_own_name(de->d_name))
				unlinkat(s->dirfd, de->d_name, 0); /* removes a link, never its target */
		closedir(dh);
	}
	/* the directory, if its name still leads to the one held (rmdir
	 * removes only an empty one, and never follows a link) */
	struct stat a, b;
	if (s->parentfd >= 0 && s->name && fstat(s->dirfd, &a) == 0 &&
	    fstatat(s->parentfd, s->name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		unlinkat(s->parentfd, s->name, AT_REMOVEDIR);
	rec_spool_close(s);
}

/* ------------------------------------------------------------------------
 * What the data set says of the OS-event detector
 * --------------------------------------------------------------------- */

const char *rec_describe_os(const struct fmt_data *d, const char *wanted)
{
	if (strcmp(wanted, "off") == 0)
		return "off (--os-events off): Application values equal Elapsed ones";
	for (uint32_t i = 0; i < d->nprocs; i++)
		if (strcmp(d->procs[i].os, "rusage") == 0)
			return strcmp(wanted, "rusage") == 0
				       ? "getrusage(RUSAGE_THREAD) per probe (--os-events rusage)"
				       : "getrusage(RUSAGE_THREAD) per probe: perf events not permitted here";
	return "perf context-switch counter per thread (one load per probe)";
}
