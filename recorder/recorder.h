/*
 * recorder.h - launching and watching the profiled program, and turning
 * what it left behind into a data file.
 */
#ifndef STINT_RECORDER_H
#define STINT_RECORDER_H

#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include "../format/format.h"

struct sym_proc;

/* Where a program name resolves (PATH search as execvp does); NULL if none. */
char *rec_find_program(const char *name);
/* Why rec_find_program found nothing for name, one sentence into msg: not
 * there, a directory, not executable. */
int rec_program_missing(const char *name, char *msg, size_t len);

/* stint's own soft limit of open files raised to the hard one (a recording
 * of many threads reads many buffers); the program started by rec_spawn
 * gets the limit it was given. */
void rec_raise_fd_limit(void);

/* Whether the ELF file at path names symbol name (imported: only as an
 * undefined symbol of its dynamic table; else in either symbol table):
 * 1 yes, 0 no, -1 not an ELF file. */
int rec_elf_names(const char *path, const char *name, int imported);
/* Whether the ELF file at path imports __cyg_profile_func_enter: 1 yes,
 * 0 no, -1 not an ELF file. */
int rec_is_instrumented(const char *path);

/* What the runtime can instrument at load in a program built without
 * -finstrument-functions (rec_patch.c): its functions with a patch site. */
struct rec_patch_info {
	size_t functions;  /* defined functions (one per address) */
	size_t patched;    /* of them, with a patch site */
	char **missing;    /* names of the others */
	size_t nmissing;
	int fentry;        /* calls __fentry__ (-pg -mfentry) */
	int patchable;     /* lists NOP sites (-fpatchable-function-entry, __mcount_loc) */
	int mcount;        /* calls mcount after the prologue (-pg alone) */
};
int rec_patch_scan(const char *path, struct rec_patch_info *out);
void rec_patch_free(struct rec_patch_info *p);
/* Why functions without a patch site cannot be instrumented here (no
 * Capstone in this build or on this system): a sentence, or NULL. */
const char *rec_patch_capstone_missing(void);
/* The notes for the modules the runtime patched at load, from its
 * "<key>.patch.<n>" files in the spool dir: "patchmod=MOD:N/M ..." and
 * "patchwhy=NAME:REASON:MOD,...", or NULL when there are none. */
char *rec_patch_notes(const char *dir);

/* Whether the ELF executable at path has no program interpreter (a static
 * program, which LD_PRELOAD cannot reach): 1 yes, 0 no, -1 not ELF. */
int rec_is_static(const char *path);
/* Why path, a dynamically linked program, cannot load stint's runtime (a
 * 64-bit glibc library): "a 32-bit program", "loaded by another C
 * library's dynamic linker" (musl's), or NULL. */
const char *rec_foreign_loader(const char *path);

struct rec_child {
	pid_t pid;
	int hold;              /* in: the program waits for rec_release() */
	int go_fd;             /* write end of the pipe it waits on */
	int err_fd;            /* where exec failures are reported */
	int status;            /* wait status of the program */
	uint64_t wall_start;   /* ns since the epoch */
	uint64_t mono_start, mono_end;
	int stopped_early;     /* rec_wait() was stopped by Ctrl-C/SIGTERM while
				* processes of the program still ran: the
				* signal, REC_STOP_TERMINAL added when the
				* terminal sent it (0: not stopped) */
	int detached;          /* processes that left the program's session
				* (daemons), still running, not waited for */
	int left_running;      /* stopped waiting before the program ended:
				* status is stint's 128+signal, not the program's */
	int exec_errno;        /* why the program could not be run (rec_spawn_finish), 0 */
};

#define REC_STOP_TERMINAL 0x100
#define REC_STOP_SIGNAL(stopped_early) ((stopped_early) & 0xff)

/*
 * Start path with argv and the environment plus env_add ("NAME=value"
 * entries; LD_PRELOAD is prepended to an existing one).  From here on
 * stint dies of no signal whose default action would end it (but the
 * faults of its own code): one another process sends to stint is passed
 * on to the program, one the program's process group got as well (the
 * terminal's Ctrl-C, the program's kill(0, ...)) is not.  Signals stint
 * was started with ignored stay ignored, for stint and the program; the
 * program gets every other one's default action.  Fails with a message in
 * err when the program cannot be executed.
 */
