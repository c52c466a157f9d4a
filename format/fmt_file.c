/*
 * fmt_file.c - writer and reader of the stint data file (layout in
 * format.h).  The reader trusts nothing in the file: every length is
 * checked against what is there, and a damaged file yields what precedes
 * the damage plus a message saying where it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include "format.h"
#include "fmt_event.h"
#include "fmt_spool.h"
#include "../lib/util.h"

/* ------------------------------------------------------------------------
 * Writer
 * --------------------------------------------------------------------- */

struct fmt_buf {
	uint8_t *p;
	size_t n, cap;
	int oom;
};

static void buf_put(struct fmt_buf *b, const void *data, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *np = realloc(b->p, cap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void buf_u32(struct fmt_buf *b, uint32_t v) { buf_put(b, &v, 4); }
static void buf_u64(struct fmt_buf *b, uint64_t v) { buf_put(b, &v, 8); }
static void buf_f64(struct fmt_buf *b, double v) { buf_put(b, &v, 8); }

static void buf_str(struct fmt_buf *b, const char *s)
{
	uint8_t tmp[10];
	size_t n = s ? strlen(s) : 0;
	buf_put(b, tmp, (size_t)(fmt_put_varint(tmp, n) - tmp));
	buf_put(b, s ? s : "", n);
}

struct fmt_out {
	int fd;
	int err;
	uint32_t nchunks;
	struct fmt_buf *mem; /* set: write into memory instead of fd */
};

static void out_write(struct fmt_out *o, const void *data, size_t n)
{
	if (o->mem) {
		buf_put(o->mem, data, n);
		if (o->mem->oom)
			o->err = ENOMEM;
		return;
	}
	const uint8_t *p = data;
	while (n > 0 && !o->err) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void out_chunk2(struct fmt_out *o, uint32_t tag, const void *a, size_t na, const void *b,
		       size_t nb)
{
	uint8_t h[FMT_CHUNK_HDR];
	uLong crc = crc32(0L, Z_NULL, 0);
	crc = crc32_z(crc, a, na);
	if (nb)
		crc = crc32_z(crc, b, nb);
	uint32_t c = (uint32_t)crc;
	uint64_t len = na + nb;
	memcpy(h, &tag, 4);
	memcpy(h + 4, &c, 4);
	memcpy(h + 8, &len, 8);
	out_write(o, h, sizeof(h));
	out_write(o, a, na);
	if (nb)
		out_write(o, b, nb);
	o->nchunks++;
}

static void out_events_from(struct fmt_out *o, uint32_t idx, const struct fmt_thread *t, int fd);

/*
 * An EVTS chunk.  Events in memory are written from there; events in
 * segments of spool files go from file to file with copy_file_range, never
 * through this process's memory.
 */
static void out_events(struct fmt_out *o, uint32_t idx, const struct fmt_thread *t)
{
	/* segments without a descriptor (a recording of more threads than
	 * descriptors: rec_spool.c) are read from their buffer's path */
	int fd = t->nsegs ? t->segs[0].fd : -1, opened = -1;
	if (t->nsegs && fd < 0) {
		opened = fd = t->spool_path ? open(t->spool_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
		if (fd < 0) {
			o->err = t->spool_path ? errno : EBADF;
			return;
		}
	}
	out_events_from(o, idx, t, fd);
	if (opened >= 0)
		close(opened);
}

static void out_events_from(struct fmt_out *o, uint32_t idx, const struct fmt_thread *t, int fd)
{
	uint64_t len = 0;
	for (uint32_t i = 0; i < t->nsegs; i++)
		len += t->segs[i].len;
	if (!t->nsegs)
		len = t->ev_len;
	/* the checksum's span: the index and the first bytes of events */
	uint8_t *span = malloc(FMT_EVTS_CRC_SPAN);
	if (!span) {
		o->err = ENOMEM;
		return;
	}
	memcpy(span, &idx, 4);
	size_t have = 4;
	if (!t->nsegs) {
		size_t n = t->ev_len < FMT_EVTS_CRC_SPAN - 4 ? t->ev_len : FMT_EVTS_CRC_SPAN - 4;
		if (n) /* (a thread without events may have no buffer) */
			memcpy(span + 4, t->ev, n);
		have += n;
	}
	for (uint32_t i = 0; i < t->nsegs && have < FMT_EVTS_CRC_SPAN; i++) {
		size_t want = FMT_EVTS_CRC_SPAN - have;
		if (want > t->segs[i].len)
			want = (size_t)t->segs[i].len;
		ssize_t r = pread(fd, span + have, want, (off_t)t->segs[i].off);
		if (r != (ssize_t)want) {
			o->err = r < 0 ? errno : EIO;
			free(span);
			return;
		}
		have += want;
	}
	uint8_t h[FMT_CHUNK_HDR];
	uint32_t tag = FMT_EVTS, crc = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), span, have);
	uint64_t plen = 4 + len;
	memcpy(h, &tag, 4);
	memcpy(h + 4, &crc, 4);
	memcpy(h + 8, &plen, 8);
	out_write(o, h, sizeof(h));
	out_write(o, &idx, 4);
	free(span);
	if (!t->nsegs && t->ev_len)
		out_write(o, t->ev, t->ev_len);
	for (uint32_t i = 0; i < t->nsegs && !o->err; i++) {
		loff_t off = (loff_t)t->segs[i].off;
		uint64_t left = t->segs[i].len;
		while (left > 0 && !o->err) {
			ssize_t c = copy_file_range(fd, &off, o->fd, NULL, left, 0);
			if (c > 0) {
				left -= (uint64_t)c;
				continue;
			}
			if (c < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
			    errno != EOPNOTSUPP) {
				o->err = errno;
				break;
			}
			/* no in-kernel copy here: through a buffer */
			uint8_t buf[1 << 16];
			ssize_t r = pread(fd, buf, left < sizeof(buf) ? left : sizeof(buf), off);
			if (r <= 0) {
				o->err = r < 0 ? errno : EIO;
				break;
			}
			out_write(o, buf, (size_t)r);
			off += r;
			left -= (uint64_t)r;
		}
	}
	o->nchunks++;
}

static void out_chunk(struct fmt_out *o, uint32_t tag, struct fmt_buf *b)
{
	if (b->oom)
		o->err = ENOMEM;
	out_chunk2(o, tag, b->p, b->n, NULL, 0);
	b->n = 0;
}

/* The file header and every chunk that comes before the events. */
static void out_prefix(struct fmt_out *po, const struct fmt_data *d, struct fmt_buf *bp)
{
	struct fmt_out o = *po;
	struct fmt_buf b = *bp;
	uint8_t hdr[FMT_HDR_SIZE] = {0};
	uint32_t v = FMT_VERSION, mv = FMT_MIN_READER;
	memcpy(hdr, FMT_MAGIC, 8);
	memcpy(hdr + 8, &v, 4);
	memcpy(hdr + 12, &mv, 4);
	out_write(&o, hdr, sizeof(hdr));

	buf_str(&b, d->method);
	buf_str(&b, d->command);
	buf_u64(&b, d->wall_start);
	buf_u64(&b, d->duration_ns);
	buf_f64(&b, d->ns_per_tick);
	buf_str(&b, d->clock);
	buf_str(&b, d->os);
	buf_u32(&b, d->exit_status);
	buf_u32(&b, d->flags);
	buf_u64(&b, d->rate);
	buf_str(&b, d->notes);
	out_chunk(&o, FMT_SESS, &b);

	for (uint32_t i = 0; i < d->nprocs; i++) {
		const struct fmt_process *p = &d->procs[i];
		buf_u32(&b, i);
		buf_u32(&b, p->pid);
		buf_u32(&b, p->ppid);
		buf_str(&b, p->command);
		buf_str(&b, p->exe);
		buf_u64(&b, p->cost);
		buf_str(&b, p->os);
		buf_u64(&b, p->lib_cost);
		buf_u32(&b, p->nlib_fns);
		for (uint32_t k = 0; k < p->nlib_fns; k++)
			buf_u64(&b, p->lib_fns[k]);
		buf_u32(&b, p->cost_patched);
		buf_u64(&b, p->cost_inner);
		buf_u32(&b, p->cost_samples);
		buf_u64(&b, p->cost_min);
		buf_u64(&b, p->cost_max);
		out_chunk(&o, FMT_PROC, &b);
		buf_u32(&b, i);
		buf_u32(&b, p->nmods);
		for (uint32_t m = 0; m < p->nmods; m++) {
			buf_u64(&b, p->mods[m].start);
			buf_u64(&b, p->mods[m].end);
			buf_u64(&b, p->mods[m].offset);
			buf_str(&b, p->mods[m].path);
			buf_str(&b, p->mods[m].build_id);
		}
		out_chunk(&o, FMT_MODS, &b);
		if (fmt_has_module_times(p)) {
			buf_u32(&b, i);
			buf_u32(&b, p->nmods);
			for (uint32_t m = 0; m < p->nmods; m++) {
				buf_u64(&b, p->mods[m].load);
				buf_u64(&b, p->mods[m].unload);
			}
			out_chunk(&o, FMT_MODT, &b);
		}
		buf_u32(&b, i);
		buf_u32(&b, p->nsyms);
		for (uint32_t s = 0; s < p->nsyms; s++) {
			const struct fmt_symbol *y = &p->syms[s];
			buf_u64(&b, y->addr);
			buf_u64(&b, y->size);
			buf_str(&b, y->name);
			buf_u32(&b, y->module);
			buf_str(&b, y->file);
			buf_u32(&b, y->line);
		}
		out_chunk(&o, FMT_SYMS, &b);
		if (p->nlines) {
			buf_u32(&b, i);
			buf_u32(&b, p->nlines);
			for (uint32_t l = 0; l < p->nlines; l++) {
				buf_u64(&b, p->lines[l].addr);
				buf_str(&b, p->lines[l].file);
				buf_u32(&b, p->lines[l].line);
			}
			out_chunk(&o, FMT_LINS, &b);
			uint32_t ninl = 0;
			for (uint32_t l = 0; l < p->nlines; l++)
				ninl += p->lines[l].ninl > 0;
			if (ninl) {
				buf_u32(&b, i);
				buf_u32(&b, ninl);
				for (uint32_t l = 0; l < p->nlines; l++) {
					const struct fmt_line *ln = &p->lines[l];
					if (!ln->ninl)
						continue;
					buf_u64(&b, ln->addr);
					buf_u32(&b, ln->ninl);
					for (uint32_t k = 0; k < ln->ninl; k++) {
						buf_str(&b, ln->inl[k].name);
						buf_str(&b, ln->inl[k].file);
						buf_u32(&b, ln->inl[k].line);
						buf_str(&b, ln->inl[k].call_file);
						buf_u32(&b, ln->inl[k].call_line);
					}
				}
				out_chunk(&o, FMT_INLN, &b);
			}
		}
		for (uint32_t t = 0; t < d->nthreads; t++) {
			const struct fmt_thread *th = &d->threads[t];
			if (th->proc != i)
				continue;
			buf_u32(&b, i);
			buf_u32(&b, t);
			buf_u32(&b, th->tid);
			buf_str(&b, th->name);
			buf_u64(&b, th->start);
			buf_u32(&b, th->flags);
			buf_u64(&b, th->nevents);
			out_chunk(&o, FMT_THRD, &b);
		}
	}
	*po = o;
	*bp = b;
}

int fmt_write(const struct fmt_data *d, const char *path)
{
	/* a new file beside path, renamed over it when whole (util_out) */
	struct util_out uo;
	if (util_out_open(&uo, path) < 0)
		return -1;
	uo.mode = FMT_FILE_MODE;
	struct fmt_out o = {.fd = uo.fd};
	struct fmt_buf b = {0};
	out_prefix(&o, d, &b);
	for (uint32_t t = 0; t < d->nthreads; t++)
		out_events(&o, t, &d->threads[t]);
	buf_u32(&b, o.nchunks);
	out_chunk(&o, FMT_ENDF, &b);
	free(b.p);
	if (o.err) {
		util_out_abort(&uo);
		errno = o.err;
		return -1;
	}
	return util_out_commit(&uo);
}

int fmt_write_inplace(const struct fmt_data *d, const char *path, uint32_t t, const char *buf)
{
	const struct fmt_thread *th = &d->threads[t];
	if (!th->nsegs || th->segs[0].off != FMT_SPOOL_DATA_OFF)
		return 1;
	uint64_t evlen = th->segs[th->nsegs - 1].off + th->segs[th->nsegs - 1].len - FMT_SPOOL_DATA_OFF;
	struct fmt_buf mem = {0}, b = {0};
	struct fmt_out o = {.fd = -1, .mem = &mem};
	out_prefix(&o, d, &b);
	/* [prefix][SKIP][EVTC header + thread index] must end at the events */
	uint64_t fixed = mem.n + FMT_CHUNK_HDR + FMT_CHUNK_HDR + 4;
	uint64_t rest = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (i != t)
			rest += FMT_CHUNK_HDR + 4 + d->threads[i].ev_len;
	struct statvfs vfs;
	int room = statvfs(buf, &vfs) == 0 &&
		   (uint64_t)vfs.f_bavail * vfs.f_frsize > FMT_SPOOL_DATA_OFF + rest + (16u << 20);
	if (o.err || fixed > FMT_SPOOL_DATA_OFF || !room) {
		/* names too big for the hole, or a disk nearly full: copy, which
		 * leaves the spool whole if it fails */
		free(mem.p);
		free(b.p);
		return 1;
	}
	uint64_t skip = FMT_SPOOL_DATA_OFF - fixed;
	uint8_t *head = calloc(1, FMT_SPOOL_DATA_OFF);
	int fd = open(buf, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (!head || fd < 0) {
		free(head);
		free(mem.p);
		free(b.p);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	memcpy(head, mem.p, mem.n);
	uint8_t *h = head + mem.n;
	uint32_t tag = FMT_SKIP, crc = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), h + FMT_CHUNK_HDR, skip);
	memcpy(h, &tag, 4);
	memcpy(h + 4, &crc, 4);
	memcpy(h + 8, &skip, 8);
	h += FMT_CHUNK_HDR + skip;
	/* the EVTC header: its checksum spans the index and the first events */
	uint8_t *span = malloc(FMT_EVTS_CRC_SPAN);
	size_t nspan = 4 + (evlen < FMT_EVTS_CRC_SPAN - 4 ? evlen : FMT_EVTS_CRC_SPAN - 4);
	int err = 0;
	if (!span || pread(fd, span + 4, nspan - 4, FMT_SPOOL_DATA_OFF) != (ssize_t)(nspan - 4))
		err = span ? EIO : ENOMEM;
	if (!err) {
		memcpy(span, &t, 4);
		tag = FMT_EVTC;
		crc = (uint32_t)crc32_z(crc32(0L, Z_NULL, 0), span, nspan);
		uint64_t plen = 4 + evlen;
		memcpy(h, &tag, 4);
		memcpy(h + 4, &crc, 4);
		memcpy(h + 8, &plen, 8);
		memcpy(h + FMT_CHUNK_HDR, &t, 4);
		/* the names, the SKIP header and zeros over the old spool header;
		 * the rest of the hole is made a hole again (the spool's notes
		 * area, fmt_spool.h, may hold addresses there), which reads as
		 * the zeros SKIP holds, or written with zeros where a file system
		 * cannot punch one */
		size_t lead = mem.n + FMT_CHUNK_HDR;
		if (lead < FMT_SPOOL_HDR_SIZE)
			lead = FMT_SPOOL_HDR_SIZE;
		size_t tail = FMT_CHUNK_HDR + 4;
		size_t hole = FMT_SPOOL_DATA_OFF - tail - lead;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lead, (off_t)hole) < 0 &&
		    pwrite(fd, head + lead, hole, (off_t)lead) != (ssize_t)hole)
			err = errno ? errno : EIO;
		if (err || pwrite(fd, head, lead, 0) != (ssize_t)lead ||
		    pwrite(fd, h, tail, (off_t)(FMT_SPOOL_DATA_OFF - tail)) != (ssize_t)tail ||
		    ftruncate(fd, (off_t)(FMT_SPOOL_DATA_OFF + evlen)) < 0 ||
		    lseek(fd, 0, SEEK_END) < 0)
			err = errno ? errno : EIO;
	}
	free(span);
	free(head);
	free(mem.p);
	if (!err) {
		struct fmt_out a = {.fd = fd, .nchunks = o.nchunks + 2};
		for (uint32_t i = 0; i < d->nthreads; i++)
			if (i != t)
				out_events(&a, i, &d->threads[i]);
		b.n = 0;
		buf_u32(&b, a.nchunks);
		out_chunk(&a, FMT_ENDF, &b);
		err = a.err;
	}
	free(b.p);
	mode_t mask = umask(0);
	umask(mask);
	if (!err && fchmod(fd, FMT_FILE_MODE & ~mask) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(buf, path) < 0)
		err = errno;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Reader
 *
 * A data file may come from anywhere (doc/safety.md): every length, count
 * and index is checked against what exists, and no chunk is trusted to
 * appear only once.  Damage does not end the reading while the rest can
 * still be found: a chunk that fails its checksum, repeats, or names a
 * process or thread that does not exist is skipped and noted, and reading
 * goes on with the next chunk, so that a flipped bit in the names costs
 * the names (the functions are then reported by address), not the events.
 * --------------------------------------------------------------------- */

struct fmt_in {
	const uint8_t *p, *end;
	int bad;
};

static uint32_t in_u32(struct fmt_in *in)
{
	uint32_t v = 0;
	if (in->end - in->p < 4) {
		in->bad = 1;
		return 0;
	}
	memcpy(&v, in->p, 4);
	in->p += 4;
	return v;
}

static uint64_t in_u64(struct fmt_in *in)
{
	uint64_t v = 0;
	if (in->end - in->p < 8) {
		in->bad = 1;
		return 0;
	}
	memcpy(&v, in->p, 8);
	in->p += 8;
	return v;
}

static double in_f64(struct fmt_in *in)
{
	uint64_t u = in_u64(in);
	double v;
	memcpy(&v, &u, 8);
	return v;
}

/*
 * Strings from a file are printed to terminals and written into JSON and
 * CSV: control characters (C0, DEL, and C1 encoded as UTF-8), which a
 * terminal could take for escape sequences, become '?', and each byte that
 * is not part of valid UTF-8 becomes U+FFFD.  s (n bytes) is replaced.
 */
static char *clean_str(char *s, size_t n)
{
	int clean = 1;
	for (size_t i = 0; i < n && clean;) {
		size_t l = util_utf8_len(s + i);
		unsigned char c = (unsigned char)s[i];
		clean = l != 0 && c >= 0x20 && c != 0x7f && !(c == 0xc2 && (unsigned char)s[i + 1] < 0xa0);
		i += l ? l : 1;
	}
	if (clean)
		return s;
	char *o = malloc(3 * n + 1), *q = o;
	if (!o) {
		free(s);
		return strdup("");
	}
	for (size_t i = 0; i < n;) {
		size_t l = util_utf8_len(s + i);
		unsigned char c = (unsigned char)s[i];
		if (l == 0) {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			i++;
		} else if (c < 0x20 || c == 0x7f || (c == 0xc2 && (unsigned char)s[i + 1] < 0xa0)) {
			*q++ = '?';
			i += l;
		} else {
			memcpy(q, s + i, l);
			q += l;
			i += l;
		}
	}
	*q = 0;
	free(s);
	return o;
}

/* A string; never NULL (an empty one when the bytes are not a string). */
static char *in_str(struct fmt_in *in)
{
	uint64_t n = 0;
	if (in->bad || fmt_get_varint(&in->p, in->end, &n) < 0 || n > (uint64_t)(in->end - in->p)) {
		in->bad = 1;
		return strdup("");
	}
	char *s = malloc(n + 1);
	if (!s) {
		in->bad = 1;
		return strdup("");
	}
	memcpy(s, in->p, n);
	s[n] = 0;
	in->p += n;
	return clean_str(s, (size_t)n);
}

/* The smallest encoding of one entry, which bounds a count by the payload. */
#define FMT_MIN_MOD (3 * 8 + 1 + 1)         /* empty path and build-id */
#define FMT_MIN_SYM (8 + 8 + 1 + 4 + 1 + 4) /* empty name and source file */
#define FMT_MIN_LINE (8 + 1 + 4)            /* empty source file */

/* ns per tick beyond this is not a clock: it would make the values infinite */
#define FMT_MAX_NS_PER_TICK 1e6

static const char *tag_name(uint32_t tag, char buf[5])
{
	memcpy(buf, &tag, 4);
	buf[4] = 0;
	for (int i = 0; i < 4; i++)
		if (buf[i] < 32 || buf[i] > 126)
			buf[i] = '?';
	return buf;
}

static int known_tag(uint32_t tag)
{
	switch (tag) {
	case FMT_SESS: case FMT_PROC: case FMT_MODS: case FMT_SYMS: case FMT_THRD:
	case FMT_LINS: case FMT_EVTS: case FMT_EVTC: case FMT_SKIP: case FMT_ENDF:
		return 1;
	}
	return 0;
}

/* The state of one reading. */
struct fmt_rd {
	struct fmt_data *d;
	uint32_t skipped; /* chunks skipped unread (bad checksum): their indices are missing */
	uint32_t more;    /* damage found after the first, which d->damage describes */
};

static void set_damage(struct fmt_rd *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_damage(struct fmt_rd *rd, const char *fmt, ...)
{
	if (rd->d->damage) {
		rd->more++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&rd->d->damage, fmt, ap) < 0)
		rd->d->damage = NULL;
	va_end(ap);
}

/* Placeholders for a process or thread whose chunk was skipped unread. */
static int add_process(struct fmt_data *d, const char *command)
{
	struct fmt_process *np = realloc(d->procs, (d->nprocs + 1) * sizeof(*np));
	if (!np)
		return -1;
	d->procs = np;
	struct fmt_process *p = &d->procs[d->nprocs++];
	memset(p, 0, sizeof(*p));
	p->command = strdup(command);
	p->exe = strdup("");
	p->os = strdup("");
	return p->command && p->exe && p->os ? 0 : -1;
}

static int add_thread(struct fmt_data *d, uint32_t proc, const char *name)
{
	struct fmt_thread *nt = realloc(d->threads, (d->nthreads + 1) * sizeof(*nt));
	if (!nt)
		return -1;
	d->threads = nt;
	struct fmt_thread *t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof(*t));
	t->proc = proc;
	t->name = strdup(name);
	return t->name ? 0 : -1;
}

