/*
 * cmd_export.c - `stint export --format folded|pprof|callgrind|chrome`:
 * a data file in the format another tool reads (flame-graph tools, pprof,
 * callgrind_annotate/KCachegrind, Perfetto/chrome://tracing), for both
 * methods, with the filters every view takes.  The writers are in
 * output/out_export.c and output/out_pprof.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "../lib/util.h"
#include "../output/out_export.h"

static const char export_usage[] =
	"usage: stint export --format folded|pprof|callgrind|chrome [-o FILE] [-i DATA] [filters]\n"
	"\n"
	"  -f, --format FMT     folded     call paths and values for flamegraph.pl, inferno, speedscope\n"
	"                       pprof      gzipped protobuf profile for pprof\n"
	"                       callgrind  for callgrind_annotate and KCachegrind\n"
	"                       chrome     trace-event JSON for Perfetto UI and chrome://tracing\n"
	"  -o, --output FILE    write FILE (default, or -: standard output)\n"
	"  -i, --input DATA     data file (default stint.data)\n"
	"      --value elapsed|application\n"
	"                       folded, instrumentation: exclusive time to show (default elapsed)\n"
	"      --max-events N   chrome: write at most N events, the earliest (default 4000000,\n"
	"                       about 470 MB, what a trace viewer can load; 0: all); a\n"
	"                       warning says how many were left out\n"
	"      --no-compensation  values without the probe-cost correction\n"
	"      --no-pager       accepted as by report (export writes a file, never pages)\n" CMD_FILTER_HELP;

enum { EXP_FOLDED, EXP_PPROF, EXP_CALLGRIND, EXP_CHROME };

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {{"format", required_argument, NULL, 'f'},
						  {"output", required_argument, NULL, 'o'},
						  {"input", required_argument, NULL, 'i'},
						  {"value", required_argument, NULL, 2},
						  {"max-events", required_argument, NULL, 3},
						  {"no-compensation", no_argument, NULL, 4},
						  {"no-pager", no_argument, NULL, 5},
						  {"help", no_argument, NULL, 'h'},
						  CMD_FILTER_OPTIONS,
						  {NULL, 0, NULL, 0}};
	const char *input = "stint.data", *output = NULL, *format = NULL;
	struct an_filter flt = {0};
	int value = AN_EE, nocomp = 0, c;
	/* chrome: about 470 MB of JSON at most unless asked for more (0: the
	 * whole run); a viewer loads a trace whole into memory, and a long
	 * recording's run was 13.9 GB that no viewer opens */
	uint64_t max_events = 4000000;
	int max_given = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:o:i:h", longopts, NULL)) != -1) {
		if (cmd_filter_option(c, optarg, &flt))
			continue;
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = strcmp(optarg, "-") == 0 ? NULL : optarg; /* "-": standard output, as html takes it */
			break;
		case 'i':
			input = optarg;
			break;
		case 2:
			if (strcmp(optarg, "elapsed") == 0)
				value = AN_EE;
			else if (strcmp(optarg, "application") == 0)
				value = AN_AE;
			else
				die("unknown value '%s' (elapsed or application)", optarg);
			break;
		case 3: {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg)
				die("--max-events wants a number (0: every event), not '%s'", optarg);
			max_events = n;
			max_given = 1;
			break;
		}
		case 4:
			nocomp = 1;
			break;
		case 5: /* (export never pages: accepted as by report) */
			break;
		case 'h':
			fputs(export_usage, stdout);
			return 0;
		default:
			cmd_bad_option("export", argv, "f:o:i:h", longopts);
		}
	}
	if (optind != argc)
		cmd_unexpected("export", argv[optind]);
	if (!format)
		die("export: give --format folded, pprof, callgrind or chrome");
	int fmt;
	if (strcmp(format, "folded") == 0)
		fmt = EXP_FOLDED;
	else if (strcmp(format, "pprof") == 0)
		fmt = EXP_PPROF;
	else if (strcmp(format, "callgrind") == 0)
		fmt = EXP_CALLGRIND;
	else if (strcmp(format, "chrome") == 0)
		fmt = EXP_CHROME;
	else
		die("unknown export format '%s' (folded, pprof, callgrind or chrome)", format);
	if (fmt == EXP_PPROF && !out_pprof_available())
		die("export: this stint was built without protobuf-c, so it cannot write pprof "
		    "(Debian: libprotobuf-c-dev protobuf-c-compiler, then rebuild)");
	if (fmt == EXP_PPROF && !output && isatty(STDOUT_FILENO))
		die("export: pprof output is binary; give -o FILE or redirect standard output");

	cmd_output_not_input(output, input);
	struct fmt_data d;
	struct an_result r;
	cmd_load(input, &d, &r, nocomp, &flt);

	/* write a new file and rename it over the output when whole, so a
	 * failure or Ctrl-C leaves no half file (util_out) */
	struct util_out uo = {.fd = -1};
	FILE *f = stdout;
	if (output && (util_out_open(&uo, output) < 0 || !(f = fdopen(uo.fd, "w"))))
		die("cannot write '%s': %s", output, strerror(errno));

	int rc;
	if (fmt == EXP_CHROME) {
		struct out_chrome_opts co = {.filter = &flt, .max_events = max_events, .no_compensation = nocomp};
		rc = out_chrome(f, &d, &r, &co);
		if (co.left_out)
			fprintf(stderr,
				"stint export: %s %" PRIu64 ": wrote the first %" PRIu64 " events, left out %" PRIu64
				" (--max-events 0 writes the whole run; --tid, --function or --module select a part)\n",
				max_given ? "--max-events" : "at most (the default of --max-events)", max_events,
				co.written, co.left_out);
	} else {
		struct an_view v;
		an_view_build(&d, &r, &flt, &v);
		if (fmt == EXP_FOLDED)
			rc = out_folded(f, &v, value);
		else if (fmt == EXP_CALLGRIND)
			rc = out_callgrind(f, &v, &d, &r, &flt);
		else {
			fflush(f);
			rc = out_pprof(fileno(f), &v, &d, &r, &flt);
		}
		an_view_release(&v);
	}
	if (fflush(f) != 0)
		rc = -1;
	if (output) {
		/* the stream and util_out share the descriptor: util_out
		 * closes it, after the stream is flushed and freed */
		uo.fd = dup(uo.fd);
		if (fclose(f) != 0 || uo.fd < 0)
			rc = -1;
		if (rc < 0) {
			util_out_abort(&uo);
			die("cannot write '%s': %s", output, strerror(errno));
		}
		if (util_out_commit(&uo) < 0)
			die("cannot write '%s': %s", output, strerror(errno));
	} else if (rc < 0)
		die("cannot write the export: %s", strerror(errno));
	an_result_free(&r);
	fmt_data_free(&d);
	return 0;
}
