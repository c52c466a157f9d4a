/*
 * rec_session.c - a recording through a spool (instrumentation, and the
 * in-process sampler): the spool made beside the output with the
 * program's environment, the session file (what `stint recover` needs to
 * finish a conversion) written before the program starts and kept current
 * while it runs, the spool converted into a data set, the data file
 * written, the spool removed.  `stint record` only says what to record.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"
#include "../arch/arch.h"
#include "rec_perf.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"

static void put_line(FILE *f, const char *key, const char *v)
{
	fprintf(f, "%s ", key);
	for (; v && *v; v++)
		fputc(*v == '\n' ? ' ' : *v, f);
	fputc('\n', f);
}

int rec_session_save(const char *dir, const struct fmt_data *d, const char *kind,
			   const char *os_wanted, int finished)
{
	/* written whole under another name and renamed: recover never reads
	 * half of one (the recorder rewrites it while the program runs) */
	char *tmp = xasprintf("%s/session.tmp", dir), *path = xasprintf("%s/session", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		free(tmp);
		free(path);
		return -1;
	}
	fputs(REC_SESSION_MAGIC "\n", f);
	put_line(f, "kind", kind);
	put_line(f, "command", d->command);
	put_line(f, "clock", d->clock);
	put_line(f, "os_wanted", os_wanted);
	put_line(f, "os", d->os);
	put_line(f, "notes", d->notes);
	fprintf(f, "wall_start %llu\nduration_ns %llu\nns_per_tick %.17g\nexit_status %u\nflags %u\nrate %llu\n"
		   "finished %d\n",
		(unsigned long long)d->wall_start, (unsigned long long)d->duration_ns, d->ns_per_tick,
		d->exit_status, d->flags, (unsigned long long)d->rate, finished);
	int rc = fclose(f) == 0 && rename(tmp, path) == 0 ? 0 : -1;
	free(tmp);
	free(path);
	return rc;
}