static int cmp_symbol(const void *a, const void *b);

static int cmp_line(const void *a, const void *b)
{
	const struct fmt_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Parse one chunk whose length is known good.  Returns NULL, or what is
 * wrong with it (the caller notes it and goes on with the next chunk);
 * what was read before the fault is kept.
 */
static const char *read_chunk(struct fmt_rd *rd, uint32_t tag, const uint8_t *pl, size_t n, size_t have)
{
	struct fmt_data *d = rd->d;
	struct fmt_in in = {pl, pl + (have < n ? have : n), 0}; /* a chunk cut short: what is there */
	switch (tag) {
	case FMT_SESS:
		if (d->method)
			return "repeats the session";
		d->method = in_str(&in);
		d->command = in_str(&in);
		d->wall_start = in_u64(&in);
		d->duration_ns = in_u64(&in);
		d->ns_per_tick = in_f64(&in);
		d->clock = in_str(&in);
		d->os = in_str(&in);
		d->exit_status = in_u32(&in);
		d->flags = in_u32(&in);
		d->rate = in_u64(&in);
		d->notes = in_str(&in);
		if (!(d->ns_per_tick > 0 && d->ns_per_tick <= FMT_MAX_NS_PER_TICK))
			return "gives an impossible clock rate";
		break;
	case FMT_PROC: {
		uint32_t i = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i < d->nprocs)
			return "repeats a process";
		if (i - d->nprocs > rd->skipped)
			return "names a process out of order";
		while (d->nprocs < i) /* their PROC chunks were skipped */
			if (add_process(d, "[damaged]") < 0)
				return "does not fit in memory";
		if (add_process(d, "") < 0)
			return "does not fit in memory";
		struct fmt_process *p = &d->procs[d->nprocs - 1];
		free(p->command);
		free(p->exe);
		free(p->os);
		p->pid = in_u32(&in);
		p->ppid = in_u32(&in);
		p->command = in_str(&in);
		p->exe = in_str(&in);
		p->cost = in_u64(&in);
		p->os = in_str(&in);
		if (!in.bad && in.p < in.end) { /* written by a newer stint */
			p->lib_cost = in_u64(&in);
			uint32_t nl = in_u32(&in);
			if (in.bad || nl > (size_t)(in.end - in.p) / 8)
				return "counts more library functions than it holds";
			p->lib_fns = malloc((nl ? nl : 1) * sizeof(*p->lib_fns));
			if (!p->lib_fns)
				return "does not fit in memory";
			for (uint32_t k = 0; k < nl; k++)
				p->lib_fns[k] = in_u64(&in);
			p->nlib_fns = nl;
		}
		if (!in.bad && in.p < in.end) /* written by a newer stint still */
			p->cost_patched = in_u32(&in) != 0;
		if (!in.bad && in.end - in.p >= 8)
			p->cost_inner = in_u64(&in);
		if (!in.bad && in.end - in.p >= 20) {
			p->cost_samples = in_u32(&in);
			p->cost_min = in_u64(&in);
			p->cost_max = in_u64(&in);
			if (p->cost_min > p->cost || p->cost_max < p->cost)
				p->cost_samples = 0; /* not a range of the cost: not shown */
		}
		break;
	}
	case FMT_MODS: {
		uint32_t i = in_u32(&in), n2 = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i >= d->nprocs)
			return "names a process that does not exist";
		struct fmt_process *p = &d->procs[i];
		if (p->mods)
			return "repeats a process's modules";
		if (n2 > (n - 8) / FMT_MIN_MOD)
			return "counts more modules than it holds";
		p->mods = calloc(n2 ? n2 : 1, sizeof(*p->mods));
		if (!p->mods)
			return "does not fit in memory";
		for (uint32_t m = 0; m < n2 && !in.bad; m++, p->nmods++) {
			p->mods[m].start = in_u64(&in);
			p->mods[m].end = in_u64(&in);
			p->mods[m].offset = in_u64(&in);
			p->mods[m].path = in_str(&in);
			p->mods[m].build_id = in_str(&in);
		}
		break;
	}
	case FMT_MODT: {
		uint32_t i = in_u32(&in), n2 = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i >= d->nprocs)
			return "names a process that does not exist";
		if (n2 != d->procs[i].nmods || n2 > n / 16)
			return "does not match the process's modules";
		struct fmt_process *p = &d->procs[i];
		for (uint32_t m = 0; m < n2 && !in.bad; m++) {
			p->mods[m].load = in_u64(&in);
			p->mods[m].unload = in_u64(&in);
		}
		break;
	}
	case FMT_SYMS: {
		uint32_t i = in_u32(&in), n2 = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i >= d->nprocs)
			return "names a process that does not exist";
		struct fmt_process *p = &d->procs[i];
		if (p->syms)
			return "repeats a process's symbols";
		if (n2 > (n - 8) / FMT_MIN_SYM)
			return "counts more symbols than it holds";
		p->syms = calloc(n2 ? n2 : 1, sizeof(*p->syms));
		if (!p->syms)
			return "does not fit in memory";
		const char *why = NULL;
		int sorted = 1;
		for (uint32_t s = 0; s < n2 && !in.bad; s++, p->nsyms++) {
			struct fmt_symbol *y = &p->syms[s];
			y->addr = in_u64(&in);
			y->size = in_u64(&in);
			y->name = in_str(&in);
			y->module = in_u32(&in);
			y->file = in_str(&in);
			y->line = in_u32(&in);
			if (y->module != ~0u && y->module >= p->nmods) {
				y->module = ~0u;
				why = "names a module that does not exist";
			}
			if (s > 0 && y->addr < p->syms[s - 1].addr)
				sorted = 0;
		}
		if (!sorted) { /* readers look symbols up by binary search */
			qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_symbol);
			why = why ? why : "is out of order";
		}
		if (!in.bad && why)
			return why;
		break;
	}
	case FMT_LINS: {
		uint32_t i = in_u32(&in), n2 = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i >= d->nprocs)
			return "names a process that does not exist";
		struct fmt_process *p = &d->procs[i];
		if (p->lines)
			return "repeats a process's source lines";
		if (n2 > (n - 8) / FMT_MIN_LINE)
			return "counts more lines than it holds";
		p->lines = calloc(n2 ? n2 : 1, sizeof(*p->lines));
		if (!p->lines)
			return "does not fit in memory";
		int sorted = 1;
		for (uint32_t l = 0; l < n2 && !in.bad; l++, p->nlines++) {
			p->lines[l].addr = in_u64(&in);
			p->lines[l].file = in_str(&in);
			p->lines[l].line = in_u32(&in);
			if (l > 0 && p->lines[l].addr < p->lines[l - 1].addr)
				sorted = 0;
		}
		if (!sorted) {
			qsort(p->lines, p->nlines, sizeof(*p->lines), cmp_line);
			if (!in.bad)
				return "is out of order";
		}
		break;
	}
	case FMT_INLN: {
		uint32_t i = in_u32(&in), n2 = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (i >= d->nprocs)
			return "names a process that does not exist";
		if (n2 > n / 12)
			return "counts more inline chains than it holds";
		struct fmt_process *p = &d->procs[i];
		for (uint32_t e = 0; e < n2 && !in.bad; e++) {
			uint64_t addr = in_u64(&in);
			uint32_t depth = in_u32(&in);
			if (in.bad || depth > n / 10) {
				in.bad = 1;
				break;
			}
			struct fmt_line *ln = (struct fmt_line *)fmt_line_at(p, addr);
			struct fmt_inline *v = calloc(depth ? depth : 1, sizeof(*v));
			if (!v)
				return "does not fit in memory";
			for (uint32_t k = 0; k < depth; k++) {
				v[k].name = in_str(&in);
				v[k].file = in_str(&in);
				v[k].line = in_u32(&in);
				v[k].call_file = in_str(&in);
				v[k].call_line = in_u32(&in);
			}
			if (ln && !ln->inl && !in.bad) {
				ln->inl = v;
				ln->ninl = depth;
			} else {
				fmt_inline_free(v, depth);
			}
		}
		break;
	}
	case FMT_THRD: {
		uint32_t pi = in_u32(&in), ti = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (pi >= d->nprocs)
			return "names a process that does not exist";
		if (ti < d->nthreads)
			return "repeats a thread";
		if (ti - d->nthreads > rd->skipped)
			return "names a thread out of order";
		while (d->nthreads < ti) /* their THRD chunks were skipped */
			if (add_thread(d, pi, "[damaged]") < 0)
				return "does not fit in memory";
		if (add_thread(d, pi, "") < 0)
			return "does not fit in memory";
		struct fmt_thread *t = &d->threads[d->nthreads - 1];
		free(t->name);
		t->tid = in_u32(&in);
		t->name = in_str(&in);
		t->start = in_u64(&in);
		t->flags = in_u32(&in);
		t->nevents = in_u64(&in);
		break;
	}
	case FMT_EVTS:
	case FMT_EVTC: {
		uint32_t ti = in_u32(&in);
		if (in.bad)
			return "is too short";
		if (ti >= d->nthreads) {
			/* the thread's THRD chunk may have been skipped: its
			 * events still count, in the last process read */
			if (!d->nprocs || ti - d->nthreads >= rd->skipped)
				return "names a thread that does not exist";
			while (d->nthreads <= ti)
				if (add_thread(d, d->nprocs - 1, "[damaged]") < 0)
					return "does not fit in memory";
		}
		struct fmt_thread *t = &d->threads[ti];
		if (t->ev)
			return "repeats a thread's events";
		t->chunked = tag == FMT_EVTC;
		t->ev = in.p;
		t->ev_len = have >= 4 ? have - 4 : 0;
		if (have < n)
			t->flags |= FMT_THR_DAMAGED;
		return NULL;
	}
	default:
		return NULL;
	}
	return in.bad ? "does not parse" : NULL;
}

