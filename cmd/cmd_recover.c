/*
 * cmd_recover.c - `stint recover SPOOL -o FILE`: make the data file of a
 * recording whose conversion failed (the disk filled while `stint record`
 * wrote it; the raw spool was kept and its path printed), or whose
 * recorder was killed.  Only a directory that is provably a spool of the
 * user's (rec_spool_open) is read, and only its own files are removed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"

static const char recover_usage[] = "usage: stint recover SPOOL-DIRECTORY [-o FILE]\n";

int cmd_recover(int argc, char **argv)
{
	static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
						  {"help", no_argument, NULL, 'h'},
						  {NULL, 0, NULL, 0}};
	const char *output = "stint.data";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (c == 'h') {
			fputs(recover_usage, stdout);
			return 0;
		} else {
			fputs(recover_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		die("recover: give the spool directory that 'stint record' kept");
	}
	const char *spool = argv[optind];
	struct rec_spool sp;
	struct fmt_data d;
	char err[1024];
	int finished = 0;
	if (rec_spool_open(&sp, spool, err, sizeof(err)) < 0)
		die("%s", err);
	if (rec_session_convert(sp.path, spool, &d, &finished, err, sizeof(err)) < 0)
		die("%s", err);
	if (!finished)
		warn("the recording in '%s' did not finish (stint record was killed while the program "
		     "ran): the exit status is unknown, and the duration is what stint saw until then",
		     spool);
	if (fmt_write(&d, output) < 0)
		die("cannot write '%s': %s; '%s' is kept", output, strerror(errno), spool);
	warn("recovered %u process%s, %u thread%s from '%s' into '%s'", d.nprocs,
	     d.nprocs == 1 ? "" : "es", d.nthreads, d.nthreads == 1 ? "" : "s", spool, output);
	fmt_data_free(&d);
	rec_spool_remove(&sp);
	return 0;
}