int rec_spawn(const char *path, char *const argv[], char *const env_add[], struct rec_child *c,
	      char *err, size_t errlen);

/* Let a program started with hold set go on to exec. */
void rec_release(struct rec_child *c);

/* After rec_release(): whether the exec worked (as rec_spawn says). */
int rec_spawn_finish(struct rec_child *c, pid_t pid, int errfd, const char *path, char *err,
		     size_t errlen);

/*
 * Wait for the program, then for the processes it left running in its
 * session (stint is their subreaper, so forked children finish writing),
 * but not for those that detached with setsid() (daemons: counted in
 * c->detached).  Ctrl-C/SIGTERM go to the program as rec_spawn() says; a
 * second one while the program runs, or one once it ended, stops the wait
 * (c->stopped_early; the status is then 128+that signal if the program
 * still ran).  With an instrumentation spool, page in its buffers' next chunks
 * meanwhile; tick(arg), if given, runs about once a second.
 */
void rec_wait(struct rec_child *c, const char *spool, void (*tick)(void *), void *arg);

/*
 * While attached to a running process (record -p): every signal that would
 * end stint (not its own faults) calls stop(sig) instead, so that it always
 * detaches from the process and writes what it recorded; its own SIGPIPE
 * and SIGXFSZ (a closed stderr, a file size limit) are ignored, and a
 * signal ignored at start stays ignored.  old: room for SIGRTMAX + 1
 * actions, put back by rec_attached_signals_end.
 */
void rec_attached_signals(void (*stop)(int), struct sigaction *old);
void rec_attached_signals_end(const struct sigaction *old);

/*
 * The policy of rec_wait() for other waiting loops (the perf sampler's):
 * whether to stop waiting, given whether the program (main_pid) ended.
 * Sets *stopped_early (Ctrl-C/SIGTERM) or *detached (daemons left) as
 * rec_wait() does; call it every few milliseconds.
 */
int rec_stop_waiting(pid_t main_pid, int main_done, int *stopped_early, int *detached);

/* Exit status that `stint record` passes on: the code, or 128+signal. */
int rec_exit_code(int status);

/* Whether the cycle counter can be the probes' clock (arch_cycles_invariant;
 * its ns per tick: arch_cycles_ns_per_tick). */
int rec_tsc_usable(void);

/*
 * Read the instrumentation spool dir (fmt_spool.h) into d: processes,
 * threads, events and symbols.  Returns 0, or -1 with err set.
 */
int rec_spool_read(const char *dir, struct fmt_data *d, char *err, size_t errlen);

/*
 * What `stint recover` must not lose.  rec_spool_inplace_file: the path of
 * a thread buffer of dir that `stint record` had already made the whole
 * data file, in place, when naming it failed (the output's directory gone
 * or replaced), or NULL.  rec_spool_unread: the thread buffers of dir that
 * hold events (bytes past the header area) and are none of d's threads:
 * how many, the first one's name into first.
 */
char *rec_spool_inplace_file(const char *dir);
/* The thread buffers of dir that stopped, or could not start, for want of
 * room on the disk. */
uint32_t rec_spool_no_room(const char *dir);
uint32_t rec_spool_unread(const char *dir, const struct fmt_data *d, char *first, size_t n);

/* The OS-event detector as the report names it, from the one asked for. */
const char *rec_describe_os(const struct fmt_data *d, const char *wanted);

/*
 * Save the session's facts in the spool (kind: "instrument" or "inproc"),
 * so that rec_session_convert() can rebuild the data set from the spool alone
 * (`stint recover`, after a conversion failed for want of disk space, or
 * after stint itself was killed): once before the program starts, again
 * while it runs (the clock factor and duration so far), and with finished
 * set at the end.
 */
int rec_session_save(const char *dir, const struct fmt_data *d, const char *kind, const char *os_wanted,
		     int finished);

/* The first line of a session file: what makes a directory a spool. */
#define REC_SESSION_MAGIC "stint-spool 1"