/* The events' thread for a message: its tid if it exists. */
static uint32_t evts_tid(const struct fmt_data *d, const uint8_t *pl, size_t have)
{
	uint32_t ti = ~0u;
	if (have >= 4)
		memcpy(&ti, pl, 4);
	return ti < d->nthreads ? d->threads[ti].tid : ti;
}

static int fmt_parse(const uint8_t *map, size_t len, const char *path, struct fmt_data *d, char *err,
		     size_t errlen)
{
	struct fmt_rd rd = {.d = d};
	const uint8_t *p = map, *end = p + len;
	if (len < FMT_HDR_SIZE) {
		if (len > 0 && memcmp(p, FMT_MAGIC, len < 8 ? len : 8) == 0)
			snprintf(err, errlen, "'%s' is truncated: only %zu bytes, not even the header", path,
				 len);
		else
			snprintf(err, errlen, "'%s' is not a stint data file", path);
		return -1;
	}
	if (memcmp(p, FMT_MAGIC, 8) != 0) {
		snprintf(err, errlen, "'%s' is not a stint data file", path);
		return -1;
	}
	uint32_t version, minv;
	memcpy(&version, p + 8, 4);
	memcpy(&minv, p + 12, 4);
	if (minv > FMT_VERSION || version < 1) {
		snprintf(err, errlen,
			 "'%s' is stint data format version %u, which this stint (format %d) cannot read",
			 path, version, FMT_VERSION);
		return -1;
	}
	p += FMT_HDR_SIZE;
	uint32_t nchunks = 0;
	int ended = 0;
	while (p < end) {
		char tn[5];
		size_t off = (size_t)(p - map);
		if (end - p < FMT_CHUNK_HDR) {
			set_damage(&rd, "truncated at byte %zu of %zu: a chunk header is cut short", off, len);
			break;
		}
		uint32_t tag, crc;
		uint64_t n;
		memcpy(&tag, p, 4);
		memcpy(&crc, p + 4, 4);
		memcpy(&n, p + 8, 8);
		const uint8_t *pl = p + FMT_CHUNK_HDR;
		size_t have = (size_t)(end - pl);
		int events = tag == FMT_EVTS || tag == FMT_EVTC;
		if (nchunks == 0 && tag != FMT_SESS) {
			snprintf(err, errlen, "'%s' is damaged: it does not start with a session chunk", path);
			return -1;
		}
		if (n > have) {
			if (events && have >= 4) {
				set_damage(&rd,
					   "truncated in chunk EVTS (thread %u) at byte %zu: %zu of %llu "
					   "bytes present",
					   evts_tid(d, pl, have), off, have, (unsigned long long)n);
				read_chunk(&rd, tag, pl, (size_t)n, have);
			} else {
				set_damage(&rd, "truncated in chunk %s at byte %zu: %zu of %llu bytes present",
					   tag_name(tag, tn), off, have, (unsigned long long)n);
			}
			break;
		}
		size_t span = events && n > FMT_EVTS_CRC_SPAN ? FMT_EVTS_CRC_SPAN : (size_t)n;
		if ((uint32_t)crc32_z(crc32(0L, Z_NULL, 0), pl, span) != crc) {
			if (events) {
				/* keep decoding up to the first invalid record */
				set_damage(&rd, "corrupt chunk EVTS (thread %u) at byte %zu: checksum mismatch",
					   evts_tid(d, pl, (size_t)n), off);
				if (!read_chunk(&rd, tag, pl, (size_t)n, (size_t)n)) {
					uint32_t ti;
					memcpy(&ti, pl, 4);
					d->threads[ti].flags |= FMT_THR_DAMAGED;
				}
				p = pl + n;
				nchunks++;
				continue;
			}
			/* skip it if its length leads to the next chunk or the end:
			 * then only its contents are lost */
			const uint8_t *next = pl + n;
			uint32_t ntag = 0;
			if (end - next >= FMT_CHUNK_HDR)
				memcpy(&ntag, next, 4);
			int go_on = tag != FMT_SESS && (next == end || known_tag(ntag));
			set_damage(&rd, "corrupt chunk %s at byte %zu: checksum mismatch%s", tag_name(tag, tn),
				   off, go_on ? " (skipped)" : "");
			if (!go_on)
				break;
			rd.skipped++;
			p = next;
			nchunks++;
			continue;
		}
		if (tag == FMT_ENDF) {
			/* the end marker counts the chunks before it: one
			 * removed (a thread's events) or an ENDF tag where another
			 * chunk was must not pass for a whole file */
			uint32_t count = 0;
			if (n == 4)
				memcpy(&count, pl, 4);
			if (n != 4 && pl + n < end) {
				set_damage(&rd, "corrupt chunk ENDF at byte %zu: an end marker of %llu bytes, not 4, "
						"with chunks after it (skipped)",
					   off, (unsigned long long)n);
				rd.skipped++;
				p = pl + n;
				nchunks++;
				continue;
			}
			ended = 1;
			if (n != 4 || count != nchunks)
				set_damage(&rd, "corrupt chunk ENDF at byte %zu: the file had %u chunks before its "
						"end marker, %zu are there: parts of it are missing",
					   off, count, (size_t)nchunks);
			else if (pl + n != end)
				set_damage(&rd, "%zu bytes follow the end marker at byte %zu", (size_t)(end - (pl + n)),
					   off);
			break;
		}
		if (tag == FMT_SKIP) {
			/* filler is only ever the room before an EVTC chunk: a
			 * thread's events renamed SKIP must not vanish unsaid */
			uint32_t ntag = 0;
			if (end - (pl + n) >= 4)
				memcpy(&ntag, pl + n, 4);
			if (ntag != FMT_EVTC)
				set_damage(&rd, "corrupt chunk SKIP at byte %zu: filler that is not before a "
						"thread's events (skipped)", off);
		}
		const char *why = read_chunk(&rd, tag, pl, (size_t)n, (size_t)n);
		if (why) {
			set_damage(&rd, "corrupt chunk %s at byte %zu: it %s", tag_name(tag, tn), off, why);
			if (tag == FMT_SESS)
				break;
		}
		p = pl + n;
		nchunks++;
	}
	if (!ended && !d->damage)
		set_damage(&rd, "truncated at byte %zu: the end marker is missing", len);
	/* every thread has one events chunk, an empty one too */
	for (uint32_t i = 0; i < d->nthreads && ended; i++)
		if (!d->threads[i].ev && !(d->threads[i].flags & FMT_THR_DAMAGED)) {
			set_damage(&rd, "thread %u has no events chunk: its events are missing", d->threads[i].tid);
			d->threads[i].flags |= FMT_THR_DAMAGED;
		}
	if (!d->method || !(d->ns_per_tick > 0 && d->ns_per_tick <= FMT_MAX_NS_PER_TICK)) {
		snprintf(err, errlen, "'%s' is damaged before any data: %s", path,
			 d->damage ? d->damage : "no session");
		return -1;
	}
	/* version 1: entries carry no call site (fmt_event.h) */
	for (uint32_t i = 0; i < d->nthreads; i++)
		d->threads[i].nosites = version < 2;
	if (rd.more && d->damage) {
		char *all = NULL;
		if (asprintf(&all, "%s; and %u more damaged part%s", d->damage, rd.more,
			     rd.more == 1 ? "" : "s") >= 0) {
			free(d->damage);
			d->damage = all;
		}
	}
	return 0;
}

