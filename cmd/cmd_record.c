/*
 * cmd_record.c - `stint record`: run a program under a profiler and write
 * its data file.  Exits with the program's exit status (128+N if it died of
 * signal N), after keeping everything the program recorded.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "../arch/arch.h"
#include "../format/format.h"
#include "../format/fmt_spool.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"
#include "../recorder/rec_perf.h"

static const char record_usage[] =
	"usage: stint record [-m instrument|sample] [-o FILE] [options] [--] PROGRAM [ARGS...]\n"
	"       stint record [-m instrument|sample] -p PID [--duration SECS] [-o FILE]\n"
	"\n"
	"  -m, --method METHOD    instrument (default: probes at every function's entry and\n"
	"                         exit; a -finstrument-functions build, else patched at\n"
	"                         load, also in what PROGRAM runs) or sample\n"
	"  -o, --output FILE      data file to write (default stint.data)\n"
	"      --os-events MODE   how to notice the thread leaving the CPU: perf (default),\n"
	"                         rusage (getrusage per probe) or off\n"
	"      --no-libcalls      do not probe calls into shared libraries\n"
	"      --no-cache         neither take nor keep the scans of programs' code that\n"
	"                         patching at load makes ($XDG_CACHE_HOME/stint, else\n"
	"                         ~/.cache/stint)\n"
	"      --clock CLOCK      tsc (default where invariant) or monotonic\n"
	"  -f, --force            overwrite FILE (default: an existing FILE is kept as FILE.old)\n"
	"  -q, --quiet            no summary line\n"
	"selection (-m instrument; the other calls are not recorded, their time is their\n"
	"callers' exclusive time):\n"
	"      --function GLOB    record only the functions matching GLOB (repeatable)\n"
	"      --not-function GLOB  record no function matching GLOB (repeatable)\n"
	"      --module GLOB      record only the functions of the modules (file names)\n"
	"                         matching GLOB (repeatable)\n"
	"      --depth N          record calls at most N selected frames deep\n"
	"      --min-duration TIME  record only calls that last at least TIME (10us, 1ms)\n"
	"sampling (-m sample), on any binary:\n"
	"  -g                     record call graphs (always on; as perf's -g: --call-graph dwarf)\n"
	"  -F, --freq HZ          samples per second of CPU time (default 1000)\n"
	"  -e, --event EVENT      task-clock (default: the threads' CPU time) or cycles\n"
	"  -p, --pid PID          attach to a running process instead of starting one (also\n"
	"                         -m instrument: a -finstrument-functions program)\n"
	"      --duration SECS    with -p: stop after SECS (default: at Ctrl-C)\n"
	"      --call-graph HOW   dwarf (default: unwind copies of the stack with the\n"
	"                         DWARF CFI, works without frame pointers) or fp\n"
	"      --stack-size BYTES user stack copied per sample for dwarf (default 16384)\n"
	"      --kernel           sample kernel frames too (where permitted)\n"
	"      --sampler WHICH    perf (perf_event_open), inproc (a preloaded in-process\n"
	"                         sampler, CPU-time timers + libunwind) or auto (default:\n"
	"                         perf, inproc where perf events are not permitted)\n";

/*
 * Threads whose recording stopped for a reason the recorder's passes do not
 * see while the program runs (the flag comes with the thread's end): said
 * once each, as the report's header says them.  A timeout by SIGALRM and
 * siglongjmp lost every later call of the thread, and only the report said.
 */
static void warn_threads_stopped(const struct fmt_data *d)
{
	static const struct {
		uint32_t flag;
		const char *why;
	} stops[] = {
		{FMT_THR_LEFTPROBE, "a signal handler that interrupted one of stint's probes left it (siglongjmp): "
				    "later calls were not recorded"},
		{FMT_THR_NOCLOCK, "the time-stamp counter was turned off (PR_SET_TSC, seccomp's strict mode): "
				  "recording stopped there"},
		{FMT_THR_FILELIMIT, "the program's file size limit (RLIMIT_FSIZE) kept the buffer from growing: "
				    "recording stopped there"},
	};
	for (size_t k = 0; k < sizeof(stops) / sizeof(stops[0]); k++) {
		uint32_t n = 0, tid = 0;
		for (uint32_t i = 0; i < d->nthreads; i++)
			if (d->threads[i].flags & stops[k].flag) {
				if (!n++)
					tid = d->threads[i].tid;
			}
		if (n == 1)
			warn("thread %u: %s; what was recorded before is kept", tid, stops[k].why);
		else if (n)
			warn("%u threads (the first %u): %s; what was recorded before is kept", n, tid, stops[k].why);
	}
}

/* A library of stint's, beside the executable or where it is installed. */
static char *preload_link_dir;

static void remove_preload_link(void)
{
	if (!preload_link_dir)
		return;
	DIR *dir = opendir(preload_link_dir);
	for (struct dirent *e; dir && (e = readdir(dir));)
		if (e->d_name[0] != '.')
			unlinkat(dirfd(dir), e->d_name, 0);
	if (dir)
		closedir(dir);
	rmdir(preload_link_dir);
}

/*
 * A path LD_PRELOAD can name: the dynamic loader splits its value at
 * spaces and colons, with no way to quote them, so stint installed (or
 * built) under "/home/me/My Projects" preloaded '/home/me/My' (the program
 * printed the loader's error, nothing was recorded).  Such a library is
 * named through a link in a directory of the temporary directory, removed
 * when stint ends; one die line if there is none to make.
 */
static char *preload_safe(char *lib)
{
	if (!strpbrk(lib, " :\t\n"))
		return lib;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/' || strpbrk(tmp, " :\t\n"))
		tmp = "/tmp";
	if (!preload_link_dir) {
		char *dir = xasprintf("%s/stint-preload-XXXXXX", tmp);
		if (!mkdtemp(dir))
			die("stint's library '%s' has a space or colon in its path, which LD_PRELOAD cannot name, "
			    "and no link to it can be made in '%s': %s", lib, tmp, strerror(errno));
		preload_link_dir = dir;
		atexit(remove_preload_link);
	}
	const char *base = strrchr(lib, '/') + 1;
	char *link = xasprintf("%s/%s", preload_link_dir, base);
	if (symlink(lib, link) < 0 && errno != EEXIST)
		die("stint's library '%s' has a space or colon in its path, which LD_PRELOAD cannot name, and no "
		    "link to it can be made in '%s': %s", lib, preload_link_dir, strerror(errno));
	free(lib);
	return link;
}

