/*
 * fmt_spool.h - the spool: how the in-process runtime hands its events to
 * the recorder while the program runs.
 *
 * The recorder makes a spool directory and passes its absolute path in
 * STINT_SPOOL, and itself in STINT_RECORDER ("<pid>:<start time>:<pid
 * namespace>": field 22 of /proc/<pid>/stat, the inode of
 * /proc/self/ns/pid), which the runtime checks at chunk switches and
 * thread starts: once the recorder is gone it writes nothing more and marks
 * the thread FMT_SPOOL_ORPHANED.  Every
 * process (every exec, every fork child) has a key "p<pid>-<ns>" and writes:
 *
 *   <key>.info          text, "name value" lines: pid, ppid, clock, os, cost
 *   <key>.cmdline       a copy of /proc/self/cmdline
 *   <key>.maps          a copy of /proc/self/maps (rewritten after dlopen)
 *   <key>.plt           text, "address name" lines: library functions hooked
 *   <key>.t<tid>.buf    one per thread: a header page, then event chunks
 *   <key>.t<tid>.fns    one per thread: the distinct function addresses
 *                       its events name, 8 bytes each, appended as first seen;
 *                       the call sites of its entries too, marked with
 *                       FMT_SPOOL_SITE_BIT (user addresses never have it)
 *   <key>.exit          text, written when the process ends (exit(), a fatal
 *                       signal) with other threads alive: "end <ticks>", then
 *                       "off <tid>" for each thread then off the CPU; the
 *                       recorder gives those threads their last record
 *
 * A thread buffer is a file mapped MAP_SHARED by the runtime, so what was
 * written survives SIGKILL.  From FMT_SPOOL_DATA_OFF on come chunks of growing
 * size (fmt_spool_chunk_size); a record never crosses a chunk, FMT_X_PAD ends
 * a chunk early, and a zero byte ends the data (see fmt_event.h).  The
 * header says how many bytes of each finished chunk hold records, so the
 * recorder copies them without decoding; only a chunk left unfinished (the
 * program crashed or was killed) is scanned for its end, and the chunks of
 * a thread that wrote more than the header's table holds (FMT_SPOOL_UNTABLED).
 */
#ifndef STINT_FMT_SPOOL_H
#define STINT_FMT_SPOOL_H

#include <stdint.h>
#include "fmt_event.h"

#define FMT_SPOOL_MAGIC "STINTBUF"
#define FMT_SPOOL_VERSION 2 /* 2: entries carry their call site (fmt_event.h) */
#define FMT_SPOOL_SITE_BIT (1ull << 63)
#define FMT_SPOOL_HDR_SIZE 4096
/* The first chunk starts 1 MiB in: the hole (sparse, costs no disk) is
 * where the recorder writes the data file's header and names, so that the
 * largest buffer becomes the data file by a rename, its events not copied
 * (an EVTC chunk, format.h). */
#define FMT_SPOOL_DATA_OFF (1u << 20)
/* Between the header and the events, the notes area: 8-byte addresses, the
 * first time the thread names each (FMT_SPOOL_SITE_BIT marks a call site),
 * written through the runtime's mapping of the header and this area, so
 * that naming needs no system call but a page's MADV_POPULATE_WRITE; the
 * .fns file takes those past FMT_SPOOL_NOTES_MAX, or where that fails. */
#define FMT_SPOOL_NOTES_OFF FMT_SPOOL_HDR_SIZE
#define FMT_SPOOL_NOTES_MAX ((FMT_SPOOL_DATA_OFF - FMT_SPOOL_NOTES_OFF) / 8)
#define FMT_SPOOL_FIRST_CHUNK FMT_EVENT_FIRST_CHUNK
#define FMT_SPOOL_MAX_CHUNK FMT_EVENT_MAX_CHUNK
/* Entries of the header's used[] table (the first 7.5 GiB of events); a
 * thread goes on past them, its later chunks then found by decoding */
#define FMT_SPOOL_MAX_CHUNKS 960

enum fmt_spool_flags {
	FMT_SPOOL_NOSPACE = 1 << 0, /* the disk filled: recording stopped early */
	FMT_SPOOL_ENDED = 1 << 1,   /* the thread ended normally */
	FMT_SPOOL_FULL = 1 << 2,    /* (runtimes before the table could be passed:
				     * FMT_SPOOL_MAX_CHUNKS filled, recording stopped) */
	FMT_SPOOL_UNTABLED = 1 << 3, /* chunks past used[]: each ends with a PAD
				      * record but the last, whose end is found
				      * by decoding, as an unfinished chunk's */
	FMT_SPOOL_ORPHANED = 1 << 4, /* the recorder died (stint record was
				      * killed): recording stopped, the program
				      * ran on */
	FMT_SPOOL_NOFILES = 1 << 5,  /* no file descriptor for the next chunk
				      * (the program held all its RLIMIT_NOFILE
				      * allows, and the limit could not be
				      * raised): recording stopped early */
	FMT_SPOOL_NOACCESS = 1 << 6, /* the spool could no longer be opened
				      * (the program gave up the rights to
				      * reach it, setuid) and the recorder had
				      * not made the next chunk: stopped early */
	FMT_SPOOL_SECCOMP = 1 << 7,  /* the program restricted its system
				      * calls (seccomp): recording stopped when
				      * the chunk was full */
	FMT_SPOOL_SHAREDTLS = 1 << 8, /* the thread made a child on its memory
				       * that keeps its thread pointer (clone
				       * with CLONE_VM, without CLONE_SETTLS or
				       * CLONE_VFORK): recording stopped there */
	FMT_SPOOL_LEFTPROBE = 1 << 9, /* a probe of the thread never finished:
				       * a signal handler that interrupted it
				       * left with siglongjmp (or called exit);
				       * its later events are missing */
	FMT_SPOOL_NOCLOCK = 1 << 10,  /* the thread turned off its time-stamp
				       * counter (seccomp's strict mode,
				       * PR_SET_TSC): recording stopped there */
	FMT_SPOOL_FILELIMIT = 1 << 11, /* the program's file size limit
					* (RLIMIT_FSIZE) kept the buffer file
					* from growing: recording stopped */
};