int fmt_read_mem(const void *buf, size_t len, const char *name, struct fmt_data *d, char *err,
		 size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (fmt_parse(buf, len, name, d, err, errlen) < 0) {
		fmt_data_free(d);
		return -1;
	}
	return 0;
}

/*
 * The files fmt_read has mapped, so that a SIGBUS on one of them (the file
 * truncated while mapped: a writer, a full disk) can be told from any
 * other (fmt_mapped_file_at).  Read from a signal handler: a slot's path
 * is set before its range, and the range cleared before the path is freed.
 */
#define FMT_MAPS 8
static struct {
	const uint8_t *volatile base;
	volatile size_t len;
	char *volatile path;
} fmt_maps[FMT_MAPS];

static void fmt_map_register(const void *base, size_t len, const char *path)
{
	for (int i = 0; i < FMT_MAPS; i++)
		if (!fmt_maps[i].base && !fmt_maps[i].path) {
			/* (not registered at all if out of slots or memory: such a
			 * fault is then the default SIGBUS) */
			if (!(fmt_maps[i].path = strdup(path)))
				return;
			fmt_maps[i].len = len;
			__atomic_store_n(&fmt_maps[i].base, (const uint8_t *)base, __ATOMIC_SEQ_CST);
			return;
		}
}

static void fmt_map_unregister(const void *base)
{
	for (int i = 0; i < FMT_MAPS; i++)
		if (fmt_maps[i].base == base) {
			__atomic_store_n(&fmt_maps[i].base, NULL, __ATOMIC_SEQ_CST);
			free(fmt_maps[i].path);
			fmt_maps[i].path = NULL;
			return;
		}
}

