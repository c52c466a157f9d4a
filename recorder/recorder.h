/*
 * recorder.h - launching and watching the profiled program, and turning
 * what it left behind into a data file.
 */
#ifndef STINT_RECORDER_H
#define STINT_RECORDER_H

#include <stdint.h>
#include <sys/types.h>
#include "../format/format.h"

struct sym_proc;

/* Where a program name resolves (PATH search as execvp does); NULL if none. */
char *rec_find_program(const char *name);

/* Whether the ELF file at path imports __cyg_profile_func_enter: 1 yes,
 * 0 no, -1 not an ELF file. */
int rec_is_instrumented(const char *path);

struct rec_child {
	pid_t pid;
	int hold;              /* in: the program waits for rec_release() */
	int go_fd;             /* write end of the pipe it waits on */
	int err_fd;            /* where exec failures are reported */
	int status;            /* wait status of the program */
	uint64_t wall_start;   /* ns since the epoch */
	uint64_t mono_start, mono_end;
};

/*
 * Start path with argv and the environment plus env_add ("NAME=value"
 * entries; LD_PRELOAD is prepended to an existing one).  SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT reaching stint are passed on to the program.  Fails
 * with a message in err when the program cannot be executed.
 */
int rec_spawn(const char *path, char *const argv[], char *const env_add[], struct rec_child *c,
	      char *err, size_t errlen);

/* Let a program started with hold set go on to exec. */
void rec_release(struct rec_child *c);

/* After rec_release(): whether the exec worked (as rec_spawn says). */
int rec_spawn_finish(struct rec_child *c, pid_t pid, int errfd, const char *path, char *err,
		     size_t errlen);

/*
 * Wait for the program, then for every process it left behind (stint is
 * their subreaper), so that forked children finish writing.  With an
 * instrumentation spool, page in its buffers' next chunks meanwhile.
 */
void rec_wait(struct rec_child *c, const char *spool);

/* Exit status that `stint record` passes on: the code, or 128+signal. */
int rec_exit_code(int status);

/* TSC: whether usable, and its ns per tick (from the kernel if it says). */
int rec_tsc_usable(void);
double rec_tsc_ns_per_tick(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1);

/*
 * Read the instrumentation spool dir (fmt_spool.h) into d: processes,
 * threads, events and symbols.  Returns 0, or -1 with err set.
 */
int rec_spool_read(const char *dir, struct fmt_data *d, char *err, size_t errlen);

/* The OS-event detector as the report names it, from the one asked for. */
const char *rec_describe_os(const struct fmt_data *d, const char *wanted);

/*
 * Save the session's facts in the spool (kind: "instrument" or "inproc"),
 * so that rec_spool_convert() can rebuild the data set from the spool alone
 * (`stint recover`, after a conversion failed for want of disk space).
 */
int rec_spool_save_session(const char *dir, const struct fmt_data *d, const char *kind,
			   const char *os_wanted);

/* Read a spool with its session file into d; 0, or -1 with err set. */
int rec_spool_convert(const char *dir, struct fmt_data *d, char *err, size_t errlen);

/*
 * Symbolization of a process described by its maps text: the modules
 * (with build-ids) copied into p, p->exe set if it is empty; the caller
 * looks addresses up in the result and closes it.  Dies when out of memory.
 */
struct sym_proc *rec_open_process(struct fmt_process *p, const char *maps, size_t len);

/* Remove the spool directory and its files. */
void rec_spool_remove(const char *dir);

#endif
