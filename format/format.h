/*
 * format.h - the stint data file (stint.data): layout, writer and reader.
 *
 * This header is the single source of truth for the file format; the
 * prose version is doc/format.md.
 *
 * FILE HEADER (32 bytes)
 *
 *   OFFSET SIZE DESCRIPTION
 *      0     8  magic "STINTDAT"
 *      8     4  format version (FMT_VERSION), little-endian
 *     12     4  oldest reader version that can read this file
 *     16    16  reserved, zero
 *
 * Then chunks, one after another, to the end of the file:
 *
 *      0     4  tag, four ASCII letters (enum fmt_tag)
 *      4     4  CRC-32 (zlib) of the payload
 *      8     8  payload length in bytes
 *     16     n  payload
 *
 * The CRC of an EVTS chunk covers only its first FMT_EVTS_CRC_SPAN bytes: a
 * spot check, so that hundreds of megabytes of events are copied, not
 * read, by the recorder; event records validate themselves as they are
 * decoded, and a reader stops at the first one that does not.
 *
 * A reader skips chunks whose tag it does not know.  Chunks come in this
 * order: SESS; then per process PROC, MODS, SYMS, LINS, INLN and its THRD chunks; then
 * one EVTS chunk per thread (the bulk); last ENDF.  So a file cut short
 * loses only the tail of the events, never the names needed to report what
 * is left.
 *
 * Payloads are built of: u32/u64 (little-endian), f64, str (LEB128 length
 * then bytes, no terminator) and raw bytes.
 *
 *   SESS  str method ("instrumentation"|"sampling"), str command, u64 wall
 *         start (ns since the epoch), u64 duration ns, f64 ns per tick,
 *         str clock ("tsc"|"monotonic"), str os-event detector, u32 exit
 *         status (as the shell reports it), u32 flags (FMT_SESS_*), u64
 *         sample period or frequency (sampling; 0 otherwise), str notes
 *   PROC  u32 process index, u32 pid, u32 ppid, str command line, str exe,
 *         u64 probe cost (1/1024 ticks per event), str os detector; then,
 *         optional (older writers end here): u64 cost of a library-call
 *         event (1/1024 ticks, 0 = as the probe cost), u32 n, n x u64 the
 *         addresses of the library functions probed at their calls (sorted)
 *   MODS  u32 process index, u32 n, n x (u64 start, u64 end, u64 file
 *         offset, str path, str build-id in hex)
 *   MODT  u32 process index, u32 n (= its MODS n), n x (u64 load ticks,
 *         u64 unload ticks): when each module was mapped, where a library
 *         was unloaded or loaded while the process ran (0: from the start,
 *         to the end); optional, after MODS
 *   SYMS  u32 process index, u32 n, n x (u64 address, u64 size, str name,
 *         u32 module index or ~0, str source file, u32 line); two symbols
 *         may share an address in modules mapped at different times
 *   THRD  u32 process index, u32 thread index, u32 tid, str name, u64 start
 *         ticks, u32 flags (FMT_THR_*), u64 events
 *   LINS  u32 process index, u32 n, n x (u64 address, str source file,
 *         u32 line): source lines of sampled addresses (sampling), of
 *         call sites less one (instrumentation: the call instructions)
 *   INLN  u32 process index, u32 n, n x (u64 address, u32 depth, depth x
 *         (str name, str declaration file, u32 line, str call file, u32
 *         call line)): the functions inlined at sampled addresses that
 *         have a LINS entry, outermost first (after LINS)
 *   EVTS  u32 thread index, then the thread's event records (fmt_event.h),
 *         or for sampling its samples (fmt_sample.h)
 *   EVTC  u32 thread index, then the thread's event records in the spool's
 *         chunked layout (fmt_event.h, fmt_decoder_chunked): the recorder
 *         turns the largest spool buffer into the data file in place, its
 *         events starting at byte FMT_SPOOL_DATA_OFF of the file
 *   SKIP  filler, to be skipped (before an EVTC chunk)
 *   ENDF  u32 number of chunks before it
 *
 * Version history: 1 - first version.  2 - instrumentation entries carry
 * their call site (fmt_event.h); version 1 files are still read (their
 * entries have site 0: no per-line views).
 */
#ifndef STINT_FORMAT_H
#define STINT_FORMAT_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include "fmt_event.h"

#define FMT_MAGIC "STINTDAT"
#define FMT_VERSION 2
#define FMT_MIN_READER 2 /* a version 1 reader would misread the entries */
#define FMT_HDR_SIZE 32
/* A data file's mode (less the umask): its owner's only, as perf.data is; it
 * holds the command line, the environment's paths, the program's names */
#define FMT_FILE_MODE 0600
#define FMT_CHUNK_HDR 16
#define FMT_EVTS_CRC_SPAN 65536