/*
 * Read a spool with its session file into d (shown: the spool's name for
 * messages); *finished, if given, says whether the recorder finished (else
 * it was killed while the program ran: the session holds what it knew
 * then).  0, or -1 with err set.
 */
int rec_session_convert(const char *dir, const char *shown, struct fmt_data *d, int *finished, char *err,
			size_t errlen);

/* The value of "name value" line name of a spool's text file, into out; NULL if none. */
const char *rec_info_get(const char *info, const char *name, char *out, size_t n);

/*
 * Symbolization of a process described by its maps text: the modules
 * (with build-ids) copied into p, p->exe set if it is empty; the caller
 * looks addresses up in the result and closes it.  Dies when out of memory.
 */
struct sym_proc *rec_open_process(struct fmt_process *p, const char *maps, size_t len);

/*
 * The spool directory, held by descriptor.  `stint record` makes it beside
 * the output under an unpredictable name (".stint-spool-" and random
 * letters), mode 0700, checks that what it opened is the directory it made
 * and is its own, and from then on reaches it only through its descriptor:
 * as "/proc/self/fd/N" itself, and the program's runtime as
 * "/proc/<stint's pid>/fd/N".  Both name the directory, not a path to it:
 * someone who can write the output directory may rename the spool and put a
 * symbolic link in its place, and nothing of stint's or of the program's
 * follows it.  (That path is absolute and short, so a program that changes
 * its directory keeps recording, and a long output path does not matter.)
 */
struct rec_spool {
	int dirfd;        /* the spool directory */
	int parentfd;     /* the directory that holds it */
	char *name;       /* its name there */
	char *path;       /* "/proc/self/fd/N": how stint reaches it */
	char *child_path; /* "/proc/<pid>/fd/N": how the program's runtime does */
	char *shown;      /* where it is, for messages (absolute) */
};

/* Make a new spool directory in dir; 0, or -1 with err set. */
int rec_spool_create(struct rec_spool *s, const char *dir, char *err, size_t errlen);

/*
 * Open the spool a user names (`stint recover`): a directory (not a link
 * to one) of the user's own that no one else can write, holding a session
 * file with the spool's magic line; 0, or -1 with err set.
 */
int rec_spool_open(struct rec_spool *s, const char *dir, char *err, size_t errlen);

/*
 * Remove the spool: only the files whose names the runtime and stint give
 * (every other file stays, and then the directory), each unlinked by name
 * in the directory held open, so no link is followed; then the directory
 * itself if it is still the one held.  Closes s.
 */
void rec_spool_remove(struct rec_spool *s);

/* Close s, leaving the spool on disk. */
void rec_spool_close(struct rec_spool *s);

/*
 * One process of a spool (fmt_spool.h): its key ("p<pid>-<start>"), and
 * the names of its files that end in a suffix, in directory order.
 */
struct rec_spool_key {
	char key[64];
	uint64_t order;   /* the start after '-': orders the processes */
	int has_info;     /* <key>.info is there */
	char **files;
	uint32_t nfiles;
};

/* The processes of spool dir, in start order, each with its files ending in
 * suffix (".buf": the runtime's thread buffers, FMT_SMP_SUFFIX: the
 * sampler's); 0, or -1 with err set.  Free with rec_spool_keys_free(). */
int rec_spool_scan(const char *dir, const char *suffix, struct rec_spool_key **keys, uint32_t *n, char *err,
		   size_t errlen);
void rec_spool_keys_free(struct rec_spool_key *keys, uint32_t n);

/*
 * Attaching instrumentation to a running process (rec_inject.c): every
 * thread stopped with ptrace, the frames each has open written to
 * spool/attach.frames, lib (libstint-rt-attach.so) loaded into the process
 * and started with settings ("STINT_X=value" lines), the process let go.
 * 0, or -1 with err set (one line; the process left as it was).
 */