struct fmt_spool_hdr {
	char magic[8];           /* FMT_SPOOL_MAGIC, no terminator */
	uint32_t version;        /* FMT_SPOOL_VERSION */
	uint32_t hdr_size;       /* FMT_SPOOL_HDR_SIZE */
	int32_t pid;             /* process and thread ids */
	int32_t tid;
	uint64_t start_time;     /* clock ticks at the thread's first event */
	volatile uint32_t flags; /* enum fmt_spool_flags */
	/* threads of this process that started with no file descriptor free
	 * (RLIMIT_NOFILE used up) and so were not recorded, counted in one
	 * recording thread's header (0 in the others; a spare field before) */
	volatile uint32_t unrecorded;
	char name[16];           /* thread name, updated when it changes */
	uint64_t calib_ticks;    /* measured probe cost of this thread, 0 = unknown */
	volatile uint32_t nused; /* chunks whose used[] entry is final */
	volatile uint32_t used[FMT_SPOOL_MAX_CHUNKS]; /* bytes of records per chunk */
	/* probe-cost check in the run: every RT sample-th probe times its own
	 * tail (clock read to end); the sum of those ticks and their number,
	 * updated at chunk switches and at the thread's end (0: none) */
	uint64_t tail_sum, tail_n;
	/* function addresses and call sites told to the recorder (as in the
	 * .fns file) in the notes area, FMT_SPOOL_NOTES_OFF on: how many */
	volatile uint32_t notes_n;
	/* processes started from this one (fork, vfork children) that could
	 * not record at all, counted as `unrecorded` is (its threads that
	 * did not record are in `unrecorded`; a spare field before, 0) */
	volatile uint32_t unrecorded_procs;
};
_Static_assert(sizeof(struct fmt_spool_hdr) <= FMT_SPOOL_HDR_SIZE, "spool header page");

/*
 * The in-process sampler's spool (runtime/smp.c, read by
 * recorder/rec_inproc.c): beside each process's <key>.info, .cmdline and
 * .maps (as above) and <key>.usage (its user and system time at exit,
 * "utime_ns N stime_ns N"), one file per thread, <key>.t<tid>.smp: this
 * header, then samples in the data file's encoding (fmt_sample.h), a
 * sample taken in a system call (kept out) as one with no frames and cut.
 */
#define FMT_SMP_MAGIC "STINTSM2"
#define FMT_SMP_SUFFIX ".smp"

enum fmt_smp_flags {
	FMT_SMP_NO_TIMER = 1u << 0, /* no timer could be made: the thread was not sampled */
	FMT_SMP_CPU = 1u << 1,      /* cpu_ns is set */
};

struct fmt_smp_hdr {
	char magic[8];    /* FMT_SMP_MAGIC, no terminator */
	int32_t pid, tid;
	uint64_t start;   /* ns, CLOCK_MONOTONIC */
	char name[16];
	uint32_t flags;   /* enum fmt_smp_flags */
	uint32_t sig;     /* the signal its timer sends */
	uint64_t cpu_ns;  /* the thread's CPU time when it ended (FMT_SMP_CPU) */
};

/*
 * The environment the recorder gives the program's runtime (runtime/rt.c,
 * runtime/smp.c); the runtime passes every STINT_ name on across exec
 * (runtime/rt_exec.c).
 */
#define FMT_ENV_PREFIX "STINT_"
#define FMT_ENV_SPOOL "STINT_SPOOL"       /* the spool directory's absolute path */
#define FMT_ENV_RECORDER "STINT_RECORDER" /* the recorder, as the top of this file says */
#define FMT_ENV_OS "STINT_OS"             /* OS-event detector: perf, rusage or off */
#define FMT_ENV_CLOCK "STINT_CLOCK"       /* tsc or monotonic */
#define FMT_ENV_PLT "STINT_PLT"           /* 1: probe calls into shared libraries */
#define FMT_ENV_SELECT "STINT_SELECT"     /* the record-time selection (runtime/rt_select.c) */
#define FMT_ENV_FREQ "STINT_FREQ"         /* sampler: samples per second of CPU time */
#define FMT_ENV_KERNEL "STINT_KERNEL"     /* sampler, 1: keep samples taken in system calls */
#define FMT_ENV_KEPT_CACHE "STINT_KEPT_CACHE" /* the user's cache of kept results (recorder/rec_cache.c) */
/* for the tests only */
#define FMT_ENV_DENY_PERF "STINT_DENY_PERF"   /* act as if perf events were not permitted */
#define FMT_ENV_COST "STINT_COST"             /* a probe cost to use, not measure */
#define FMT_ENV_TEST_TABLE "STINT_TEST_TABLE" /* a smaller chunk table */

/* Size of chunk number i (0-based). */
static inline uint64_t fmt_spool_chunk_size(unsigned i)
{
	uint64_t s = FMT_SPOOL_FIRST_CHUNK;
	while (i-- && s < FMT_SPOOL_MAX_CHUNK)
		s <<= 1;
	return s;
}

#endif