const char *fmt_mapped_file_at(const void *addr)
{
	const uint8_t *a = addr;
	for (int i = 0; i < FMT_MAPS; i++) {
		const uint8_t *base = __atomic_load_n(&fmt_maps[i].base, __ATOMIC_SEQ_CST);
		if (base && a >= base && (size_t)(a - base) < fmt_maps[i].len)
			return fmt_maps[i].path;
	}
	return NULL;
}

int fmt_read(const char *path, struct fmt_data *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	/* O_NONBLOCK: a FIFO's open would wait for a writer (forever), a
	 * device's for its line; either is refused below */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", path);
		close(fd);
		return -1;
	}
	size_t len = (size_t)st.st_size;
	void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	/* from here until fmt_data_free, any read of the map may fault if the
	 * file shrinks */
	if (map)
		fmt_map_register(map, len, path);
	if (fmt_parse(map ? map : (const void *)"", len, path, d, err, errlen) < 0) {
		fmt_data_free(d);
		if (map) {
			fmt_map_unregister(map);
			munmap(map, len);
		}
		return -1;
	}
	d->map = map;
	d->map_len = len;
	return 0;
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct fmt_symbol *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void fmt_sort_symbols(struct fmt_process *p)
{
	qsort(p->syms, p->nsyms, sizeof(*p->syms), cmp_symbol);
}