static char *find_runtime(const char *name)
{
	const char *dir = util_self_dir();
	const char *subdirs[] = {"", "/../lib/stint", "/../lib"};
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		char *p = xasprintf("%s%s/%s", dir, subdirs[i], name);
		char *real = realpath(p, NULL);
		free(p);
		if (real && access(real, R_OK) == 0)
			return preload_safe(real);
		free(real);
	}
	return NULL;
}

/*
 * An existing data file is kept as FILE.old when the new recording is
 * written, as perf does; -f/--force overwrites.  A directory or anything but
 * a regular file at that name is left for the writer to refuse.  Done at
 * the end, not at the start: a program that could not be run after all (a
 * script's interpreter missing) took FILE to FILE.old and left nothing, each
 * try pushing out the last good recording; two recordings to one name at
 * once lost the first to end.  Whether it can be done is checked before the
 * program runs (stale_rename_refused).
 */
static int record_force; /* -f */

/* Where the recording goes: output, its predecessor renamed FILE.old; if
 * that rename fails now (the directory changed meanwhile), FILE.new. */
static const char *keep_old_output(const char *output)
{
	struct stat st;
	if (record_force || lstat(output, &st) < 0 || !S_ISREG(st.st_mode))
		return output;
	char *old = xasprintf("%s.old", output);
	if (rename(output, old) < 0) {
		/* a name nothing holds: FILE.new was overwritten */
		int e = errno;
		char *alt = xasprintf("%s.new", output);
		for (unsigned k = 1; lstat(alt, &st) == 0 && k < 1000; k++) {
			free(alt);
			alt = xasprintf("%s.new.%u", output, k);
		}
		warn("cannot keep the previous '%s' as '%s': %s; this recording goes to '%s', and '%s' is the "
		     "previous one", output, old, strerror(e), alt, output);
		free(old);
		return alt;
	}
	free(old);
	return output;
}

/* A rename a sticky directory (/tmp) refuses: a file of another user
 * there is neither replaced nor moved by us (unless we own the directory,
 * or are root). */
static int sticky_refuses(const char *path, const struct stat *dir)
{
	struct stat st;
	return lstat(path, &st) == 0 && (dir->st_mode & S_ISVTX) && geteuid() != 0 && st.st_uid != geteuid() &&
	       dir->st_uid != geteuid();
}

/* Said before the program runs: the end's renames would be refused. */
static void check_old_output(const char *output)
{
	char *copy = xstrdup(output);
	struct stat dir;
	if (stat(dirname(copy), &dir) == 0) {
		char *old = xasprintf("%s.old", output);
		struct stat st;
		int regular = lstat(output, &st) == 0 && S_ISREG(st.st_mode);
		if (sticky_refuses(output, &dir))
			die("cannot %s '%s': it belongs to another user, in a directory where only a file's owner "
			    "may rename it (give another file with -o)",
			    record_force || !regular ? "replace" : "keep the previous", output);
		struct stat ost;
		if (!record_force && regular && lstat(old, &ost) == 0 && S_ISDIR(ost.st_mode))
			die("cannot keep the previous '%s' as '%s': '%s' is a directory (-f overwrites '%s'; or give "
			    "another file with -o)", output, old, old, output);
		if (!record_force && regular && sticky_refuses(old, &dir))
			die("cannot keep the previous '%s' as '%s': '%s' belongs to another user, in a directory "
			    "where only a file's owner may replace it (-f overwrites '%s'; or give another file "
			    "with -o)", output, old, old, output);
		free(old);
	}
	free(copy);
}

/* The exit status, and Ctrl-C passed on as Ctrl-C: the program died of it,
 * or a second one stopped the recording while the program ran on. */
static int program_exit(const struct rec_child *c)
{
	if (c->left_running && (c->stopped_early ? REC_STOP_SIGNAL(c->stopped_early) : SIGINT) == SIGINT)
		cmd_exit_signal = SIGINT;
	return cmd_program_exit_code(c->status);
}

/* A program that could not be run once started (exec failed: a script's
 * interpreter missing, a binary of another machine): err said, and a
 * shell's status, 127 for not found, 126 else; 2 for anything else. */
static __attribute__((noreturn)) void die_not_run(const char *err, const struct rec_child *c)
{
	warn("%s", err);
	exit(c->exec_errno == ENOENT ? 127 : c->exec_errno ? 126 : 2);
}

/* The exit status is a shell's (and env's, nohup's, timeout's): 127 for a
 * program not found, 126 for one found that cannot be run. */
static __attribute__((noreturn)) void die_no_program(const char *name)
{
	char why[4200];
	int code = rec_program_missing(name, why, sizeof(why));
	warn("%s", why);
	exit(code);
}

/*
 * A file size limit (ulimit -f, RLIMIT_FSIZE) smaller than a recording's
 * first buffer file: the program (which inherits it) would die of SIGXFSZ
 * at the runtime's first thread, or record nothing; said before it runs.
 */
static void check_file_limit(void)
{
	struct rlimit rl;
	uint64_t need = FMT_SPOOL_DATA_OFF + fmt_spool_chunk_size(0);
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
		die("record: the file size limit (ulimit -f) is %llu KiB, and a recording's files need %llu KiB "
		    "at least: raise it ('ulimit -f unlimited')",
		    (unsigned long long)rl.rlim_cur / 1024, (unsigned long long)(need + 1023) / 1024);
}

/* An argument as a shell would take it back, at w: as it is when nothing
 * in it is special to the shell, else in single quotes ('\'' for a quote).
 * At most 4 bytes per byte and 2 more are written; returns the end. */
static char *put_quoted(char *w, const char *a)
{
	if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-") == strlen(a))
		return stpcpy(w, a);
	*w++ = '\'';
	for (const char *c = a; *c; c++)
		w = *c == '\'' ? stpcpy(w, "'\\''") : (*w = *c, w + 1);
	*w++ = '\'';
	*w = 0;
	return w;
}

/* The arguments joined by spaces: quoted as a shell would need them for the
 * session's command line ("./script.sh a 'b c'", to run again), as they are
 * for a process's (what ps shows, as /proc gives the others). */
static char *join_args(char **argv, int quoted)
{
	size_t n = 1;
	for (char **a = argv; *a; a++)
		n += 4 * strlen(*a) + 3;
	char *s = xmalloc(n), *w = s;
	*w = 0;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			*w++ = ' ';
		w = quoted ? put_quoted(w, *a) : stpcpy(w, *a);
	}
	return s;
}

