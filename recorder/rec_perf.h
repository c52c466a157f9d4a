/*
 * rec_perf.h - sampling with perf_event_open (rec_perf.c) and turning the
 * raw perf records into a data file's processes, threads, call stacks and
 * symbols (rec_sample.c).
 */
#ifndef STINT_REC_PERF_H
#define STINT_REC_PERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../arch/arch.h"
#include "../format/format.h"

enum rec_callgraph { REC_CG_DWARF = 0, REC_CG_FP = 1 };

struct rec_perf_opts {
	unsigned freq;        /* samples per second (of CPU time) */
	const char *event;    /* NULL: the task's CPU-time clock; "cycles" */
	int callgraph;        /* enum rec_callgraph */
	unsigned stack_size;  /* bytes of user stack copied per sample (dwarf) */
	int kernel;           /* sample kernel frames too */
	int attach;           /* the target runs already (-p) */
};

struct rec_buf {
	uint8_t *data;
	size_t len, cap;
};

struct rec_perf;

/*
 * Open one event per CPU for each of tids; NULL with err set on failure,
 * and *denied set when perf events are not permitted at all.
 */
struct rec_perf *rec_perf_open(pid_t *tids, int ntids, const struct rec_perf_opts *o, int *denied,
			       char *err, size_t errlen);
void rec_perf_enable(struct rec_perf *p);
void rec_perf_drain(struct rec_perf *p);
/* Drain until the target is gone (or, attached, until Ctrl-C/duration). */
void rec_perf_run(struct rec_perf *p, pid_t target, int *status, double duration);
/* After rec_perf_run of a launched program: what stopped the wait early
 * (recorder.h, struct rec_child's stopped_early, detached, left_running). */
void rec_perf_left_running(const struct rec_perf *p, int *stopped_early, int *detached, int *left_running);
struct rec_buf *rec_perf_records(struct rec_perf *p);
uint64_t rec_perf_lost(const struct rec_perf *p);
const struct rec_perf_opts *rec_perf_opts(const struct rec_perf *p);
void rec_perf_close(struct rec_perf *p);
int rec_perf_thread_ids(pid_t pid, pid_t **out);

struct rec_sample_stats {
	uint64_t samples;     /* kept */
	uint64_t lost;        /* ring-buffer overruns */
	uint64_t unwind_fail; /* stacks cut short by the unwinder */
	uint64_t stack_out;   /* of them: the copy of the user stack (--stack-size) ran out */
	uint64_t no_cfi;      /* of them: stopped at code without call-frame information */
	uint64_t compat32;    /* of them: of 32-bit programs, not unwound */
	uint64_t no_file;     /* of them: stopped in a module whose file was gone (deleted once run) */
	uint64_t too_deep;    /* of them: deeper than the frames kept (FMT_SAMPLE_MAX_FRAMES, or
			       * with frame pointers the kernel's perf_event_max_stack) */
	struct rec_no_cfi_at {
		char module[64]; /* file name, without its directory */
		uint64_t n;
	} no_cfi_at[8];       /* where, most frequent first (rec_sample_no_cfi_sort) */
};

/* Sort st->no_cfi_at by count, most first. */
void rec_sample_no_cfi_sort(struct rec_sample_stats *st);

/*
 * What a process that ran before recording started (-p) looked like when
 * stint attached: read from /proc then, because it may be gone when
 * recording ends.  The mappings made after attaching come as perf mmap
 * records.
 */
struct rec_attach {
	pid_t pid, ppid;
	char *maps;          /* /proc/PID/maps */
	size_t maps_len;
	char *command;       /* /proc/PID/cmdline, arguments joined by spaces */
	char comm[32];
	struct rec_attach_thread {
		uint32_t tid;
		char name[32];   /* /proc/PID/task/TID/comm */
	} *threads;
	uint32_t nthreads;
};

/* Read pid's maps, command line and thread names; 0, or -1 if it is gone. */
int rec_attach_snapshot(pid_t pid, struct rec_attach *at);
void rec_attach_free(struct rec_attach *at);

/*
 * A process's command line as /proc/PID/cmdline gave it while the program
 * ran, read between t0 and t1 (CLOCK_MONOTONIC, the samples' clock): a
 * worker that writes its title over its arguments (nginx's) is named by
 * it, a forked or exec'd process by its whole command line, not its comm.
 */
struct rec_title {
	uint32_t pid;
	uint64_t t0, t1;
	char *command; /* arguments joined by spaces */
};

struct rec_titles {
	struct rec_title *v;
	size_t n, cap;
};

/* The titles read while recording. */
const struct rec_titles *rec_perf_titles(const struct rec_perf *p);

/*
 * Turn the raw records into d (processes, threads, sample streams, modules,
 * symbols, source lines).  at, if not NULL, is the process attached to;
 * titles, if not NULL, the command lines read while the program ran (the
 * latest read within a process image's life names it; launched_command
 * names the launched program's images that ended before a read).
 */
int rec_sample_build(const struct rec_buf *recs, const struct rec_perf_opts *o, const struct rec_attach *at,
		     const struct rec_titles *titles, uint32_t launched_pid, const char *launched_command,
		     struct fmt_data *d, struct rec_sample_stats *st);

#define REC_KERNEL_START 0xffff800000000000ull /* x86_64: kernel addresses from here */

/*
 * rec_symbolize.c: symbolize sampled addresses (callers already one byte back, fmt_caller_pc) of a process
 * described by its maps text: fills p's modules, exe, symbols and lines.
 */
void rec_symbolize_samples(struct fmt_process *p, const char *maps, size_t maps_len, uint64_t *addrs,
			   size_t naddrs);

/*
 * Read the spool of the in-process sampler (runtime/smp.c) into d.
 * Returns 0, or -1 with err set.
 */
int rec_inproc_read(const char *dir, struct fmt_data *d, struct rec_sample_stats *st, char *err,
		    size_t errlen);

#endif