const struct fmt_symbol *fmt_symbol_at(const struct fmt_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nsyms;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct fmt_symbol *s = &p->syms[lo - 1];
	if (addr == s->addr || addr < s->addr + s->size)
		return s;
	return NULL;
}

int fmt_has_module_times(const struct fmt_process *p)
{
	for (uint32_t m = 0; m < p->nmods; m++)
		if (p->mods[m].load || p->mods[m].unload)
			return 1;
	return 0;
}

int fmt_module_at(const struct fmt_process *p, uint64_t addr)
{
	for (uint32_t m = 0; m < p->nmods; m++)
		if (addr >= p->mods[m].start && addr < p->mods[m].end)
			return (int)m;
	return -1;
}

static int mapped_at(const struct fmt_module *m, uint64_t ticks)
{
	return ticks >= m->load && (!m->unload || ticks < m->unload);
}

int fmt_module_at_time(const struct fmt_process *p, uint64_t addr, uint64_t ticks)
{
	/* of the modules mapped over addr then, the one loaded last (a module
	 * loaded again where it was keeps one entry, its first load on) */
	int best = -1, any = -1;
	for (uint32_t m = 0; m < p->nmods; m++)
		if (addr >= p->mods[m].start && addr < p->mods[m].end) {
			if (mapped_at(&p->mods[m], ticks) && (best < 0 || p->mods[m].load >= p->mods[best].load))
				best = (int)m;
			any = (int)m;
		}
	return best >= 0 ? best : any; /* none mapped then: the last one that ever was */
}