/*
 * Where the data file goes, checked before the program runs: a name the
 * final rename would refuse (empty, ending in '/', longer than the file
 * system allows) failed only once the program had run, and its recording
 * was left in the spool.  The directory must be writable.
 */
static void check_output(const char *output)
{
	size_t len = strlen(output);
	if (!len)
		die("cannot write '': the output file name is empty (give one with -o FILE)");
	if (output[len - 1] == '/')
		die("cannot write '%s': a file name cannot end with '/' (give one with -o FILE)", output);
	/* the recording is a file, built beside its name and renamed there:
	 * "-" made a file named '-', /dev/stdout replaced the system's link
	 * (as root) with the data file */
	if (!strcmp(output, "-") || util_names_descriptor(output))
		die("cannot write '%s': record writes a file, not to a descriptor (give a file name with -o; "
		    "stint report -i FILE reads it)", output);
	const char *base = strrchr(output, '/');
	base = base ? base + 1 : output;
	struct stat st;
	if (stat(output, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			die("cannot write '%s': it is a directory", output);
		/* the data file is made beside it and renamed over it: a device
		 * (as root, /dev/null) would become a regular file */
		if (!S_ISREG(st.st_mode))
			die("cannot write '%s': it is not a regular file (give a file name for the recording)",
			    output);
	}
	char *copy = xstrdup(output);
	char *dir = dirname(copy);
	if (access(dir, W_OK) < 0)
		die("cannot write to '%s': %s", dir, strerror(errno));
	long name_max = pathconf(dir, _PC_NAME_MAX);
	if (name_max <= 0)
		name_max = NAME_MAX;
	if (strlen(base) > (size_t)name_max)
		die("cannot write '%s': its file name is %zu bytes long, and the file system of '%s' allows %ld",
		    output, strlen(base), dir, name_max);
	check_old_output(output);
	struct util_out probe;
	if (util_out_open(&probe, output) < 0)
		die("cannot write '%s': %s", output, strerror(errno));
	util_out_abort(&probe);
	free(copy);
}

/* The one line for a data file that could not be written (errno e) while
 * its recording is kept in the spool: the hint to wait for room only
 * where the disk was full. */
static __attribute__((noreturn)) void die_kept(const char *output, int e, const char *spool)
{
	if (e == ENOSPC || e == EDQUOT)
		die("cannot write '%s': %s; the raw recording is kept: once there is room, "
		    "'stint recover %s -o FILE' makes the data file of it", output, strerror(e), spool);
	die("cannot write '%s': %s; the raw recording is kept: 'stint recover %s -o FILE' makes the data "
	    "file of it", output, strerror(e), spool);
}

/* Say what rec_wait() left running (recorder.h: what is waited for), and
 * what stopped the wait: Ctrl-C, or the signal another process sent. */
static void warn_left_running(const char *prog, const struct rec_child *c)
{
	if (c->stopped_early) {
		int sig = REC_STOP_SIGNAL(c->stopped_early);
		const char *abbrev = sigabbrev_np(sig);
		char name[32];
		if (sig == SIGINT && (c->stopped_early & REC_STOP_TERMINAL))
			snprintf(name, sizeof(name), "Ctrl-C");
		else
			snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
		warn("stopped waiting at %s: processes of '%s' still run, unrecorded from now on; "
		     "what they recorded until now is kept", name, prog);
	} else if (c->detached)
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
	const char *foreign = rec_foreign_loader(path);
	if (foreign)
		return xasprintf("'%s' is %s: stint's runtime is a 64-bit library for glibc's dynamic linker, "
				 "which that program's cannot load; record it with -m sample", shown, foreign);
	return NULL;
}

/* One line for "nothing was recorded", with the likely reasons. */
/* The word "key=..." of the data file's notes, or NULL. */
static const char *notes_word(const char *notes, const char *key)
{
	size_t l = strlen(key);
	for (const char *w = notes; w && *w; w = strchr(w, ' '), w = w ? w + 1 : NULL)
		if (strncmp(w, key, l) == 0 && w[l] == '=')
			return w;
	return NULL;
}

/* The count "key=N" of the data file's notes, 0 when there is none. */
static unsigned long notes_count(const char *notes, const char *key)
{
	const char *w = notes_word(notes, key);
	return w ? strtoul(w + strlen(key) + 1, NULL, 10) : 0;
}

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
	/* these words replace their placeholders; the others stay (the
	 * spool's unrecorded=, rec_spool_read; the selection's) */
	for (const char *o = d->notes; o && *o; o += strcspn(o, " "), o += *o == ' ') {
		size_t l = strcspn(o, " ");
		if (!l || (l == 8 && strncmp(o, "libcalls", 8) == 0) || strncmp(o, "patched=", 8) == 0 ||
		    strncmp(o, "unpatched=", 10) == 0)
			continue;
		char *n = xasprintf("%s %.*s", s, (int)l, o);
		free(s);
		s = n;
	}
	free(d->notes);
	d->notes = s;
}

/*
 * Whether any process recorded a function of its own: a launcher that is
 * not instrumented (taskset, env, a shell) records no function but the
 * runtime's calibration yardstick (in libstint-rt.so).
 */
static int recorded_functions(const struct fmt_data *d)
{
	for (uint32_t i = 0; i < d->nprocs; i++) {
		const struct fmt_process *p = &d->procs[i];
		for (uint32_t k = 0; k < p->nsyms; k++) {
			uint32_t m = p->syms[k].module;
			const char *path = m < p->nmods ? p->mods[m].path : NULL;
			const char *base = path ? strrchr(path, '/') : NULL;
			if (!path || strcmp(base ? base + 1 : path, "libstint-rt.so") != 0)
				return 1;
		}
	}
	return 0;
}

/* The programs the recorded ones ran that load no runtime (set-user-ID,
 * statically linked), named in one line. */
/* Each name of STINT_PATCH_LIBS that no patched module of the notes'
 * patchmod= words matches (by the runtime's rule: the file name, or its
 * start up to a dot) is said: a misspelt name otherwise patches nothing in
 * silence. */
static void warn_patch_libs_unmatched(const char *notes)
{
	const char *list = getenv("STINT_PATCH_LIBS");
	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ",");
		int found = l == 0 || (l == 3 && strncmp(p, "all", 3) == 0);
		for (const char *w = notes; !found && w && (w = strstr(w, "patchmod=")); w += 9) {
			const char *base = w + 9;
			found = (w == notes || w[-1] == ' ') && strncmp(base, p, l) == 0 &&
				(base[l] == '.' || base[l] == ':');
		}
		if (!found)
			warn("STINT_PATCH_LIBS names '%.*s', but no library of that name was patched: the program loaded "
			     "none (a name is a library's file name or its start up to a dot, as libz for libz.so.1), "
			     "or it is one stint never patches (libc, ld.so, libpthread, libdl, librt, libgcc_s)",
			     (int)l, p);
		p += l + (p[l] == ',');
	}
}

