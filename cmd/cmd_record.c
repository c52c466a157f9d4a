/*
 * cmd_record.c - `stint record`: run a program under a profiler and write
 * its data file.  Exits with the program's exit status (128+N if it died of
 * signal N), after keeping everything the program recorded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "cmd.h"
#include "../format/format.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"
#include "../recorder/rec_perf.h"

static const char record_usage[] =
	"usage: stint record [-m instrument|sample] [-o FILE] [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"  -m, --method METHOD    instrument (needs -finstrument-functions; default) or sample\n"
	"  -o, --output FILE      data file to write (default stint.data)\n"
	"      --os-events MODE   how to notice the thread leaving the CPU: perf (default),\n"
	"                         rusage (getrusage per probe) or off\n"
	"      --no-libcalls      do not probe calls into shared libraries\n"
	"      --clock CLOCK      tsc (default where invariant) or monotonic\n"
	"  -f, --force            overwrite FILE (default: an existing FILE is kept as FILE.old)\n"
	"  -q, --quiet            no summary line\n"
	"sampling (-m sample), on any binary:\n"
	"  -g                     record call graphs (always on; as perf's -g: --call-graph dwarf)\n"
	"  -F, --freq HZ          samples per second of CPU time (default 1000)\n"
	"  -e, --event EVENT      task-clock (default: the threads' CPU time) or cycles\n"
	"  -p, --pid PID          attach to a running process instead of starting one\n"
	"      --duration SECS    with -p: stop after SECS (default: at Ctrl-C)\n"
	"      --call-graph HOW   dwarf (default: unwind copies of the stack with the\n"
	"                         DWARF CFI, works without frame pointers) or fp\n"
	"      --stack-size BYTES user stack copied per sample for dwarf (default 16384)\n"
	"      --kernel           sample kernel frames too (where permitted)\n"
	"      --sampler WHICH    perf (perf_event_open), inproc (a preloaded in-process\n"
	"                         sampler, CPU-time timers + libunwind) or auto (default:\n"
	"                         perf, inproc where perf events are not permitted)\n";

/* A library of stint's, beside the executable or where it is installed. */
static char *find_runtime(const char *name)
{
	const char *dir = util_self_dir();
	const char *subdirs[] = {"", "/../lib/stint", "/../lib"};
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		char *p = xasprintf("%s%s/%s", dir, subdirs[i], name);
		char *real = realpath(p, NULL);
		free(p);
		if (real && access(real, R_OK) == 0)
			return real;
		free(real);
	}
	return NULL;
}