#define FMT_TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
enum fmt_tag {
	FMT_SESS = FMT_TAG('S', 'E', 'S', 'S'),
	FMT_PROC = FMT_TAG('P', 'R', 'O', 'C'),
	FMT_MODS = FMT_TAG('M', 'O', 'D', 'S'),
	FMT_SYMS = FMT_TAG('S', 'Y', 'M', 'S'),
	FMT_MODT = FMT_TAG('M', 'O', 'D', 'T'),
	FMT_THRD = FMT_TAG('T', 'H', 'R', 'D'),
	FMT_LINS = FMT_TAG('L', 'I', 'N', 'S'),
	FMT_INLN = FMT_TAG('I', 'N', 'L', 'N'),
	FMT_EVTS = FMT_TAG('E', 'V', 'T', 'S'),
	FMT_EVTC = FMT_TAG('E', 'V', 'T', 'C'),
	FMT_SKIP = FMT_TAG('S', 'K', 'I', 'P'),
	FMT_ENDF = FMT_TAG('E', 'N', 'D', 'F'),
};

enum fmt_sess_flags {
	FMT_SESS_KILLED = 1 << 0,   /* the program died of a signal */
	FMT_SESS_ATTACHED = 1 << 1, /* recorded by attaching to a running process (-p): no exit status */
	FMT_SESS_LEFT_RUNNING = 1 << 2, /* stint stopped waiting while the program ran: no exit status
					 * (exit_status is stint's own, 128 + the signal that stopped it) */
};
enum fmt_thr_flags {
	FMT_THR_NOSPACE = 1 << 0, /* recording stopped early: disk full */
	FMT_THR_ENDED = 1 << 1,   /* the thread ended normally */
	FMT_THR_DAMAGED = 1 << 2, /* events unreadable past some point */
	FMT_THR_CAPPED = 1 << 3,  /* recording stopped at a per-thread limit (7.5 GiB,
				   * runtimes before the limit was lifted) */
	FMT_THR_ORPHANED = 1 << 4,/* recording stopped: the recorder was killed */
	FMT_THR_NOFILES = 1 << 5, /* recording stopped early: the program had no file descriptor free */
	FMT_THR_NOACCESS = 1 << 6,/* recording stopped early: the program gave up the rights to reach the spool */
	FMT_THR_SECCOMP = 1 << 7, /* recording stopped early: the program restricted its system calls */
	FMT_THR_SHAREDTLS = 1 << 8, /* recording stopped early: a clone() child shared the thread's thread pointer */
	FMT_THR_LEFTPROBE = 1 << 9, /* recording stopped early: a signal handler left one of its probes by siglongjmp */
	FMT_THR_NOCLOCK = 1 << 10,  /* recording stopped early: the thread turned off its time-stamp counter */
	FMT_THR_FILELIMIT = 1 << 11, /* recording stopped early: the program's file size limit (RLIMIT_FSIZE) */
};

/* ------------------------------------------------------------------------
 * In-memory model, shared by writer and reader
 * --------------------------------------------------------------------- */

struct fmt_module {
	uint64_t start, end, offset; /* mapped text range and its file offset */
	char *path;
	char *build_id;              /* hex, "" if none */
	uint64_t load, unload;       /* ticks: mapped from load (0: the start)
				      * until unload (0: the end); MODT */
};

struct fmt_symbol {
	uint64_t addr;  /* run-time address, as the probes saw it */
	uint64_t size;  /* bytes of code, 0 if unknown */
	char *name;     /* demangled */
	uint32_t module;/* index into the process's modules, or ~0u */
	char *file;     /* source file, "" if unknown */
	uint32_t line;
};

/*
 * One function the compiler inlined at an address: it stands on the stack
 * above the function holding the code (doc/numbers.md (sampling), inlined
 * functions).
 */
struct fmt_inline {
	char *name;       /* demangled */
	char *file;       /* where it is declared, "" if unknown */
	uint32_t line;
	char *call_file;  /* the call site it was inlined at, in the function */
	uint32_t call_line; /* enclosing it (the previous entry, or the holder) */
};

struct fmt_line {
	uint64_t addr;  /* a sampled address (callers: the return address) */
	char *file;
	uint32_t line;
	struct fmt_inline *inl; /* the inline chain at addr, outermost first */
	uint32_t ninl;
};

/* Writer side: a run of event bytes in an open file, copied in the kernel. */
struct fmt_segment {
	int fd;
	uint64_t off, len;
};

struct fmt_thread {
	uint32_t proc;       /* index into fmt_data.procs */
	uint32_t tid;
	char *name;
	uint64_t start;      /* ticks */
	uint32_t flags;      /* enum fmt_thr_flags */
	uint64_t nevents;
	const uint8_t *ev;   /* event records (fmt_event.h) */
	size_t ev_len;
	uint8_t *ev_owned;   /* writer side: buffer to free */
	int chunked;         /* ev is in the spool's chunked layout (EVTC) */
	int nosites;         /* reader side: a version 1 file, entries without sites */
	char *spool_path;    /* writer side: the spool buffer the events are in */
	struct fmt_segment *segs; /* writer side: the events, if not in ev */
	uint32_t nsegs;      /* (segs share one fd, closed by fmt_data_free) */
};