static void warn_unrecorded_programs(const struct rec_session *rs)
{
	char *programs = rec_unrecorded_programs(rs->spool.dirfd);
	if (programs)
		warn("%s", programs);
	free(programs);
}

/*
 * Nothing recorded, because the disk had no room for it (a thread buffer
 * that could not start, or the session file): one line naming the
 * directory, and no data file of nothing passed off as a recording.  The
 * spool, which holds no event, goes.  Returns if the disk is not why.
 */
static void die_no_room(struct rec_session *rs)
{
	uint32_t threads = rec_spool_no_room(rs->spool.path);
	if (!threads && rs->save_errno != ENOSPC && rs->save_errno != EDQUOT)
		return;
	const char *slash = strrchr(rs->spool.shown, '/');
	char *dir = slash ? xstrndup(rs->spool.shown, slash == rs->spool.shown ? 1 : (size_t)(slash - rs->spool.shown))
			  : xstrdup(".");
	rec_session_end(rs);
	die("nothing was recorded: the disk holding '%s' has no room for the recording; free some space there, "
	    "or record with -o on another disk", dir);
}

static void explain_nothing(const char *prog, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		/* ld.so's own status: a library it could not find or load */
		warn("nothing was recorded: '%s' exited with status 127 before stint's runtime started (the "
		     "dynamic loader could not start it: its message is above)", prog);
		return;
	}
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
	d->command = join_args(argv, 1);
	d->clock = xstrdup("task-clock");
	d->os = xasprintf("libunwind, in-process sampler (%s)", why);
	d->rate = so->freq;
	d->notes = xasprintf("lost=0 stack=0 kernel=%d", so->kernel);
	if (rec_session_run(&rs, path, argv, err, sizeof(err)) < 0)
		die_not_run(err, &rs.child);
	const struct rec_child *child = &rs.child;
	if (rs.save_errno)
		warn("cannot save the session in '%s': %s", rs.spool.shown, strerror(rs.save_errno));
	uint64_t samples = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		samples += d->threads[i].nevents;
	for (uint32_t i = 0; i < d->nprocs; i++)
		if (d->procs[i].pid == (uint32_t)child->pid) {
			free(d->procs[i].command);
			d->procs[i].command = join_args(argv, 0);
			break;
		}
	output = keep_old_output(output);
	if (rec_session_write(&rs, output) < 0)
		die_kept(output, errno, rs.spool.shown);
	int code = program_exit(child);
	if (!quiet) {
		if (child->stopped_early || child->detached)
			warn_left_running(argv[0], child);
		if (!d->nprocs)
			explain_nothing(argv[0], child->status);
		if (WIFSIGNALED(child->status))
			warn("'%s' died of signal %d (%s); its samples are kept", argv[0],
			     WTERMSIG(child->status), strsignal(WTERMSIG(child->status)));
		warn("recorded %llu sample%s with the in-process sampler (%s) of %u process%s, %u thread%s into '%s'",
		     (unsigned long long)samples, samples == 1 ? "" : "s", why, d->nprocs, d->nprocs == 1 ? "" : "es", d->nthreads,
		     d->nthreads == 1 ? "" : "s", output);
		if (!samples && d->nprocs)
			warn("no sample: '%s' ran less CPU time than one sampling period (%.3g ms at -F %u); a "
			     "higher -F samples a shorter run", argv[0], so->freq ? 1e3 / (double)so->freq : 0.0,
			     (unsigned)so->freq);
		unsigned unsampled = (unsigned)notes_count(d->notes, "unsampled");
		if (unsampled)
			warn("%u thread%s could not be sampled (no CPU-time timer, or the sampler's signal was "
			     "blocked)", unsampled, unsampled == 1 ? "" : "s");
		warn_unrecorded_programs(&rs);
	}
	rec_session_end(&rs);
	free(path);
	free(lib);
	return code;
}

/* Where sampled stacks stopped at code without call-frame information,
 * for the notes ("libx264.so.164:260,libswscale.so.6:30", a module's
 * space, comma or colon written _) or for a message ("libx264.so.164 260,
 * libswscale.so.6 30"). */