/* The one line for a PROGRAM that cannot be run: missing, a directory, no x. */
static __attribute__((noreturn)) void die_no_program(const char *name)
{
	char why[4200];
	rec_program_missing(name, why, sizeof(why));
	die("%s", why);
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

/* Where the data file goes: the directory must be writable. */
static void check_output(const char *output)
{
	struct stat st;
	if (stat(output, &st) == 0 && S_ISDIR(st.st_mode))
		die("cannot write '%s': it is a directory", output);
	char *copy = xstrdup(output);
	char *dir = dirname(copy);
	if (access(dir, W_OK) < 0)
		die("cannot write to '%s': %s", dir, strerror(errno));
	struct util_out probe;
	if (util_out_open(&probe, output) < 0)
		die("cannot write '%s': %s", output, strerror(errno));
	util_out_abort(&probe);
	free(copy);
}

/* Say what rec_wait() left running (recorder.h: what is waited for). */
static void warn_left_running(const char *prog, const struct rec_child *c)
{
	if (c->stopped_early)
		warn("stopped waiting at Ctrl-C: processes of '%s' still run, unrecorded from now on; "
		     "what they recorded until now is kept", prog);
	else if (c->detached)
		warn("'%s' ended; %d process%s it started detached (setsid: a daemon) and %s not waited "
		     "for: what %s recorded until now is kept", prog, c->detached,
		     c->detached == 1 ? "" : "es", c->detached == 1 ? "is" : "are",
		     c->detached == 1 ? "it" : "they");
}

/* What keeps the dynamic linker from loading stint's runtime into path:
 * a message, or NULL. */
static char *preload_obstacle(const char *path, const char *shown)
{
	struct stat st;
	if (stat(path, &st) == 0 && (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
				     ((st.st_mode & S_ISGID) && st.st_gid != getgid())))
		return xasprintf("'%s' is set-%s-ID: the system runs it without LD_PRELOAD, so stint's "
				 "runtime would not load and nothing would be recorded; record it as %s, "
				 "or record a copy without that bit",
				 shown, (st.st_mode & S_ISUID) && st.st_uid != getuid() ? "user" : "group",
				 (st.st_mode & S_ISUID) && st.st_uid != getuid() ? "its owner" : "its group");
	if (rec_is_static(path) == 1)
		return xasprintf("'%s' is statically linked: stint's runtime is loaded by the dynamic "
				 "linker (LD_PRELOAD), which a static program does not use; link it "
				 "dynamically (without -static)", shown);
	return NULL;
}

/* One line for "nothing was recorded", with the likely reasons. */
/*
 * The data file's notes for a program instrumented through its patch sites:
 * "patched=N/M" and the functions left out, "unpatched=a,b" (symbol names,
 * which hold no space and no comma once commas are replaced).
 */
static void patch_notes(struct fmt_data *d, const struct rec_patch_info *p, int plt)
{
	size_t len = 64;
	for (size_t i = 0; i < p->nmissing; i++)
		len += strlen(p->missing[i]) + 1;
	char *s = xmalloc(len), *w = s;
	w += sprintf(w, "%spatched=%zu/%zu", plt ? "libcalls " : "", p->patched, p->functions);
	for (size_t i = 0; i < p->nmissing; i++) {
		*w++ = i ? ',' : ' ';
		if (!i)
			w += sprintf(w, "unpatched=");
		for (const char *c = p->missing[i]; *c; c++)
			*w++ = *c == ' ' || *c == ',' ? '_' : *c;
	}
	*w = 0;
	free(d->notes);
	d->notes = s;
}

static void explain_nothing(const char *prog)
{
	warn("nothing was recorded: '%s' never started stint's runtime (a set-user-ID or statically "
	     "linked program run by it, or one that removed LD_PRELOAD from the environment of what it runs)",
	     prog);
}

/*
 * Sampling without perf events: the program runs with libstint-sampler.so
 * preloaded (runtime/smp.c), which spools its samples like the
 * instrumentation runtime does.
 */
static int record_inproc(char **argv, const char *output, const struct rec_perf_opts *so, int quiet,
			 const char *why)
{
	char err[512];
	if (!STINT_HAVE_INPROC)
		die("record: %sthis stint was built without libunwind, so it has no in-process sampler%s "
		    "(Debian: libunwind-dev, then rebuild)",
		    strncmp(why, "perf", 4) == 0 ? "perf events are not permitted here, and " : "",
		    strncmp(why, "perf", 4) == 0 ? " to fall back on" : "");
	char *lib = find_runtime("libstint-sampler.so");
	if (!lib)
		die("cannot find libstint-sampler.so next to '%s'", util_self_dir());
	char *path = rec_find_program(argv[0]);
	if (!path)
		die_no_program(argv[0]);
	char *obstacle = preload_obstacle(path, argv[0]);
	if (obstacle)
		die("%s", obstacle);
	struct rec_session rs;
	if (rec_session_begin(&rs, "inproc", output, lib, err, sizeof(err)) < 0)
		die("%s", err);
	rec_session_setenv(&rs, FMT_ENV_FREQ, "%u", so->freq);
	if (so->kernel) /* keep the samples taken in system calls (charged to the call) */
		rec_session_setenv(&rs, FMT_ENV_KERNEL, "1");
	struct fmt_data *d = &rs.d;
	d->command = join_args(argv);
	d->clock = xstrdup("task-clock");
	d->os = xasprintf("libunwind, in-process sampler (%s)", why);
	d->rate = so->freq;
	d->notes = xasprintf("lost=0 stack=0 kernel=%d", so->kernel);
	if (rec_session_run(&rs, path, argv, err, sizeof(err)) < 0)
		die("%s", err);
	const struct rec_child *child = &rs.child;
	if (rs.save_errno)
		warn("cannot save the session in '%s': %s", rs.spool.shown, strerror(rs.save_errno));
	uint64_t samples = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		samples += d->threads[i].nevents;
	for (uint32_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == (uint32_t)child->pid) {
			free(d->procs[i].command);
			d->procs[i].command = join_args(argv);
			break;
		}
	if (rec_session_write(&rs, output) < 0)
		die("cannot write '%s': %s; the raw recording is kept: once there is room, "
		    "'stint recover %s -o FILE' makes the data file of it",
		    output, strerror(errno), rs.spool.shown);
	int code = rec_exit_code(child->status);
	if (!quiet) {
		if (child->stopped_early || child->detached)
			warn_left_running(argv[0], child);
		if (!d->nprocs)
			explain_nothing(argv[0]);
		if (WIFSIGNALED(child->status))
			warn("'%s' died of signal %d (%s); its samples are kept", argv[0],
			     WTERMSIG(child->status), strsignal(WTERMSIG(child->status)));
		warn("recorded %llu samples with the in-process sampler (%s) of %u process%s, %u thread%s into '%s'",
		     (unsigned long long)samples, why, d->nprocs, d->nprocs == 1 ? "" : "es", d->nthreads,
		     d->nthreads == 1 ? "" : "s", output);
		const char *u = d->notes ? strstr(d->notes, "unsampled=") : NULL;
		unsigned unsampled = u ? (unsigned)atoi(u + 10) : 0;
		if (unsampled)
			warn("%u thread%s could not be sampled (no CPU-time timer, or the sampler's signal was "
			     "blocked)", unsampled, unsampled == 1 ? "" : "s");
	}
	rec_session_end(&rs);
	free(path);
	free(lib);
	return code;
}

static int record_sample(int argc, char **argv, const char *output, struct rec_perf_opts *so,
			 pid_t attach, double duration, int quiet, const char *sampler)
{
	char err[512];
	if (strcmp(sampler, "inproc") == 0) {
		if (attach)
			die("record: the in-process sampler cannot attach to a running process (-p)");
		if (argc < 1)
			die("record: no program given (stint record --help)");
		check_output(output);
		return record_inproc(argv, output, so, quiet, "--sampler inproc");
	}
	struct rec_child child = {.go_fd = -1, .hold = 1};
	char *path = NULL;
	if (!attach && argc < 1) {
		die("record: no program given (stint record --help)");
	}
	if (attach && argc > 0)
		die("record: give either -p PID or a program, not both");
	check_output(output);
	pid_t *tids = NULL;
	int ntids = 0;
	if (attach) {
		so->attach = 1;
		ntids = rec_perf_thread_ids(attach, &tids);
		if (ntids <= 0)
			die("no process %d to attach to", (int)attach);
	} else {
		path = rec_find_program(argv[0]);
		if (!path)
			die_no_program(argv[0]);
		if (rec_spawn(path, argv, NULL, &child, err, sizeof(err)) < 0)
			die("%s", err);
		tids = xmalloc(sizeof(*tids));
		tids[0] = child.pid;
		ntids = 1;
	}
	int denied = 0;
	struct rec_perf *perf = rec_perf_open(tids, ntids, so, &denied, err, sizeof(err));
	if (!perf) {
		if (!attach) {
			kill(child.pid, SIGKILL); /* it never ran: it waited to exec */
			waitpid(child.pid, NULL, 0);
			close(child.err_fd);
			close(child.go_fd);
		}
		if (denied && !attach && strcmp(sampler, "auto") == 0) {
			if (!quiet)
				warn("%s; using the in-process sampler instead", err);
			free(tids);
			free(path);
			return record_inproc(argv, output, so, quiet, "perf events not permitted");
		}
		die("%s", err);
	}
	uint64_t wall0 = util_wall_ns(), mono0 = util_mono_ns();
	int status = 0;
	struct rec_attach at = {0};
	if (attach) {
		rec_perf_enable(perf);
		/* its mappings, command line and thread names now: it may be gone
		 * when recording ends (mappings made from here on come as mmap
		 * records; one made while this reads comes twice, and counts once) */
		if (rec_attach_snapshot(attach, &at) < 0)
			die("process %d ended as stint attached to it", (int)attach);
		if (!quiet)
			warn("sampling process %d%s", (int)attach, duration > 0 ? "" : " until Ctrl-C");
		rec_perf_run(perf, attach, &status, duration);
	} else {
		rec_release(&child);
		if (rec_spawn_finish(&child, child.pid, child.err_fd, path, err, sizeof(err)) < 0)
			die("%s", err);
		rec_perf_run(perf, child.pid, &status, 0);
	}
	uint64_t mono1 = util_mono_ns();
	struct fmt_data d;
	memset(&d, 0, sizeof(d));
	struct rec_sample_stats st = {0};
	rec_sample_build(rec_perf_records(perf), rec_perf_opts(perf), attach ? &at : NULL, &d, &st);
	st.lost = rec_perf_lost(perf);
	d.method = xstrdup("sampling");
	d.command = attach ? xstrdup(at.command) : join_args(argv);
	rec_attach_free(&at);
	if (!attach && d.nprocs)
		for (uint32_t i = 0; i < d.nprocs; i++)
			if (d.procs[i].pid == (uint32_t)child.pid) {
				free(d.procs[i].command);
				d.procs[i].command = join_args(argv);
				break;
			}
	d.wall_start = wall0;
	d.duration_ns = mono1 - mono0;
	d.ns_per_tick = 1.0;
	d.clock = xstrdup(so->event ? so->event : "task-clock");
	d.os = xstrdup(rec_perf_opts(perf)->callgraph == REC_CG_DWARF ? "dwarf" : "fp");
	d.exit_status = attach ? 0 : (uint32_t)rec_exit_code(status);
	d.flags = attach ? FMT_SESS_ATTACHED : WIFSIGNALED(status) ? FMT_SESS_KILLED : 0;
	d.rate = so->freq;
	d.notes = xasprintf("lost=%llu cut=%llu stack=%u kernel=%d stackout=%llu", (unsigned long long)st.lost,
			    (unsigned long long)st.unwind_fail, rec_perf_opts(perf)->stack_size, so->kernel,
			    (unsigned long long)st.stack_out);
	unsigned stack_size = rec_perf_opts(perf)->stack_size;
	rec_perf_close(perf);
	if (fmt_write(&d, output) < 0)
		die("cannot write '%s': %s", output, strerror(errno));
	int code = attach ? 0 : rec_exit_code(status);
	if (!quiet) {
		if (!attach && WIFSIGNALED(status))
			warn("'%s' died of signal %d (%s); its samples are kept", argv[0], WTERMSIG(status),
			     strsignal(WTERMSIG(status)));
		warn("recorded %llu samples (%llu lost, %llu stacks cut short) of %u process%s, "
		     "%u thread%s into '%s'",
		     (unsigned long long)st.samples, (unsigned long long)st.lost,
		     (unsigned long long)st.unwind_fail, d.nprocs, d.nprocs == 1 ? "" : "es",
		     d.nthreads, d.nthreads == 1 ? "" : "s", output);
		if (st.stack_out)
			warn("%llu of the stacks were cut short because the %u-byte copy of the user stack ran "
			     "out: raise --stack-size (at most 65000)",
			     (unsigned long long)st.stack_out, stack_size);
	}
	fmt_data_free(&d);
	free(tids);
	free(path);
	return code;
}

/* The name of an option only sampling takes, NULL for the others. */
static const char *sampling_option_name(int c)
{
	switch (c) {
	case 'g': return "-g";
	case 'F': return "-F";
	case 'e': return "-e";
	case 'p': return "-p";
	case 4: return "--duration";
	case 5: return "--call-graph";
	case 6: return "--stack-size";
	case 7: return "--kernel";
	case 8: return "--sampler";
	}
	return NULL;
}

/*
 * An existing data file is kept as FILE.old before a new recording replaces
 * it, as perf does; -f/--force overwrites.  A directory or anything but a
 * regular file at that name is left for the writer to refuse.
 */
static void keep_old_output(const char *output, int force)
{
	struct stat st;
	if (force || lstat(output, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	char *old = xasprintf("%s.old", output);
	if (rename(output, old) < 0)
		die("cannot keep the previous '%s' as '%s': %s (-f overwrites it)", output, old, strerror(errno));
	free(old);
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"method", required_argument, NULL, 'm'}, {"output", required_argument, NULL, 'o'},
		{"os-events", required_argument, NULL, 1}, {"no-libcalls", no_argument, NULL, 2},
		{"clock", required_argument, NULL, 3},     {"quiet", no_argument, NULL, 'q'},
		{"freq", required_argument, NULL, 'F'},    {"event", required_argument, NULL, 'e'},
		{"pid", required_argument, NULL, 'p'},     {"duration", required_argument, NULL, 4},
		{"call-graph", required_argument, NULL, 5}, {"stack-size", required_argument, NULL, 6},
		{"kernel", no_argument, NULL, 7},          {"sampler", required_argument, NULL, 8},
		{"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	struct rec_perf_opts so = {.freq = 1000, .stack_size = 16384};
	const char *sampler = "auto";
	pid_t attach = 0;
	double duration = 0;
	const char *method = "instrument", *output = "stint.data", *os = "perf", *clock = NULL;
	int plt = 1, quiet = 0, force = 0, c;
	const char *sample_only = NULL; /* the first option that only sampling takes */
	optind = 1;
	while ((c = getopt_long(argc, argv, "+m:o:qhfgF:e:p:", longopts, NULL)) != -1) {
		if (!sample_only)
			sample_only = sampling_option_name(c);
		switch (c) {
		case 'f': force = 1; break;
		case 'g': so.callgraph = REC_CG_DWARF; break; /* perf's -g: record call graphs */
		case 'm': method = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 1: os = optarg; break;
		case 2: plt = 0; break;
		case 3: clock = optarg; break;
		case 'F':
			so.freq = (unsigned)atoi(optarg);
			if (so.freq < 1 || so.freq > 100000)
				die("record: -F wants a rate from 1 to 100000 samples per second");
			break;
		case 'e':
			if (strcmp(optarg, "task-clock") == 0 || strcmp(optarg, "cpu-clock") == 0)
				so.event = NULL;
			else if (strcmp(optarg, "cycles") == 0)
				so.event = "cycles";
			else
				die("record: unknown event '%s' (task-clock or cycles)", optarg);
			break;
		case 'p': attach = (pid_t)cmd_parse_id("record: -p", optarg); break;
		case 4: {
			char *end;
			duration = strtod(optarg, &end);
			if (end == optarg || *end || !(duration > 0 && duration < 1e7))
				die("record: --duration wants a number of seconds, not '%s'", optarg);
			break;
		}
		case 5:
			if (strcmp(optarg, "dwarf") == 0) so.callgraph = REC_CG_DWARF;
			else if (strcmp(optarg, "fp") == 0) so.callgraph = REC_CG_FP;
			else die("record: unknown call graph '%s' (dwarf or fp)", optarg);
			break;
		case 6:
			so.stack_size = (unsigned)atoi(optarg);
			if (so.stack_size < 512 || so.stack_size > 65000 || so.stack_size % 8)
				die("record: --stack-size wants a multiple of 8 from 512 to 65000");
			break;
		case 7: so.kernel = 1; break;
		case 8:
			if (strcmp(optarg, "auto") && strcmp(optarg, "perf") && strcmp(optarg, "inproc"))
				die("record: unknown sampler '%s' (auto, perf or inproc)", optarg);
			sampler = optarg;
			break;
		case 'h': fputs(record_usage, stdout); return 0;
		default: fputs(record_usage, stderr); return 2;
		}
	}
	int sampling = strcmp(method, "sample") == 0 || strcmp(method, "sampling") == 0;
	if (!sampling && sample_only)
		die("record: %s is an option of sampling (-m sample); instrumentation records every call",
		    sample_only);
	if (duration != 0 && !attach)
		die("record: --duration goes with -p PID; to stop a program you start, press Ctrl-C");
	keep_old_output(output, force);
	if (sampling)
		return record_sample(argc - optind, argv + optind, output, &so, attach, duration, quiet,
				     sampler);
	if (optind >= argc) {
		die("record: no program given (stint record --help)");
	}
	if (strcmp(method, "instrument") != 0 && strcmp(method, "instrumentation") != 0)
		die("record: unknown method '%s' (instrument or sample)", method);
	if (strcmp(os, "perf") && strcmp(os, "rusage") && strcmp(os, "off"))
		die("record: unknown --os-events mode '%s' (perf, rusage or off)", os);
	if (clock && strcmp(clock, "tsc") && strcmp(clock, "monotonic"))
		die("record: unknown clock '%s' (tsc or monotonic)", clock);
	int use_tsc = clock ? strcmp(clock, "tsc") == 0 : rec_tsc_usable();

	char **pargv = argv + optind;
	char *path = rec_find_program(pargv[0]);
	if (!path)
		die_no_program(pargv[0]);
	int inst = rec_is_instrumented(path);
	struct rec_patch_info pinfo;
	memset(&pinfo, 0, sizeof(pinfo));
	if (inst == 0) {
		/* not built for instrumentation: patch sites the compiler left? */
		rec_patch_scan(path, &pinfo);
		if (!pinfo.patched && pinfo.mcount)
			die("'%s' was built with -pg without -mfentry: its mcount calls come after the "
			    "prologue and cannot be used; rebuild it with 'gcc -pg -mfentry', "
			    "'-fpatchable-function-entry=5' or '-finstrument-functions', or use -m sample",
			    pargv[0]);
		if (!pinfo.patched)
			die("'%s' was not built with -finstrument-functions: rebuild it with "
			    "'gcc -g -finstrument-functions ...' (no other change; '-pg -mfentry' or "
			    "'-fpatchable-function-entry=5' work too), or use -m sample",
			    pargv[0]);
	}
	if (inst < 0 && !quiet)
		warn("'%s' is not an ELF file: recording the instrumented programs it runs", pargv[0]);
	char *rt = find_runtime("libstint-rt.so");
	if (!rt)
		die("cannot find the runtime library libstint-rt.so next to '%s'", util_self_dir());

	char *obstacle = preload_obstacle(path, pargv[0]);
	if (obstacle)
		die("%s", obstacle);

	/* the spool lives next to the output (its largest buffer becomes the
	 * data file by a rename), so an unwritable path fails now */
	struct stat st;
	if (stat(output, &st) == 0 && S_ISDIR(st.st_mode))
		die("cannot write '%s': it is a directory", output);
	check_output(output);
	char err[512];
	struct rec_session rs;
	if (rec_session_begin(&rs, "instrument", output, rt, err, sizeof(err)) < 0)
		die("%s", err);
	rec_session_setenv(&rs, FMT_ENV_OS, "%s", os);
	rec_session_setenv(&rs, FMT_ENV_CLOCK, "%s", use_tsc ? "tsc" : "monotonic");
	/* no LD_BIND_NOW: the runtime binds the entries it probes itself, and
	 * the program (and all it starts) keeps its own binding */
	rec_session_setenv(&rs, FMT_ENV_PLT, "%d", plt);
	rs.os_wanted = os;
	rs.use_tsc = use_tsc;
	struct fmt_data *d = &rs.d;
	d->command = join_args(pargv);
	d->clock = xstrdup(use_tsc ? "tsc" : "monotonic");
	/* the session file's notes are read back 255 bytes at most: the list
	 * of functions left out goes only into the data file, below */
	d->notes = pinfo.functions ? xasprintf("%spatched=%zu/%zu", plt ? "libcalls " : "", pinfo.patched,
					       pinfo.functions)
				   : xstrdup(plt ? "libcalls" : "");
	d->os = xstrdup("");
	if (rec_session_run(&rs, path, pargv, err, sizeof(err)) < 0)
		die("%s", err);
	const struct rec_child *child = &rs.child;
	if (rs.save_errno)
		warn("cannot save the session in '%s': %s", rs.spool.shown, strerror(rs.save_errno));
	if (pinfo.functions)
		patch_notes(d, &pinfo, plt);
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		bytes += d->threads[i].ev_len;
	if (rec_session_write(&rs, output) < 0) {
		int e = errno;
		die("cannot write '%s': %s; the raw recording is kept: once there is room, "
		    "'stint recover %s -o FILE' makes the data file of it",
		    output, strerror(e), rs.spool.shown);
	}
	int code = rec_exit_code(child->status);
	if (!quiet) {
		if (child->stopped_early || child->detached)
			warn_left_running(pargv[0], child);
		if (!d->nprocs)
			explain_nothing(pargv[0]);
		if (WIFSIGNALED(child->status))
			warn("'%s' died of signal %d (%s); what it recorded is kept", pargv[0],
			     WTERMSIG(child->status), strsignal(WTERMSIG(child->status)));
		warn("recorded %u process%s, %u thread%s, %.1f MB of events into '%s'", d->nprocs,
		     d->nprocs == 1 ? "" : "es", d->nthreads, d->nthreads == 1 ? "" : "s",
		     (double)bytes / 1e6, output);
	}
	rec_session_end(&rs);
	rec_patch_free(&pinfo);
	free(rt);
	free(path);
	return code;
}