const struct fmt_symbol *fmt_symbol_at_time(const struct fmt_process *p, uint64_t addr, uint64_t ticks)
{
	const struct fmt_symbol *s = fmt_symbol_at(p, addr);
	if (!s || !fmt_has_module_times(p))
		return s;
	int m = fmt_module_at_time(p, addr, ticks);
	if (m < 0 || s->module == (uint32_t)m)
		return s;
	/* symbols of other modules at or below addr: the nearest of the
	 * module mapped then (symbols at one address sit side by side) */
	for (const struct fmt_symbol *q = s; q >= p->syms && s - q < 4096; q--)
		if (q->module == (uint32_t)m)
			return addr == q->addr || addr < q->addr + q->size ? q : NULL;
	return NULL;
}

void fmt_thread_decoder(const struct fmt_thread *t, struct fmt_decoder *dec)
{
	fmt_decoder_init(dec, t->ev, t->ev_len);
	dec->nosites = t->nosites;
	if (t->chunked)
		fmt_decoder_chunked(dec, FMT_EVENT_FIRST_CHUNK, FMT_EVENT_MAX_CHUNK);
}

int fmt_is_lib_fn(const struct fmt_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nlib_fns;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->lib_fns[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nlib_fns && p->lib_fns[lo] == addr;
}

const struct fmt_line *fmt_line_at(const struct fmt_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nlines;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->lines[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nlines && p->lines[lo].addr == addr ? &p->lines[lo] : NULL;
}

void fmt_inline_free(struct fmt_inline *v, uint32_t n)
{
	for (uint32_t k = 0; v && k < n; k++) {
		free(v[k].name);
		free(v[k].file);
		free(v[k].call_file);
	}
	free(v);
}

void fmt_data_free(struct fmt_data *d)
{
	free(d->method);
	free(d->command);
	free(d->clock);
	free(d->os);
	free(d->notes);
	free(d->damage);
	for (uint32_t i = 0; i < d->nprocs; i++) {
		struct fmt_process *p = &d->procs[i];
		free(p->command);
		free(p->exe);
		free(p->os);
		free(p->lib_fns);
		for (uint32_t m = 0; m < p->nmods; m++) {
			free(p->mods[m].path);
			free(p->mods[m].build_id);
		}
		free(p->mods);
		for (uint32_t s = 0; s < p->nsyms; s++) {
			free(p->syms[s].name);
			free(p->syms[s].file);
		}
		free(p->syms);
		for (uint32_t l = 0; l < p->nlines; l++) {
			free(p->lines[l].file);
			fmt_inline_free(p->lines[l].inl, p->lines[l].ninl);
		}
		free(p->lines);
	}
	free(d->procs);
	for (uint32_t t = 0; t < d->nthreads; t++) {
		free(d->threads[t].name);
		free(d->threads[t].ev_owned);
		if (d->threads[t].nsegs && d->threads[t].segs[0].fd >= 0)
			close(d->threads[t].segs[0].fd);
		free(d->threads[t].segs);
		free(d->threads[t].spool_path);
	}
	free(d->threads);
	if (d->map) {
		fmt_map_unregister(d->map);
		munmap(d->map, d->map_len);
	}
	memset(d, 0, sizeof(*d));
}