struct rec_inject {
	pid_t pid;
	pid_t *tids;          /* the threads stopped */
	int *sigs;            /* a signal of each, to deliver when let go */
	int ntids, cap;
	uint64_t a_dlopen, a_dlsym, a_dlclose, a_mmap, a_munmap; /* in the target */
	uint64_t scratch, scratch_len; /* a page of the target's for strings */
	uint64_t handle, a_detach_begin, a_detach_end;
	uint64_t lib_lo, lib_hi;
};
int rec_inject_attach(struct rec_inject *in, pid_t pid, const char *lib, const char *spool,
		      const char *settings, char *err, size_t errlen);
/* End the recording: the GOT entries back, every thread's recording ended,
 * the library unloaded and the page unmapped; 0, or -1 with err set. */
int rec_inject_detach(struct rec_inject *in, const char *lib, char *err, size_t errlen);
void rec_inject_free(struct rec_inject *in);

/* Whether a file name is one of a spool's own (fmt_spool.h). */
int rec_spool_own_name(const char *name);

/* Whether name is exactly one of runtime/rt_kept.c's results ("cs.<16 hex
 * digits>", "got.<...>"). */
int rec_spool_kept_name(const char *name);

/* A listing of the directory dirfd on a descriptor of its own (a dup would
 * share dirfd's position and leave it at the end); NULL if it cannot be
 * opened. */
DIR *rec_dir_list(int dirfd);

/* What the spool says of the programs the recorded processes ran that load
 * no runtime (set-user-ID, statically linked: runtime/rt_exec.c), as one
 * sentence; NULL when there were none. */
char *rec_unrecorded_programs(int dirfd);
/* One line naming the library functions whose GOT entries the program's
 * code also reads as data (a call through a register, an address taken),
 * which the runtime left alone (their calls go unrecorded), *count of
 * them; NULL when none. */
char *rec_unprobed_calls(int dirfd, unsigned *count);

/*
 * A recording through a spool (instrumentation, the in-process sampler):
 *
 *   rec_session_begin   the spool beside output, the program's environment
 *                       (the runtime preloaded, STINT_SPOOL);
 *   (the caller adds its STINT_* variables with rec_session_setenv, and
 *   the facts it knows to d: command, clock, os, notes, rate, and sets
 *   os_wanted and use_tsc)
 *   rec_session_run     the session file, the program run and waited for
 *                       (the session file rewritten once a second), the
 *                       spool converted: d is then the data set;
 *   rec_session_write   the data file;
 *   rec_session_end     the spool removed (unless a failure left it for
 *                       `stint recover`: then do not call it), all freed.
 *
 * The functions returning int give 0, or -1 with err set (write: errno).
 */
/*
 * rec_cache.c: the user's cache of results the runtime worked out from
 * programs' code, kept across recordings.  rec_cache_open: its directory,
 * made if missing, or -1 where there is none to use (no home, or a
 * directory others can reach).  rec_cache_store: the results of the
 * spool's processes into it, the oldest going past its size.
 */
int rec_cache_open(void);
void rec_cache_store(int spoolfd, int cachefd);

struct rec_session {
	const char *kind;       /* "instrument" or "inproc" */
	const char *os_wanted;  /* instrument: --os-events as asked */
	int use_tsc;            /* instrument: ticks are the TSC's (else ns) */
	struct rec_spool spool;
	char **env;             /* "NAME=value", NULL-terminated */
	int nenv;
	struct fmt_data d;
	struct rec_child child; /* the program, after rec_session_run */
	int save_errno;         /* the final session file could not be written */
	int cachefd;            /* the user's cache (rec_session_cache), or -1 */
	uint64_t tsc0, ns0;
};
int rec_session_begin(struct rec_session *s, const char *kind, const char *output, const char *runtime,
		      char *err, size_t errlen);
void rec_session_setenv(struct rec_session *s, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int rec_session_run(struct rec_session *s, const char *path, char *const argv[], char *err, size_t errlen);
int rec_session_write(struct rec_session *s, const char *output);
void rec_session_end(struct rec_session *s);
/* Let the program's processes find and keep results in the user's cache. */
void rec_session_cache(struct rec_session *s);

/* Bounds on what is read from a spool: its small text files, and a
 * thread's samples file. */
#define REC_SPOOL_SMALL_MAX ((size_t)256 << 20)
#define REC_SPOOL_BIG_MAX ((size_t)1 << 40)

#endif
