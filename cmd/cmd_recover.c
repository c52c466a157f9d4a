/*
 * cmd_recover.c - `stint recover SPOOL -o FILE`: make the data file of a
 * recording whose conversion failed (the disk filled while `stint record`
 * wrote it; the raw spool was kept and its path printed), or whose
 * recorder was killed.  Only a directory that is provably a spool of the
 * user's (rec_spool_open) is read, and only its own files are removed, and
 * only once everything in them is in the data file: a buffer that could not
 * be read keeps the spool.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"

static const char recover_usage[] =
	"usage: stint recover SPOOL-DIRECTORY [-o FILE] [-f]\n"
	"\n"
	"  -o, --output FILE  the data file to write (default stint.data)\n"
	"  -f, --force        recover what a program still running has recorded so far (the spool\n"
	"                     is then kept)\n";

/*
 * A spool whose largest buffer `stint record` had already made the whole
 * data file, in place, when the final rename failed (the output's
 * directory gone or replaced): that file is copied to output, if it reads
 * whole.  1 when done (the spool then removed).
 */
static int recover_inplace(struct rec_spool *sp, const char *spool, const char *output, pid_t writer)
{
	char *whole = rec_spool_inplace_file(sp->path);
	if (!whole)
		return 0;
	struct fmt_data d;
	char err[1024];
	if (fmt_read(whole, &d, err, sizeof(err)) < 0) {
		free(whole);
		return 0;
	}
	int ok = !d.damage;
	uint32_t nprocs = d.nprocs, nthreads = d.nthreads;
	fmt_data_free(&d);
	if (!ok) {
		free(whole);
		return 0; /* (half made: the buffers are read instead) */
	}
	int in = open(whole, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct util_out o;
	if (in < 0 || util_out_open(&o, output) < 0)
		die("cannot write '%s': %s; '%s' is kept", output, strerror(errno), spool);
	o.mode = FMT_FILE_MODE;
	char buf[1 << 16];
	ssize_t r;
	while ((r = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t at = 0; at < r;) {
			ssize_t w = write(o.fd, buf + at, (size_t)(r - at));
			if (w < 0) {
				int e = errno;
				util_out_abort(&o);
				die("cannot write '%s': %s; '%s' is kept", output, strerror(e), spool);
			}
			at += w;
		}
	int e = errno;
	close(in);
	if (r < 0) {
		util_out_abort(&o);
		die("cannot read '%s': %s; '%s' is kept", whole, strerror(e), spool);
	}
	if (util_out_commit(&o) < 0)
		die("cannot write '%s': %s; '%s' is kept", output, strerror(errno), spool);
	warn("recovered %u process%s, %u thread%s from '%s' into '%s' (the data file stint record had made "
	     "there and could not name)", nprocs, nprocs == 1 ? "" : "es", nthreads, nthreads == 1 ? "" : "s",
	     spool, output);
	free(whole);
	if (writer) /* (-f) */
		rec_spool_close(sp);
	else
		rec_spool_remove(sp);
	return 1;
}

/*
 * A process still writing the spool (its buffers are mapped from the spool's
 * files): stint record was killed, the program runs on.  Recovering then
 * saved what was written so far and removed the spool under the program,
 * whose later events were lost, exit 0.  The pid, or 0.
 */
static pid_t spool_writer(const char *spool)
{
	char *real = realpath(spool, NULL);
	if (!real)
		return 0;
	size_t len = strlen(real);
	pid_t found = 0, self = getpid();
	DIR *proc = opendir("/proc");
	struct dirent *e;
	char path[64], *line = NULL;
	size_t cap = 0;
	while (proc && !found && (e = readdir(proc)) != NULL) {
		pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		FILE *f = fopen(path, "re");
		while (f && !found && getline(&line, &cap, f) > 0) {
			char *name = strchr(line, '/');
			if (name && strncmp(name, real, len) == 0 && name[len] == '/')
				found = pid;
		}
		if (f)
			fclose(f);
	}
	if (proc)
		closedir(proc);
	free(line);
	free(real);
	return found;
}

int cmd_recover(int argc, char **argv)
{
	static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
						  {"force", no_argument, NULL, 'f'},
						  {"help", no_argument, NULL, 'h'},
						  {NULL, 0, NULL, 0}};
	const char *output = "stint.data";
	int c;
	optind = 1;
	int force = 0;
	while ((c = getopt_long(argc, argv, "o:fh", longopts, NULL)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (c == 'f')
			force = 1;
		else if (c == 'h') {
			fputs(recover_usage, stdout);
			return 0;
		} else {
			cmd_bad_option("recover", argv, "o:fh", longopts);
		}
	}
	if (optind != argc - 1) {
		die("recover: give the spool directory that 'stint record' kept");
	}
	const char *spool = argv[optind];
	/* the spool is removed once recovered: an output inside it would go
	 * with it (recovered, then deleted) */
	char *outdir = xstrdup(output), *real_out = realpath(dirname(outdir), NULL), *real_spool = realpath(spool, NULL);
	if (real_out && real_spool && strcmp(real_out, real_spool) == 0)
		die("recover: '%s' is inside the spool '%s', which is removed once recovered: write it elsewhere",
		    output, spool);
	free(outdir);
	free(real_out);
	free(real_spool);
	struct rec_spool sp;
	struct fmt_data d;
	char err[1024];
	int finished = 0;
	if (rec_spool_open(&sp, spool, err, sizeof(err)) < 0)
		die("%s", err);
	pid_t writer = spool_writer(spool);
	if (writer && !force)
		die("recover: process %d still records into '%s' (stint record was stopped, the program runs "
		    "on): recover it once the program has ended (or -f: what it recorded so far); the spool is "
		    "kept", (int)writer, spool);
	if (recover_inplace(&sp, spool, output, writer))
		return 0;
	if (rec_session_convert(sp.path, spool, &d, &finished, err, sizeof(err)) < 0)
		die("%s", err);
	char first[256] = "";
	uint32_t unread = rec_spool_unread(sp.path, &d, first, sizeof(first));
	if (!d.nthreads)
		die("nothing recovered from '%s': %s; the spool is kept", spool,
		    unread ? xasprintf("none of its %u thread buffer%s could be read ('%s' is no buffer of this "
				       "stint's)", unread, unread == 1 ? "" : "s", first)
			   : "it holds no thread's recording");
	if (!finished) /* no exit status: the header and JSON said 0, a success */
		d.flags |= FMT_SESS_LEFT_RUNNING;
	if (fmt_write(&d, output) < 0)
		die("cannot write '%s': %s; '%s' is kept", output, strerror(errno), spool);
	if (!finished) /* (after the write: an error is then the one line) */
		warn("the recording in '%s' did not finish (stint record was killed while the program "
		     "ran): the exit status is unknown, and the duration is what stint saw until then",
		     spool);
	uint32_t cut = 0;
	for (uint32_t i = 0; i < d.nthreads; i++)
		cut += (d.threads[i].flags & FMT_THR_DAMAGED) != 0;
	if (cut && !unread) {
		/* (the data file says which threads are damaged) */
		warn("recovered %u process%s, %u thread%s from '%s' into '%s', but the buffers of %u thread%s were "
		     "cut short: the spool is kept", d.nprocs, d.nprocs == 1 ? "" : "es", d.nthreads,
		     d.nthreads == 1 ? "" : "s", spool, output, cut, cut == 1 ? "" : "s");
		fmt_data_free(&d);
		rec_spool_close(&sp);
		return CMD_EXIT_DAMAGED;
	}
	if (unread) {
		/* what could be read is in the data file; nothing else is lost */
		warn("recovered %u process%s, %u thread%s from '%s' into '%s', but %u thread buffer%s could not be "
		     "read ('%s'): the spool is kept", d.nprocs, d.nprocs == 1 ? "" : "es", d.nthreads,
		     d.nthreads == 1 ? "" : "s", spool, output, unread, unread == 1 ? "" : "s", first);
		fmt_data_free(&d);
		rec_spool_close(&sp);
		return CMD_EXIT_DAMAGED;
	}
	if (writer) { /* (-f) what it records from now on stays in the spool */
		warn("recovered %u process%s, %u thread%s from '%s' into '%s', so far: the spool is kept, as "
		     "process %d still records into it", d.nprocs, d.nprocs == 1 ? "" : "es", d.nthreads,
		     d.nthreads == 1 ? "" : "s", spool, output, (int)writer);
		fmt_data_free(&d);
		rec_spool_close(&sp);
		return 0;
	}
	warn("recovered %u process%s, %u thread%s from '%s' into '%s'", d.nprocs,
	     d.nprocs == 1 ? "" : "es", d.nthreads, d.nthreads == 1 ? "" : "s", spool, output);
	fmt_data_free(&d);
	rec_spool_remove(&sp);
	return 0;
}
