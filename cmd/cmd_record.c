/*
 * cmd_record.c - `stint record`: run a program under a profiler and write
 * its data file.  Exits with the program's exit status (128+N if it died of
 * signal N), after keeping everything the program recorded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include "cmd.h"
#include "../format/format.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"

static const char record_usage[] =
	"usage: stint record [-m instrument|sample] [-o FILE] [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"  -m, --method METHOD    instrument (needs -finstrument-functions; default) or sample\n"
	"  -o, --output FILE      data file to write (default stint.data)\n"
	"      --os-events MODE   how to notice the thread leaving the CPU: perf (default),\n"
	"                         rusage (getrusage per probe) or off\n"
	"      --no-libcalls      do not probe calls into shared libraries\n"
	"      --clock CLOCK      tsc (default where invariant) or monotonic\n"
	"  -q, --quiet            no summary line\n";

static char *find_runtime(void)
{
	const char *dir = util_self_dir();
	const char *cands[] = {"%s/libstint-rt.so", "%s/../lib/stint/libstint-rt.so",
			       "%s/../lib/libstint-rt.so"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		char *p = xasprintf(cands[i], dir);
		char *real = realpath(p, NULL);
		free(p);
		if (real && access(real, R_OK) == 0)
			return real;
		free(real);
	}
	return NULL;
}

static char *join_args(char **argv)
{
	size_t n = 1;
	for (char **a = argv; *a; a++)
		n += strlen(*a) + 1;
	char *s = xmalloc(n);
	s[0] = 0;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static const char *describe_os(const struct fmt_data *d, const char *wanted)
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

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"method", required_argument, NULL, 'm'}, {"output", required_argument, NULL, 'o'},
		{"os-events", required_argument, NULL, 1}, {"no-libcalls", no_argument, NULL, 2},
		{"clock", required_argument, NULL, 3},     {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	const char *method = "instrument", *output = "stint.data", *os = "perf", *clock = NULL;
	int plt = 1, quiet = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+m:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': method = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 1: os = optarg; break;
		case 2: plt = 0; break;
		case 3: clock = optarg; break;
		case 'h': fputs(record_usage, stdout); return 0;
		default: fputs(record_usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		fputs(record_usage, stderr);
		die("record: no program given");
	}
	if (strcmp(method, "sample") == 0)
		die("record: the sampling method is not available in this build yet; use -m instrument");
	if (strcmp(method, "instrument") != 0)
		die("record: unknown method '%s' (instrument or sample)", method);
	if (strcmp(os, "perf") && strcmp(os, "rusage") && strcmp(os, "off"))
		die("record: unknown --os-events mode '%s' (perf, rusage or off)", os);
	if (clock && strcmp(clock, "tsc") && strcmp(clock, "monotonic"))
		die("record: unknown clock '%s' (tsc or monotonic)", clock);
	int use_tsc = clock ? strcmp(clock, "tsc") == 0 : rec_tsc_usable();

	char **pargv = argv + optind;
	char *path = rec_find_program(pargv[0]);
	if (!path)
		die("cannot find program '%s'%s", pargv[0],
		    strchr(pargv[0], '/') ? "" : " in PATH");
	int inst = rec_is_instrumented(path);
	if (inst == 0)
		die("'%s' was not built with -finstrument-functions: rebuild it with "
		    "'gcc -g -finstrument-functions ...' (no other change), or use -m sample",
		    pargv[0]);
	if (inst < 0 && !quiet)
		warn("'%s' is not an ELF file: recording the instrumented programs it runs", pargv[0]);
	char *rt = find_runtime();
	if (!rt)
		die("cannot find the runtime library libstint-rt.so next to '%s'", util_self_dir());

	/* the spool lives next to the output, so an unwritable path fails now */
	char *outcopy = xstrdup(output);
	char *outdir = xstrdup(dirname(outcopy));
	struct stat st;
	if (stat(output, &st) == 0 && S_ISDIR(st.st_mode))
		die("cannot write '%s': it is a directory", output);
	char *spool = xasprintf("%s/.stint-spool-%d", outdir, (int)getpid());
	if (mkdir(spool, 0700) < 0)
		die("cannot write to '%s': %s", outdir, strerror(errno));

	char *env[8];
	int ne = 0;
	env[ne++] = xasprintf("LD_PRELOAD=%s", rt);
	env[ne++] = xasprintf("STINT_SPOOL=%s", spool);
	env[ne++] = xasprintf("STINT_OS=%s", os);
	env[ne++] = xasprintf("STINT_CLOCK=%s", use_tsc ? "tsc" : "monotonic");
	env[ne++] = xasprintf("STINT_PLT=%d", plt);
	if (plt)
		env[ne++] = xstrdup("LD_BIND_NOW=1");
	env[ne] = NULL;

	struct rec_child child;
	char err[512];
	uint64_t tsc0 = __rdtsc(), ns0 = util_mono_ns();
	if (rec_spawn(path, pargv, env, &child, err, sizeof(err)) < 0) {
		rec_spool_remove(spool);
		die("%s", err);
	}
	rec_wait(&child);
	uint64_t tsc1 = __rdtsc(), ns1 = util_mono_ns();

	struct fmt_data d;
	memset(&d, 0, sizeof(d));
	d.method = xstrdup("instrumentation");
	d.command = join_args(pargv);
	d.wall_start = child.wall_start;
	d.duration_ns = child.mono_end - child.mono_start;
	d.ns_per_tick = use_tsc ? rec_tsc_ns_per_tick(tsc0, ns0, tsc1, ns1) : 1.0;
	d.clock = xstrdup(use_tsc ? "tsc" : "monotonic");
	d.exit_status = (uint32_t)rec_exit_code(child.status);
	d.flags = WIFSIGNALED(child.status) ? FMT_SESS_KILLED : 0;
	d.notes = xstrdup(plt ? "libcalls" : "");
	if (rec_spool_read(spool, &d, err, sizeof(err)) < 0)
		die("%s (the raw recording is kept in '%s')", err, spool);
	d.os = xstrdup(describe_os(&d, os));
	uint64_t events = 0, bytes = 0;
	for (uint32_t i = 0; i < d.nthreads; i++) {
		events += d.threads[i].nevents;
		bytes += d.threads[i].ev_len;
	}
	if (fmt_write(&d, output) < 0) {
		int e = errno;
		die("cannot write '%s': %s; the raw recording is kept in '%s'", output, strerror(e),
		    spool);
	}
	rec_spool_remove(spool);
	int code = rec_exit_code(child.status);
	if (!quiet) {
		if (WIFSIGNALED(child.status))
			warn("'%s' died of signal %d (%s); what it recorded is kept", pargv[0],
			     WTERMSIG(child.status), strsignal(WTERMSIG(child.status)));
		warn("recorded %u process%s, %u thread%s, %llu events (%.2f bytes/event) into '%s'",
		     d.nprocs, d.nprocs == 1 ? "" : "es", d.nthreads, d.nthreads == 1 ? "" : "s",
		     (unsigned long long)events, events ? (double)bytes / (double)events : 0.0, output);
	}
	fmt_data_free(&d);
	for (int i = 0; i < ne; i++)
		free(env[i]);
	free(spool);
	free(outdir);
	free(outcopy);
	free(rt);
	free(path);
	return code;
}