int rec_session_convert(const char *dir, const char *shown, struct fmt_data *d, int *finished,
		      char *err, size_t errlen)
{
	size_t len;
	char *path = xasprintf("%s/session", dir);
	char *text = util_read_regular(path, 1 << 20, 1, &len);
	free(path);
	size_t ml = strlen(REC_SESSION_MAGIC);
	if (!text || len <= ml || memcmp(text, REC_SESSION_MAGIC, ml) != 0 || text[ml] != '\n') {
		snprintf(err, errlen, "'%s' is not a stint spool directory (%s)", shown,
			 text ? "its session file is not stint's" : "no session file");
		free(text);
		return -1;
	}
	char v[4096], kind[64] = "", os_wanted[64] = "perf";
	memset(d, 0, sizeof(*d));
	if (rec_info_get(text, "kind", v, sizeof(v)))
		snprintf(kind, sizeof(kind), "%.63s", v);
	if (rec_info_get(text, "os_wanted", v, sizeof(v)))
		snprintf(os_wanted, sizeof(os_wanted), "%.63s", v);
	d->command = xstrdup(rec_info_get(text, "command", v, sizeof(v)) ? v : "");
	d->clock = xstrdup(rec_info_get(text, "clock", v, sizeof(v)) ? v : "tsc");
	d->notes = xstrdup(rec_info_get(text, "notes", v, sizeof(v)) ? v : "");
	d->os = xstrdup(rec_info_get(text, "os", v, sizeof(v)) ? v : "");
	d->wall_start = rec_info_get(text, "wall_start", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	d->duration_ns = rec_info_get(text, "duration_ns", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	d->ns_per_tick = rec_info_get(text, "ns_per_tick", v, sizeof(v)) ? strtod(v, NULL) : 1.0;
	d->exit_status = rec_info_get(text, "exit_status", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
	d->flags = rec_info_get(text, "flags", v, sizeof(v)) ? (uint32_t)atoi(v) : 0;
	d->rate = rec_info_get(text, "rate", v, sizeof(v)) ? strtoull(v, NULL, 10) : 0;
	if (finished)
		*finished = rec_info_get(text, "finished", v, sizeof(v)) ? atoi(v) : 0;
	free(text);
	if (!(d->ns_per_tick > 0))
		d->ns_per_tick = 1.0;
	int rc;
	if (strcmp(kind, "inproc") == 0) {
		struct rec_sample_stats st = {0};
		d->method = xstrdup("sampling");
		rc = rec_inproc_read(dir, d, &st, err, errlen);
	} else {
		d->method = xstrdup("instrumentation");
		rc = rec_spool_read(dir, d, err, errlen);
		if (rc == 0) {
			free(d->os);
			d->os = xstrdup(rec_describe_os(d, os_wanted));
		}
	}
	return rc;
}

int rec_session_begin(struct rec_session *s, const char *kind, const char *output, const char *runtime,
		      char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->os_wanted = "";
	s->cachefd = -1;
	s->child.go_fd = -1;
	/* the spool lives next to the output (its largest buffer becomes the
	 * data file by a rename) */
	char *copy = xstrdup(output);
	int rc = rec_spool_create(&s->spool, dirname(copy), err, errlen);
	free(copy);
	if (rc < 0)
		return -1;
	rec_session_setenv(s, "LD_PRELOAD", "%s", runtime);
	rec_session_setenv(s, FMT_ENV_SPOOL, "%s", s->spool.child_path);
	s->d.wall_start = util_wall_ns();
	s->d.ns_per_tick = 1.0;
	return 0;
}

void rec_session_setenv(struct rec_session *s, const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v;
	int rc = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (rc < 0)
		die("out of memory");
	s->env = xrealloc(s->env, (size_t)(s->nenv + 2) * sizeof(*s->env));
	s->env[s->nenv++] = xasprintf("%s=%s", name, v);
	s->env[s->nenv] = NULL;
	free(v);
}

/* Rewritten once a second while the program runs, so `stint recover` has
 * the clock factor and the duration so far if stint itself is killed. */
static void session_tick(void *arg)
{
	struct rec_session *s = arg;
	uint64_t tsc1 = arch_cycles(), ns1 = util_mono_ns();
	s->d.duration_ns = ns1 - s->ns0;
	if (s->use_tsc)
		s->d.ns_per_tick = arch_cycles_ns_per_tick(s->tsc0, s->ns0, tsc1, ns1);
	rec_session_save(s->spool.path, &s->d, s->kind, s->os_wanted, 0);
}

int rec_session_run(struct rec_session *s, const char *path, char *const argv[], char *err, size_t errlen)
{
	s->tsc0 = s->use_tsc ? arch_cycles() : 0;
	s->ns0 = util_mono_ns();
	if (s->use_tsc) {
		/* a first factor for the session file (the kernel's, else 5 ms
		 * measured now); refined once a second while the program runs */
		struct timespec five = {0, 5000000};
		nanosleep(&five, NULL);
		s->d.ns_per_tick = arch_cycles_ns_per_tick(s->tsc0, s->ns0, arch_cycles(), util_mono_ns());
	}
	/* the session file first: a spool is recoverable from the start, even
	 * if stint is killed (kill -9) while the program runs */
	if (rec_session_save(s->spool.path, &s->d, s->kind, s->os_wanted, 0) < 0) {
		snprintf(err, errlen, "cannot write to '%s': %s", s->spool.shown, strerror(errno));
		rec_spool_remove(&s->spool);
		return -1;
	}
	if (rec_spawn(path, argv, s->env, &s->child, err, errlen) < 0) {
		rec_spool_remove(&s->spool);
		return -1;
	}
	/* the instrumentation runtime's buffers are paged in meanwhile */
	int instrument = strcmp(s->kind, "instrument") == 0;
	rec_wait(&s->child, instrument ? s->spool.path : NULL, session_tick, s);
	uint64_t tsc1 = arch_cycles(), ns1 = util_mono_ns();
	s->d.wall_start = s->child.wall_start;
	s->d.duration_ns = s->child.mono_end - s->child.mono_start;
	if (s->use_tsc)
		s->d.ns_per_tick = arch_cycles_ns_per_tick(s->tsc0, s->ns0, tsc1, ns1);
	s->d.exit_status = (uint32_t)rec_exit_code(s->child.status);
	s->d.flags = s->child.left_running ? FMT_SESS_LEFT_RUNNING : WIFSIGNALED(s->child.status) ? FMT_SESS_KILLED : 0;
	if (rec_session_save(s->spool.path, &s->d, s->kind, s->os_wanted, 1) < 0)
		s->save_errno = errno ? errno : EIO;
	fmt_data_free(&s->d);
	if (rec_session_convert(s->spool.path, s->spool.shown, &s->d, NULL, err, errlen) < 0) {
		struct stat st;
		if (fstat(s->spool.dirfd, &st) == 0 && st.st_nlink == 0) {
			/* (the program ran `git clean -fdx`, or rm -rf of its directory) */
			snprintf(err, errlen, "the program removed stint's spool directory '%s' while it ran: what was "
				 "recorded is lost (record with -o in a directory the program leaves alone)",
				 s->spool.shown);
			return -1;
		}
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (the raw recording is kept in '%s')", s->spool.shown);
		return -1;
	}
	return 0;
}

int rec_session_write(struct rec_session *s, const char *output)
{
	const struct fmt_data *d = &s->d;
	int rc = 1;
	if (strcmp(s->kind, "instrument") == 0) {
		/* the largest buffer becomes the data file in place, its events
		 * not copied; not while processes left running may still write
		 * to a buffer */
		uint32_t big = 0;
		for (uint32_t i = 1; i < d->nthreads; i++)
			if (d->threads[i].ev_len > d->threads[big].ev_len)
				big = i;
		if (d->nthreads && d->threads[big].spool_path && !s->child.stopped_early && !s->child.detached)
			rc = fmt_write_inplace(d, output, big, d->threads[big].spool_path);
	}
	if (rc == 1)
		rc = fmt_write(d, output);
	return rc < 0 ? -1 : 0;
}

void rec_session_cache(struct rec_session *s)
{
	s->cachefd = rec_cache_open();
	if (s->cachefd >= 0)
		rec_session_setenv(s, FMT_ENV_KEPT_CACHE, "/proc/%ld/fd/%d", (long)getpid(), s->cachefd);
}

void rec_session_end(struct rec_session *s)
{
	if (s->cachefd >= 0) {
		if (s->spool.dirfd >= 0)
			rec_cache_store(s->spool.dirfd, s->cachefd);
		close(s->cachefd);
		s->cachefd = -1;
	}
	rec_spool_remove(&s->spool);
	fmt_data_free(&s->d);
	for (int i = 0; i < s->nenv; i++)
		free(s->env[i]);
	free(s->env);
	s->env = NULL;
	s->nenv = 0;
}