static void no_cfi_where(const struct rec_sample_stats *st, char *buf, size_t len, int for_notes)
{
	char sep = for_notes ? ':' : ' ';
	size_t w = 0, nslots = sizeof(st->no_cfi_at) / sizeof(st->no_cfi_at[0]);
	buf[0] = 0;
	for (size_t k = 0; k < nslots && st->no_cfi_at[k].n && k < 4; k++) {
		char name[sizeof(st->no_cfi_at[k].module)];
		snprintf(name, sizeof(name), "%s", st->no_cfi_at[k].module);
		for (char *c = name; sep == ':' && *c; c++)
			if (*c == ' ' || *c == ',' || *c == ':')
				*c = '_';
		int n = snprintf(buf + w, len - w, "%s%s%c%llu", k ? (sep == ':' ? "," : ", ") : "", name, sep,
				 (unsigned long long)st->no_cfi_at[k].n);
		if (n < 0 || (size_t)n >= len - w) {
			buf[w] = 0;
			break;
		}
		w += (size_t)n;
	}
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
			die_not_run(err, &child);
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
			die_not_run(err, &child);
		rec_perf_run(perf, child.pid, &status, 0);
		rec_perf_left_running(perf, &child.stopped_early, &child.detached, &child.left_running);
	}
	uint64_t mono1 = util_mono_ns();
	struct fmt_data d;
	memset(&d, 0, sizeof(d));
	struct rec_sample_stats st = {0};
	d.command = attach ? xstrdup(at.command) : join_args(argv, 1);
	char *launched = attach ? NULL : join_args(argv, 0);
	rec_sample_build(rec_perf_records(perf), rec_perf_opts(perf), attach ? &at : NULL, rec_perf_titles(perf),
			 attach ? 0 : (uint32_t)child.pid, launched, &d, &st);
	free(launched);
	st.lost = rec_perf_lost(perf);
	d.method = xstrdup("sampling");
	rec_attach_free(&at);
	d.wall_start = wall0;
	d.duration_ns = mono1 - mono0;
	d.ns_per_tick = 1.0;
	d.clock = xstrdup(so->event ? so->event : "task-clock");
	d.os = xstrdup(rec_perf_opts(perf)->callgraph == REC_CG_DWARF ? "dwarf" : "fp");
	d.exit_status = attach ? 0 : (uint32_t)rec_exit_code(status);
	d.flags = attach ? FMT_SESS_ATTACHED : child.left_running ? FMT_SESS_LEFT_RUNNING : WIFSIGNALED(status) ? FMT_SESS_KILLED : 0;
	d.rate = so->freq;
	rec_sample_no_cfi_sort(&st);
	char where[sizeof(st.no_cfi_at)];
	no_cfi_where(&st, where, sizeof(where), 1);
	d.notes = xasprintf("lost=%llu cut=%llu stack=%u kernel=%d stackout=%llu nocfi=%llu%s%s compat32=%llu "
			    "nofile=%llu toodeep=%llu",
			    (unsigned long long)st.lost, (unsigned long long)st.unwind_fail,
			    rec_perf_opts(perf)->stack_size, so->kernel, (unsigned long long)st.stack_out,
			    (unsigned long long)st.no_cfi, *where ? " nocfiat=" : "", where,
			    (unsigned long long)st.compat32, (unsigned long long)st.no_file,
			    (unsigned long long)st.too_deep);
	unsigned stack_size = rec_perf_opts(perf)->stack_size;
	rec_perf_close(perf);
	output = keep_old_output(output);
	if (fmt_write(&d, output) < 0)
		die("cannot write '%s': %s", output, strerror(errno));
	child.status = status;
	int code = attach ? 0 : program_exit(&child);
	if (!quiet) {
		if (!attach && (child.stopped_early || child.detached))
			warn_left_running(argv[0], &child);
		if (!attach && WIFSIGNALED(status))
			warn("'%s' died of signal %d (%s); its samples are kept", argv[0], WTERMSIG(status),
			     strsignal(WTERMSIG(status)));
		warn("recorded %llu sample%s (%llu lost, %llu stacks cut short) of %u process%s, "
		     "%u thread%s into '%s'",
		     (unsigned long long)st.samples, st.samples == 1 ? "" : "s", (unsigned long long)st.lost,
		     (unsigned long long)st.unwind_fail, d.nprocs, d.nprocs == 1 ? "" : "es",
		     d.nthreads, d.nthreads == 1 ? "" : "s", output);
		if (!st.samples && !st.lost && !attach && !child.stopped_early)
			warn("no sample: '%s' ran less CPU time than one sampling period (%.3g ms at -F %u); a "
			     "higher -F samples a shorter run", argv[0], d.rate ? 1e3 / (double)d.rate : 0.0,
			     (unsigned)d.rate);
		if (st.stack_out)
			warn("%llu of the stacks were cut short because the %u-byte copy of the user stack ran "
			     "out: raise --stack-size (at most 65000)",
			     (unsigned long long)st.stack_out, stack_size);
		if (st.too_deep)
			warn("%llu of the stacks were deeper than the %s frames kept: their outermost frames are "
			     "cut%s", (unsigned long long)st.too_deep,
			     so->callgraph == REC_CG_FP ? "kernel's" : "4096",
			     so->callgraph == REC_CG_FP ? " (sysctl kernel.perf_event_max_stack raises the limit; "
							  "--call-graph dwarf keeps up to 4096)" : "");
		if (st.no_file)
			warn("%llu of the stacks stop in programs or libraries whose file was removed before stint "
			     "read it (a program deleted once it ran): not unwound further, and their addresses "
			     "not named", (unsigned long long)st.no_file);
		if (st.compat32)
			warn("%llu of the stacks are of 32-bit programs, which stint does not unwind: only the "
			     "function on top of each is known", (unsigned long long)st.compat32);
		if (st.no_cfi) {
			no_cfi_where(&st, where, sizeof(where), 0);
			warn("%llu of the stacks stop at code without unwind information (hand-written assembly, "
			     "or code generated at run time), where no unwinder can find the caller%s%s",
			     (unsigned long long)st.no_cfi, *where ? ": " : "", where);
		}
	}
	fmt_data_free(&d);
	free(tids);
	free(path);
	return code;
}

/*
 * -m instrument -p PID: attach to a running program built with
 * -finstrument-functions (recorder/rec_inject.c, runtime/rt_attach.c),
 * record for SECS (or until Ctrl-C, or its end), detach.
 */
static volatile sig_atomic_t attach_stop;

static void attach_on_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

static int process_alive(pid_t pid)
{
	char path[64], *st;
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	st = util_read_file(path, &len);
	const char *p = st ? strrchr(st, ')') : NULL;
	int alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	free(st);
	return alive;
}