struct fmt_process {
	uint32_t pid, ppid;
	char *command;
	char *exe;
	uint64_t cost;       /* probe cost, 1/1024 ticks per event */
	uint64_t lib_cost;   /* cost of a library-call event, 1/1024 ticks, 0 = cost */
	uint32_t cost_patched; /* cost measures the probes of functions patched
				* at load (their path), not the compiler's hooks */
	uint64_t cost_inner; /* of two function probes' cost (2 x cost), the part
			      * in the interval from an entry to its exit, 1/1024
			      * ticks; 0 = unknown (cost, half of each) */
	uint32_t cost_samples; /* calibrations cost is the median of (start-up's
				* and the run's), 0 = unknown (one, start-up) */
	uint64_t cost_min, cost_max; /* the least and greatest of them */
	uint64_t *lib_fns;   /* library functions probed at their calls, sorted */
	uint32_t nlib_fns;
	char *os;
	struct fmt_module *mods;
	uint32_t nmods;
	struct fmt_symbol *syms; /* sorted by address */
	uint32_t nsyms;
	struct fmt_line *lines;  /* sorted by address: sampled addresses, call sites - 1 */
	uint32_t nlines;
};

struct fmt_data {
	char *method;
	char *command;
	uint64_t wall_start, duration_ns;
	double ns_per_tick;
	char *clock;
	char *os;
	uint32_t exit_status;
	uint32_t flags;
	uint64_t rate;
	char *notes;
	struct fmt_process *procs;
	uint32_t nprocs;
	struct fmt_thread *threads;
	uint32_t nthreads;
	/* reader side */
	char *damage;        /* NULL, or what was wrong with the file */
	void *map;
	size_t map_len;
};

/*
 * Write d to path (through path.tmp and a rename, so a failure never
 * leaves a half file under the real name).  Returns 0, or -1 with errno
 * set (ENOSPC for a full disk).
 */
int fmt_write(const struct fmt_data *d, const char *path);

/*
 * Read the file at path into d.  Returns 0 when something was read; then
 * d->damage is NULL or says, in one line, what part of a truncated or
 * corrupt file could not be read (all the rest is in d: a damaged chunk of
 * names is skipped and the events are kept).  Returns -1 with a message in
 * err when nothing is usable: a missing, foreign or incompatible file, or
 * one that is not a regular file (a FIFO is refused, never waited on).
 */
int fmt_read(const char *path, struct fmt_data *d, char *err, size_t errlen);

/*
 * fmt_read maps the file: the events stay in the map, read as the analysis
 * goes.  If the file is truncated meanwhile (a program writing it, a full
 * disk), a read beyond its new end raises SIGBUS.  This is the path of the
 * file whose map (of a fmt_read not yet freed) holds addr, or NULL: a SIGBUS
 * handler's question (async-signal-safe), so that a reading command ends
 * with one line naming the file rather than "Bus error".
 */
const char *fmt_mapped_file_at(const void *addr);

/*
 * The same from len bytes at buf (name is what messages call them); d
 * points into buf, which must outlive it.  For the fuzz target.
 */
int fmt_read_mem(const void *buf, size_t len, const char *name, struct fmt_data *d, char *err,
		 size_t errlen);

void fmt_data_free(struct fmt_data *d);

/*
 * Write d to path turning the spool buffer file buf (thread index t of d,
 * whose events are its segments) into the data file in place: names and
 * header into the buffer's hole, the other threads' events appended, then
 * a rename.  Returns 0; 1 when it does not fit (the caller then writes
 * with fmt_write); -1 with errno on failure.
 */
int fmt_write_inplace(const struct fmt_data *d, const char *path, uint32_t t, const char *buf);

/* A decoder of a thread's events, in whichever layout they are. */
void fmt_thread_decoder(const struct fmt_thread *t, struct fmt_decoder *dec);

/* Free an inline chain of n entries (and its strings). */
void fmt_inline_free(struct fmt_inline *v, uint32_t n);

/* Source line recorded for addr, or NULL. */
const struct fmt_line *fmt_line_at(const struct fmt_process *p, uint64_t addr);

/* Whether addr is a library function probed at its calls (p->lib_fns). */
int fmt_is_lib_fn(const struct fmt_process *p, uint64_t addr);

/* Sort p's symbols by address, as readers of the model expect. */
void fmt_sort_symbols(struct fmt_process *p);

/* Symbol of the function containing addr, or NULL. */
const struct fmt_symbol *fmt_symbol_at(const struct fmt_process *p, uint64_t addr);

/* Whether p's modules changed while it ran (a library unloaded or loaded:
 * fmt_module.load/unload), so that an address names a function only
 * together with a time. */
int fmt_has_module_times(const struct fmt_process *p);

/* Index of the (first) module of p over addr, whenever it was mapped, or -1. */
int fmt_module_at(const struct fmt_process *p, uint64_t addr);

/* Index of the module mapped over addr at time ticks, or -1. */
int fmt_module_at_time(const struct fmt_process *p, uint64_t addr, uint64_t ticks);

/* Symbol of the function containing addr at time ticks (as fmt_symbol_at
 * where the modules never changed), or NULL. */
const struct fmt_symbol *fmt_symbol_at_time(const struct fmt_process *p, uint64_t addr, uint64_t ticks);

#endif