static int record_attach(pid_t pid, double duration, const char *output, const char *os, int use_tsc,
			 int quiet)
{
	char err[1024];
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!process_alive(pid))
		die("no process %d to attach to", (int)pid);
	char *lib = find_runtime("libstint-rt-attach.so");
	if (!lib)
		die("cannot find the runtime library libstint-rt-attach.so next to '%s'", util_self_dir());
	check_output(output);
	char *outcopy = xstrdup(output);
	struct rec_spool sp;
	if (rec_spool_create(&sp, dirname(outcopy), err, sizeof(err)) < 0)
		die("%s", err);
	struct fmt_data d;
	memset(&d, 0, sizeof(d));
	char *cmdpath = xasprintf("/proc/%d/cmdline", (int)pid);
	size_t clen = 0;
	char *cmd = util_read_file(cmdpath, &clen);
	if (cmd)
		util_args_joined(cmd, clen);
	d.command = cmd && *cmd ? cmd : xasprintf("process %d", (int)pid);
	if (!cmd || !*cmd)
		free(cmd);
	free(cmdpath);
	d.wall_start = util_wall_ns();
	d.clock = xstrdup(use_tsc ? "tsc" : "monotonic");
	d.notes = xstrdup("attached");
	d.os = xstrdup("");
	uint64_t tsc0 = arch_cycles(), ns0 = util_mono_ns();
	if (use_tsc) {
		struct timespec five = {0, 5000000};
		nanosleep(&five, NULL);
		d.ns_per_tick = arch_cycles_ns_per_tick(tsc0, ns0, arch_cycles(), util_mono_ns());
	} else {
		d.ns_per_tick = 1.0;
	}
	if (rec_session_save(sp.path, &d, "instrument", os, 0) < 0) {
		int e = errno;
		rec_spool_remove(&sp);
		die("cannot write to '%s': %s", sp.shown, strerror(e));
	}
	/* what the preloaded runtime reads from its environment */
	size_t slen;
	char *self = util_read_file("/proc/self/stat", &slen);
	const char *p = self ? strrchr(self, ')') : NULL;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	struct stat ns;
	char *recorder = p && stat("/proc/self/ns/pid", &ns) == 0
				 ? xasprintf("STINT_RECORDER=%d:%llu:%llu\n", (int)getpid(), strtoull(p + 1, NULL, 10),
					     (unsigned long long)ns.st_ino)
				 : xstrdup("");
	char *settings = xasprintf("STINT_SPOOL=%s\nSTINT_OS=%s\nSTINT_CLOCK=%s\nSTINT_PLT=0\n%s", sp.child_path, os,
				   use_tsc ? "tsc" : "monotonic", recorder);
	free(recorder);
	free(self);
	struct rec_inject in;
	uint64_t mono0 = util_mono_ns();
	if (rec_inject_attach(&in, pid, lib, sp.path, settings, err, sizeof(err)) < 0) {
		rec_spool_remove(&sp);
		die("%s", err);
	}
	/* every signal that would end stint detaches first (a hangup, the
	 * program's group signalled): the process never keeps stint's runtime */
	struct sigaction *old_sigs = xcalloc((size_t)SIGRTMAX + 1, sizeof(*old_sigs));
	rec_attached_signals(attach_on_signal, old_sigs);
	if (!quiet)
		warn("recording process %d%s", (int)pid, duration > 0 ? "" : " until Ctrl-C");
	uint64_t last_tick = mono0;
	int gone = 0;
	while (!attach_stop && !(gone = !process_alive(pid)) &&
	       !(duration > 0 && (double)(util_mono_ns() - mono0) >= duration * 1e9)) {
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
		if (util_mono_ns() - last_tick > 1000000000ull) {
			/* the clock factor and duration so far, for `stint recover` */
			uint64_t tsc1 = arch_cycles(), ns1 = util_mono_ns();
			d.duration_ns = ns1 - mono0;
			if (use_tsc)
				d.ns_per_tick = arch_cycles_ns_per_tick(tsc0, ns0, tsc1, ns1);
			rec_session_save(sp.path, &d, "instrument", os, 0);
			last_tick = util_mono_ns();
		}
	}
	if (!gone && rec_inject_detach(&in, lib, err, sizeof(err)) < 0)
		warn("%s", err);
	rec_inject_free(&in);
	rec_attached_signals_end(old_sigs);
	free(old_sigs);
	uint64_t tsc1 = arch_cycles(), ns1 = util_mono_ns();
	d.duration_ns = ns1 - mono0;
	d.ns_per_tick = use_tsc ? arch_cycles_ns_per_tick(tsc0, ns0, tsc1, ns1) : 1.0;
	d.flags = FMT_SESS_ATTACHED;
	if (rec_session_save(sp.path, &d, "instrument", os, 1) < 0)
		warn("cannot save the session in '%s': %s", sp.shown, strerror(errno));
	fmt_data_free(&d);
	if (rec_session_convert(sp.path, sp.shown, &d, NULL, err, sizeof(err)) < 0)
		die("%s (the raw recording is kept in '%s')", err, sp.shown);
	d.flags |= FMT_SESS_ATTACHED;
	/* (never in place: a thread of the process may still hold its buffer) */
	output = keep_old_output(output);
	if (fmt_write(&d, output) < 0)
		die_kept(output, errno, sp.shown);
	rec_spool_remove(&sp);
	if (!quiet)
		warn("recorded process %d for %.1f s%s: %u process%s, %u thread%s into '%s'", (int)pid,
		     (double)(ns1 - mono0) / 1e9, gone ? " (it ended)" : ", then detached", d.nprocs,
		     d.nprocs == 1 ? "" : "es", d.nthreads, d.nthreads == 1 ? "" : "s", output);
	fmt_data_free(&d);
	free(settings);
	free(outcopy);
	free(lib);
	return 0;
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
 * Record-time selection (runtime/rt_select.c): what the options asked, as
 * STINT_SELECT for the runtime and as the words shown by `stint report`.
 */
struct record_select {
	char *env;      /* STINT_SELECT's value, one item a line, without the ticks */
	char *shown;    /* "--function 'parse_*' --depth 3" */
	uint64_t min_ns;
	unsigned depth;
};

static void select_add(struct record_select *s, char kind, const char *opt, const char *val)
{
	if (!*val || strchr(val, '\n'))
		die("record: %s wants a non-empty pattern of one line", opt);
	char *e = xasprintf("%s%c%s\n", s->env ? s->env : "", kind, val);
	free(s->env);
	s->env = e;
	util_add_word(&s->shown, "%s '%s'", opt, val);
}

/* "10us", "1.5ms", "2s", "500ns": nanoseconds, or dies */
static uint64_t parse_duration(const char *opt, const char *v)
{
	char *end;
	double x = strtod(v, &end);
	double unit = strcmp(end, "ns") == 0 ? 1 : strcmp(end, "us") == 0 ? 1e3 : strcmp(end, "ms") == 0 ? 1e6
		      : strcmp(end, "s") == 0 ? 1e9 : 0;
	if (end == v || unit == 0 || !(x > 0) || x * unit > 1e15)
		die("record: %s wants a time with its unit, such as 10us, 1ms, 500ns or 2s (not '%s')", opt, v);
	return (uint64_t)(x * unit + 0.5);
}

/* The selection as a word of the data file's notes: "select=" and the
 * shown text with spaces, commas and '%' written %XX (notes are words). */
static char *select_note(const struct record_select *s)
{
	char *o = xmalloc(strlen(s->shown) * 3 + 8), *w = o;
	w += sprintf(w, "select=");
	for (const unsigned char *c = (const unsigned char *)s->shown; *c; c++)
		if (*c <= ' ' || *c == ',' || *c == '%' || *c >= 0x7f)
			w += sprintf(w, "%%%02X", *c);
		else
			*w++ = (char)*c;
	*w = 0;
	return o;
}

/* notes with the selection word last (replacing one the session file cut short) */
static void notes_with_select(struct fmt_data *d, const char *word)
{
	char *n = d->notes ? d->notes : xstrdup("");
	char *old = strstr(n, "select=");
	if (old && (old == n || old[-1] == ' ')) {
		/* only that word: the notes added after it (patchmod=) stay */
		char *end = strchrnul(old, ' ');
		if (*end)
			memmove(old, end + 1, strlen(end + 1) + 1);
		else
			*(old == n ? old : old - 1) = 0;
	}
	d->notes = n;
	util_add_word(&d->notes, "%s", word);
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
		{"function", required_argument, NULL, 9},  {"not-function", required_argument, NULL, 10},
		{"module", required_argument, NULL, 11},   {"depth", required_argument, NULL, 12},
		{"min-duration", required_argument, NULL, 13}, {"no-cache", no_argument, NULL, 14},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	struct record_select sel = {0};
	const char *select_only = NULL; /* the first option only instrumentation takes */
	struct rec_perf_opts so = {.freq = 1000, .stack_size = 16384};
	const char *sampler = "auto";
	pid_t attach = 0;
	double duration = 0;
	const char *method = "instrument", *output = "stint.data", *os = "perf", *clock = NULL;
	int plt = 1, quiet = 0, force = 0, cache = 1, c;
	const char *sample_only = NULL; /* the first option that only sampling takes */
	optind = 1;
	while ((c = getopt_long(argc, argv, "+m:o:qhfgF:e:p:", longopts, NULL)) != -1) {
		if (!sample_only && c != 'p' && c != 4) /* (-p, --duration: instrumentation attaches too) */
			sample_only = sampling_option_name(c);
		switch (c) {
		case 'f': force = 1; break;
		case 'g': so.callgraph = REC_CG_DWARF; break; /* perf's -g: record call graphs */
		case 'm': method = optarg; break;
		case 'o': output = optarg; break;
		case 'q': quiet = 1; break;
		case 1: os = optarg; break;
		case 2: plt = 0; break;
		case 14: cache = 0; break;
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
		case 9: select_add(&sel, 'f', "--function", optarg); select_only = "--function"; break;
		case 10: select_add(&sel, 'n', "--not-function", optarg); select_only = "--not-function"; break;
		case 11: select_add(&sel, 'm', "--module", optarg); select_only = "--module"; break;
		case 12: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (end == optarg || *end || n < 1 || n > 1000000)
				die("record: --depth wants a number of frames from 1, not '%s'", optarg);
			if (sel.depth)
				die("record: --depth is given twice");
			sel.depth = (unsigned)n;
			util_add_word(&sel.shown, "--depth %ld", n);
			select_only = "--depth";
			break;
		}
		case 13: {
			if (sel.min_ns)
				die("record: --min-duration is given twice");
			sel.min_ns = parse_duration("--min-duration", optarg);
			util_add_word(&sel.shown, "--min-duration %s", optarg);
			select_only = "--min-duration";
			break;
		}
		case 'h': fputs(record_usage, stdout); return 0;
		default: cmd_bad_option("record", argv, "+m:o:qhfgF:e:p:", longopts);
		}
	}
	int sampling = strcmp(method, "sample") == 0 || strcmp(method, "sampling") == 0;
	if (!sampling && sample_only)
		die("record: %s is an option of sampling (-m sample); instrumentation records every call",
		    sample_only);
	if (sampling && select_only)
		die("record: %s selects what instrumentation records; sampling records every function "
		    "(select at report time: stint report --function, --module)", select_only);
	if (duration != 0 && !attach)
		die("record: --duration goes with -p PID; to stop a program you start, press Ctrl-C");
	check_file_limit();
	rec_raise_fd_limit();
	record_force = force;
	if (sampling)
		return record_sample(argc - optind, argv + optind, output, &so, attach, duration, quiet,
				     sampler);
	if (optind >= argc && !attach) {
		die("record: no program given (stint record --help)");
	}
	if (strcmp(method, "instrument") != 0 && strcmp(method, "instrumentation") != 0)
		die("record: unknown method '%s' (instrument or sample)", method);
	if (strcmp(os, "perf") && strcmp(os, "rusage") && strcmp(os, "off"))
		die("record: unknown --os-events mode '%s' (perf, rusage or off)", os);
	if (clock && strcmp(clock, "tsc") && strcmp(clock, "monotonic"))
		die("record: unknown clock '%s' (tsc or monotonic)", clock);
	int use_tsc = clock ? strcmp(clock, "tsc") == 0 : rec_tsc_usable();
	if (attach) {
		if (optind < argc)
			die("record: give either -p PID or a program, not both");
		if (select_only)
			die("record: %s cannot be used with -p: attaching records every function", select_only);
		return record_attach(attach, duration, output, os, use_tsc, quiet);
	}

	char **pargv = argv + optind;
	char *path = rec_find_program(pargv[0]);
	if (!path)
		die_no_program(pargv[0]);
	int inst = rec_is_instrumented(path);
	struct rec_patch_info pinfo;
	memset(&pinfo, 0, sizeof(pinfo));
	/* PROGRAM has nothing to probe: a launcher (taskset, env, a shell
	 * script) is followed into what it runs, the runtime staying in the
	 * environment and across exec; refused only if nothing instrumented
	 * ever ran (nothing_instrumented) */
	int launcher = inst < 0;
	if (inst == 0) {
		/* not built for instrumentation: patch sites the compiler left? */
		rec_patch_scan(path, &pinfo);
		/* none: the runtime moves its functions' first instructions
		 * (Capstone), if it can here */
		const char *nocs = pinfo.patched ? NULL : rec_patch_capstone_missing();
		if (nocs && pinfo.mcount)
			die("'%s' was built with -pg without -mfentry: its mcount calls come after the "
			    "prologue and cannot be used, and %s; rebuild it with 'gcc -pg -mfentry', "
			    "'-fpatchable-function-entry=5' or '-finstrument-functions', or use -m sample",
			    pargv[0], nocs);
		/* none, and no Capstone either: a launcher (taskset, env) is
		 * followed into what it runs; refused at the end if nothing it
		 * ran recorded a function */
		if (!pinfo.patched) {
			launcher = 1;
			rec_patch_free(&pinfo); /* the runtime tells what it patched */
			memset(&pinfo, 0, sizeof(pinfo));
		}
	}
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
	if (cache)
		rec_session_cache(&rs);
	/* no LD_BIND_NOW: the runtime binds the entries it probes itself, and
	 * the program (and all it starts) keeps its own binding */
	rec_session_setenv(&rs, FMT_ENV_PLT, "%d", plt);
	rs.os_wanted = os;
	rs.use_tsc = use_tsc;
	struct fmt_data *d = &rs.d;
	d->command = join_args(pargv, 1);
	d->clock = xstrdup(use_tsc ? "tsc" : "monotonic");
	/* the session file's notes are read back 255 bytes at most: the list
	 * of functions left out goes only into the data file, below */
	d->notes = pinfo.functions ? xasprintf("%spatched=%zu/%zu", plt ? "libcalls " : "", pinfo.patched,
					       pinfo.functions)
				   : xstrdup(plt ? "libcalls" : "");
	d->os = xstrdup("");
	char *sel_word = sel.shown ? select_note(&sel) : NULL;
	if (sel_word) {
		notes_with_select(d, sel_word);
		uint64_t ticks = sel.min_ns;
		if (use_tsc && sel.min_ns) {
			/* the minimum in the clock's ticks, by a factor measured
			 * over 5 ms now (the report's is refined over the run) */
			uint64_t tsc0 = arch_cycles(), ns0 = util_mono_ns();
			struct timespec five = {0, 5000000};
			nanosleep(&five, NULL);
			double f = arch_cycles_ns_per_tick(tsc0, ns0, arch_cycles(), util_mono_ns());
			ticks = (uint64_t)((double)sel.min_ns / f + 0.5);
		}
		rec_session_setenv(&rs, FMT_ENV_SELECT, "%sd%u\nt%llu\n", sel.env ? sel.env : "", sel.depth,
				   (unsigned long long)(sel.min_ns ? (ticks ? ticks : 1) : 0));
	}
	if (rec_session_run(&rs, path, pargv, err, sizeof(err)) < 0)
		die_not_run(err, &rs.child);
	const struct rec_child *child = &rs.child;
	uint64_t bytes = 0;
	for (uint32_t i = 0; i < d->nthreads; i++)
		bytes += d->threads[i].ev_len;
	if (!bytes)
		die_no_room(&rs);
	if (rs.save_errno)
		warn("cannot save the session in '%s': %s", rs.spool.shown, strerror(rs.save_errno));
	if (launcher && d->nprocs && !recorded_functions(d) && WIFSIGNALED(child->status)) {
		/* a crash before any call was recorded is no missing build option */
		rec_session_end(&rs);
		warn("'%s' died of signal %d (%s) before any call of it was recorded", pargv[0],
		     WTERMSIG(child->status), strsignal(WTERMSIG(child->status)));
		cmd_exit(cmd_program_exit_code(child->status));
	}
	if (launcher && d->nprocs && !recorded_functions(d) && sel_word) {
		/* patched at load, with the selection's functions only: none */
		char *pn = rec_patch_notes(rs.spool.path);
		if (pn && strstr(pn, "patchmod=")) {
			rec_session_end(&rs);
			die("the selection (%s) matched no function '%s' called: nothing was recorded (stint "
			    "record without it, then stint report, lists them)", sel.shown, pargv[0]);
		}
		free(pn);
	}
	if (launcher && d->nprocs && !recorded_functions(d)) {
		const char *nocs = rec_patch_capstone_missing();
		rec_session_end(&rs);
		die("%s built with -finstrument-functions%s%s: rebuild %s with 'gcc -g -finstrument-functions ...' "
		    "(no other change; '-pg -mfentry' or '-fpatchable-function-entry=5' work too), or use -m sample",
		    inst < 0 ? xasprintf("'%s' is no ELF program and ran none", pargv[0])
			     : xasprintf("neither '%s' nor any program it ran was", pargv[0]),
		    nocs ? ", and " : "", nocs ? nocs : "", inst < 0 ? "the programs it runs" : "it");
	}
	if (pinfo.functions)
		patch_notes(d, &pinfo, plt);
	char *pn = rec_patch_notes(rs.spool.path); /* modules patched at load (Capstone) */
	if (pn) {
		util_add_word(&d->notes, "%s", pn);
		free(pn);
	}
	if (sel_word)
		notes_with_select(d, sel_word);
	/* library calls through a register, left alone: said, and counted for the report */
	unsigned nunprobed = 0;
	char *unprobed = rec_unprobed_calls(rs.spool.dirfd, &nunprobed);
	if (nunprobed)
		util_add_word(&d->notes, "unprobed=%u", nunprobed);
	output = keep_old_output(output);
	if (rec_session_write(&rs, output) < 0)
		die_kept(output, errno, rs.spool.shown);
	int code = program_exit(child);
	if (unprobed && !quiet)
		warn("%s", unprobed);
	free(unprobed);
	if (!quiet) {
		if (sel_word && d->nprocs && !recorded_functions(d))
			warn("the selection (%s) matched no function '%s' called: no call was recorded (stint "
			     "record without it, then stint report, lists them)", sel.shown, pargv[0]);
		if (child->stopped_early || child->detached)
			warn_left_running(pargv[0], child);
		if (!d->nprocs)
			explain_nothing(pargv[0], child->status);
		if (WIFSIGNALED(child->status))
			warn("'%s' died of signal %d (%s); what it recorded is kept", pargv[0],
			     WTERMSIG(child->status), strsignal(WTERMSIG(child->status)));
		warn_threads_stopped(d);
		warn("recorded %u process%s, %u thread%s, %.1f MB of events into '%s'", d->nprocs,
		     d->nprocs == 1 ? "" : "es", d->nthreads, d->nthreads == 1 ? "" : "s",
		     (double)bytes / 1e6, output);
		warn_unrecorded_programs(&rs);
		if (d->nprocs)
			warn_patch_libs_unmatched(d->notes);
		unsigned long unrecorded = notes_count(d->notes, "unrecorded");
		unsigned long procs = notes_count(d->notes, "unrecorded_procs");
		if (unrecorded)
			warn("%lu more thread%s not recorded: %s started when the program could no longer reach "
			     "stint's spool (no file descriptor free, the rights to it given up or a chroot, system calls "
			     "restricted, or a file size limit too small), or on a thread's thread-local storage (clone "
			     "with CLONE_VM)",
			     unrecorded, unrecorded == 1 ? " was" : "s were", unrecorded == 1 ? "it" : "they");
		if (procs)
			warn("%lu more process%s not recorded: %s started when the program could no longer reach "
			     "stint's spool (the rights to it given up or a chroot, system calls restricted, a "
			     "file size limit too small, or its time-stamp counter turned off)",
			     procs, procs == 1 ? " was" : "es were", procs == 1 ? "it" : "they");
	}
	rec_session_end(&rs);
	rec_patch_free(&pinfo);
	free(sel_word);
	free(sel.env);
	free(sel.shown);
	free(rt);
	free(path);
	return code;
}
