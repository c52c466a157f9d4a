/*
 * rt_int.h - internals of libstint-rt.so, the runtime preloaded into the
 * profiled program.  Private to runtime/; it depends on nothing of stint but
 * the format headers (fmt_event.h, fmt_spool.h), which are header-only.
 *
 * THREAD SAFETY: every thread owns one struct rt_thread in initial-exec TLS
 * and is the only writer of it and of its spool buffer.  The probes take no
 * lock and make no system call; a chunk switch (once per 256 KiB..8 MiB of
 * events) maps the next part of the buffer file.
 */
#ifndef STINT_RT_INT_H
#define STINT_RT_INT_H

#include <stdint.h>
#include <sys/types.h>
#include "../format/fmt_event.h"
#include "../format/fmt_spool.h"

#define RT_API __attribute__((visibility("default")))

/* __cyg_profile_func_enter/exit (rt.c), for the runtime's own callers
 * (rt_patch.c): hidden aliases are called directly, not through the PLT
 * that the exported names need */
void rt_probe_enter(void *fn, void *site) __attribute__((visibility("hidden")));
void rt_probe_exit(void *fn, void *site) __attribute__((visibility("hidden")));
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * Sets a signal-handler guard (the gate's busy bit, plt_busy): the store is made, and no
 * access to the state it guards moves across it.  Without the barriers
 * the compiler may drop `busy = 1` before `busy = 0`, or load the spool
 * position before setting it, and a handler's events written in between
 * are overwritten.  A handler runs on this thread, so a compiler barrier
 * suffices: no instruction is emitted.
 */
#define RT_GUARD(flag, value)                                \
	do {                                                 \
		__atomic_signal_fence(__ATOMIC_SEQ_CST);     \
		(flag) = (value);                            \
		__atomic_signal_fence(__ATOMIC_SEQ_CST);     \
	} while (0)

#define RT_STACK 512 /* functions remembered per thread to check exits (a power of 2) */
#define RT_RETS 512  /* library calls in flight per thread (rt_plt.c) */
#define RT_RESERVE 4 /* chunks mapped ahead for a thread before a seccomp filter (rt.c) */
#define RT_PEND 64   /* events of signal handlers waiting for a probe */
#define RT_SEEN 16384 /* first slots of the per-thread set of function addresses */
#define RT_SEEN_MAX (1u << 20) /* slots it grows to at most (8 MiB; cc1plus: 131072) */
#define RT_FNS_WINDOW (64u << 10) /* a thread's .fns file is written through windows of this size */
#define RT_NOTES 16   /* addresses waiting to be told to the recorder */
#define RT_SPOOL_MAX 3072 /* the spool directory's path, with its terminator */
/* a thread's buffer file: "<spool>/<key>.t<tid>.buf" */
#define RT_PATH_MAX (RT_SPOOL_MAX + 128)
#define RT_SAMPLE_GAP 896    /* bytes of records between two tail samples, plus 0..255 */
#define RT_SAMPLE_MAX 4096   /* ticks: a longer tail was interrupted, not counted */

/* An event of a signal handler that interrupted a probe. */
struct rt_pend {
	uint64_t fn, site, now, sw;
	int is_exit;
};

/* A library call in flight (rt_plt.c).  Its return address was swapped for
 * a return thunk, unless swapped is 0 (a call that does not return). */
struct rt_ret {
	uint64_t *slot;   /* where the return address lives on the stack */
	uint64_t orig;    /* the caller's return address */
	uint64_t fn;      /* the library function */
	uint32_t thunk;   /* the return thunk's number (swapped calls) */
	uint8_t swapped;  /* *slot was given the thunk */
	uint8_t restored; /* *slot holds orig again (an exception is unwinding) */
};

enum rt_state { RT_NEW = 0, RT_ACTIVE = 1, RT_DONE = 2 };
enum rt_os_mode { RT_OS_OFF = 0, RT_OS_PERF = 1, RT_OS_RUSAGE = 2 };

/*
 * The probes' lean path may run when gate is exactly RT_GATE_LEAN: the
 * thread records, with TSC timestamps and the perf switch counter, and no
 * probe is running.  A new thread's zeroed state fails the test, so one
 * compare sends every other case to the general path.
 */
#define RT_GATE_LEAN 1u /* active, TSC clock, perf switch counter */
#define RT_GATE_BUSY 2u /* a probe is running: signal-handler re-entry guard */

/* The first 64 bytes are all a common probe touches but the address
 * cache's slot and the stack slot: one cache line. */
#define RT_VEC_AREA 3072

/*
 * An open frame: its function, and for a -finstrument-functions entry the
 * stack pointer of the function at its entry probe (RT_SP_NONE for the
 * others), below which a longjmp leaves it (rt_close_left).
 */
struct rt_frame {
	uint64_t fn, sp;
};
#define RT_SP_NONE UINT64_MAX
/* Past RT_STACK the slots are reused: a frame's sp (a canonical frame
 * address, 16-byte aligned) carries in its low 4 bits the lap of its depth
 * (depth / RT_STACK), so that a slot another lap took is told apart
 * (rt_frame_at).  The lean probe writes laps 0 only, as they are. */
#define RT_SP_LAP_MASK 15u
#define RT_SP_LAP(depth) (((depth) / RT_STACK) & RT_SP_LAP_MASK)
/* No stack pointer, with a lap (a library call's or a patched function's
 * frame past RT_STACK: a longjmp's own frame took the slot of a frame the
 * jump then had to close, and was taken for it). */
#define RT_SP_NONE_AT(depth) (~(uint64_t)RT_SP_LAP_MASK | RT_SP_LAP(depth))
#define RT_SP_IS_NONE(sp) (((sp) | RT_SP_LAP_MASK) == RT_SP_NONE)

struct rt_thread {
	uint8_t *pos;             /* next byte to write */
	uint8_t *limit;           /* min(end_limit, sample_at), or 0 when work
				   * waits (notes, queued handler events): the
				   * probes test only this */
	uint64_t last_t;          /* timestamp of the previous record */
	volatile uint32_t *lock;  /* perf user page's lock word, RT_OS_PERF */
	uint64_t last_switches;   /* last lock word / rusage switch count */
	union { /* the lean probe ends with one store of both */
		struct {
			uint32_t depth; /* open frames, also beyond RT_STACK */
			uint32_t gate;  /* RT_GATE_LEAN | RT_GATE_BUSY */
		};
		uint64_t depth_gate;    /* little-endian: depth | gate << 32 */
	};
	uint8_t *sample_at;       /* the lean probe whose record crosses this
				   * times its tail (rt_after_lean) */
	uint8_t *end_limit;       /* chunk end less FMT_MAX_RECORD */
	/* end of the first cache line */
	uint64_t dropped;         /* ticks left out of the events' deltas (chunk
				   * switches, calibration): clock - dropped is
				   * the time the events' deltas add up to */
	int state;                /* enum rt_state */
	uint32_t nnotes;          /* new function addresses in notes[] */
	/* the arrays, in t->arrays (struct rt_thread_arrays says why) */
	uint64_t *notes;          /* [RT_NOTES] */
	struct fmt_caches *c;     /* mirrors the decoder's address caches */
	struct rt_frame *stack;   /* [RT_STACK] the innermost open frames */
	struct fmt_spool_hdr *hdr;/* mapped header page of the buffer file, and
				   * the notes area after it (RT_HDR_MAP bytes) */
	uint32_t note_pages;      /* pages of the notes area made writable */
	/* the chunks after this one, mapped ahead when the program restricted
	 * its system calls (rt.c, rt_seccomp): taken with none */
	uint8_t *reserve[RT_RESERVE];
	uint32_t nreserve, reserve_next;
	unsigned chunk;           /* index of the mapped chunk */
	uint64_t chunk_off;       /* its offset in the file */
	uint8_t *chunk_base;      /* its mapping */
	uint8_t *pop_at;          /* end of its pages faulted in so far
				   * (rt_populate_more): a thread's first chunk
				   * is faulted in step by step */
	pid_t tid;
	char *path;               /* [RT_PATH_MAX] its buffer file's (rt_thread_arrays) */
	uint64_t *seen;           /* open-addressing set of addresses told */
	uint32_t seen_cap, seen_n;/* its slots (a power of two), and those taken */
	uint64_t *fns_map, *fns_at; /* the mapped window of .fns being filled, its next slot */
	uint32_t fns_windows;     /* windows of .fns mapped so far */
	uint32_t npend;           /* queued handler events (claimed slots) */
	uint32_t lost;            /* handler events the queue had no room for */
	struct rt_pend *pend;     /* [RT_PEND] */
	uint64_t tail_sum, tail_n;/* those tails: ticks, and how many */
	uint32_t nrets;           /* library calls in flight */
	int plt_busy;             /* rets[] is being changed: signal-handler guard */
	struct rt_ret *rets;      /* [RT_RETS] */
	int shared_state;         /* state and gate before a clone whose child */
	uint32_t shared_gate;     /* keeps this thread pointer (rt.c, rt_share_tls) */
	int vec_busy;             /* vec_area holds the program's registers (rt.c) */
	int recal_due;            /* set by a chunk switch (rt_next_chunk): a calibration
				   * once the probe is done (rt_after_lean, rt_probe_at) */
	uint8_t *vec_area;        /* [RT_VEC_AREA], 64-byte aligned */
	struct rt_thread_arrays *arrays;
	/* frames past RT_STACK deep (rt_stack_push_deep): spill[k] holds the
	 * frame at depth k whose slot a frame at depth k + RT_STACK took */
	struct rt_frame *spill;
	uint32_t nspill, spill_cap; /* entries written (the deepest + 1), mapped */
	int deep;                   /* the thread has gone past RT_STACK */
} __attribute__((aligned(64)));

/*
 * A thread's arrays, mapped when it starts recording (rt_thread_arrays_map)
 * and let go when it ends.  glibc takes a library's static TLS out of every
 * thread's stack, from the size the program gave pthread_attr_setstacksize:
 * with them in struct rt_thread (and rt_patch.c's and rt_select.c's state,
 * mapped likewise) the runtime's 120 KiB of it made threads of 64 KiB stacks
 * fail to start (EINVAL) and left one of 128 KiB with 8 KiB.  struct
 * rt_thread keeps what the probes test first; their loads through these
 * pointers do not wait for the clock read.
 */
struct rt_thread_arrays {
	/* the program's ymm/zmm upper parts, zmm16-31 and masks (XSAVE's
	 * standard form up to Hi16_ZMM: 2,688 bytes) while the probes' slow
	 * paths run; here, not on the stack, which may be small (a clone
	 * child's of 8 KiB, a signal stack) */
	uint8_t vec_area[RT_VEC_AREA] __attribute__((aligned(64)));
	struct fmt_caches c;
	struct rt_frame stack[RT_STACK];
	uint64_t notes[RT_NOTES];
	struct rt_pend pend[RT_PEND];
	struct rt_ret rets[RT_RETS];
	/* the buffer file's path (.buf, or .fns with those 3 letters changed),
	 * made at the thread's start: the chunk switch, which may run on a
	 * small stack (a coroutine's, a signal stack), needs no buffer of its
	 * own */
	char path[RT_PATH_MAX];
};

/* Let go of a perf user page mapped for a thread's switch count (lock: its
 * lock word). */
void rt_close_switch_page(volatile uint32_t *lock);

/* Map t's arrays (none yet), or point t at `a`; 0 when none can be mapped. */
int rt_thread_arrays_map(struct rt_thread *t, struct rt_thread_arrays *a);

/* Keep the program's floating-point and vector registers in t across a
 * call out of the runtime (rt.c says why): rt_vec_hold saves them, unless
 * they are already kept or unused, and says whether it did. */
int rt_vec_hold(struct rt_thread *t) __attribute__((visibility("hidden")));
void rt_vec_release(struct rt_thread *t) __attribute__((visibility("hidden")));
#define RT_VEC_KEEP(t, work)                                                         \
	do {                                                                         \
		int rt_vec_kept_ = rt_vec_hold(t);                                   \
		work;                                                                \
		if (rt_vec_kept_)                                                    \
			rt_vec_release(t);                                           \
	} while (0)

static inline int rt_busy(const struct rt_thread *t)
{
	return (t->gate & RT_GATE_BUSY) != 0;
}

/*
 * A longjmp lands at stack pointer `to`: close the innermost frames of
 * -finstrument-functions entries whose stack pointer lies below it, within
 * same_stack bytes (a frame on another stack is kept), as their exits.
 * Without it they stayed open until an outer exit, with the calls made
 * after the jump counted inside them.
 */
void rt_close_left(struct rt_thread *t, uint64_t to, uint64_t same_stack) __attribute__((visibility("hidden")));

/* the header and notes area mapped as one (fmt_spool.h) */
#define RT_HDR_MAP FMT_SPOOL_DATA_OFF
#define RT_RECAL_KEEP 256 /* in-run calibrations kept: evenly spread over the run */

/* Process-wide settings, fixed once rt_init() ran (but the costs). */
struct rt_global {
	int enabled;          /* STINT_SPOOL was given and init succeeded */
	int use_tsc;          /* timestamps from rdtsc, else CLOCK_MONOTONIC ns */
	int os_mode;          /* enum rt_os_mode wanted for new threads */
	int plt;              /* hook calls into shared libraries */
	char spool[RT_SPOOL_MAX]; /* the spool directory */
	char cache[128];      /* the user's cache of kept results (STINT_KEPT_CACHE), or "" */
	char key[64];         /* this process's key, "p<pid>-<ns>" */
	uint64_t calib_ticks; /* probe cost, in 1/1024 tick units */
	uint64_t calib_tail;  /* a probe's tail in calibration, 1/1024 ticks (0: none) */
	uint64_t calib_lib;   /* a library-call event's cost, 1/1024 ticks (0: unknown) */
	int calib_patched;    /* calib_ticks measures the probes of functions patched at load */
	uint64_t calib_inner; /* of a pair of probes' cost, the part inside the call (rt_calib_inner) */
	/* the same costs measured again during the run (rt.c, rt_recalibrate) */
	struct rt_recal {
		int lock;
		uint32_t n, step, skip;       /* samples kept; keep one in step */
		uint64_t fn[RT_RECAL_KEEP];   /* function events, 1/1024 ticks */
		uint64_t lib[RT_RECAL_KEEP];  /* library-call events (0: none) */
		uint64_t fn0, inner0;         /* the start-up's, which the run's replace */
		uint64_t tail_sum, tail_n;    /* the run's calibrations' probe tails */
		uint32_t samples;             /* how many the median was taken of */
		uint64_t min, max;            /* and the least and greatest */
	} recal;
	/* the header of the process's first recording thread, mapped until the
	 * process ends: threads that cannot record for want of a file
	 * descriptor are counted there (fmt_spool_hdr.unrecorded) */
	struct fmt_spool_hdr *count_hdr;
	int count_inherited; /* count_hdr is still the parent's (a fork child) */
	int proc_counted;    /* this fork child was counted as a process not recorded */
	int no_spares; /* a vfork child: the spare buffers are its parent's (rt.c) */
	int init_done; /* rt_init_once ran: enabled says for good whether this process records */
	/* the program restricted its system calls (seccomp): from then on the
	 * runtime makes none a filter could kill it for (rt.c, rt_prctl) */
	volatile int no_syscalls;
	/* a thread turned its time-stamp counter off (rt_clock_off): threads
	 * started after (which may inherit that) do not record */
	volatile int no_clock;
};

extern struct rt_global rt_g;
#ifdef RT_ATTACH_LIB
/* libstint-rt-attach.so, dlopen'ed into a running process (rt_attach.c):
 * a dlopen'ed library has only a few bytes of static TLS, so a thread's
 * state is mapped on its first probe and reached through one pointer */
struct rt_thread *rt_self_get(void);
#define rt_self (*rt_self_get())
#else
extern __thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
#endif
/* A zeroed block of size bytes for the calling thread, stored at *slot
 * unless a signal handler stored one first (that one is returned); NULL
 * when none can be mapped or the program forbade system calls. */
void *rt_thread_block(void **slot, size_t size);

/*
 * The function name that an interposer of ours (ours) stands in for: the
 * next definition after this library (dlsym RTLD_NEXT), else the one in the
 * scope of the library that called it (caller: an address in it).  A C++
 * library (or a Rust one) that a program dlopen'ed with RTLD_LOCAL brings
 * its libstdc++ and libgcc_s in that library's scope only: RTLD_NEXT found
 * no __cxa_throw, and the interposer called address 0.  NULL if none.
 */
void *rt_next_fn(const char *name, const void *ours, const void *caller);
/* rt_next_fn, or one line and abort: an interposer must not call 0 */
void *rt_next_fn_or_die(const char *name, const void *ours, const void *caller);
/* Counts the dlclose calls that unloaded something: a real function an
 * interposer keeps may have been in it (a Rust cdylib's own libgcc_s,
 * loaded and unloaded with it: the third cycle jumped into the unloaded
 * one).  RT_NEXT_STALE(real, gen): whether the kept one must be looked up
 * again, gen then taking the count. */
extern uint32_t rt_scope_gen __attribute__((visibility("hidden")));
#define RT_NEXT_STALE(real, gen)                                                                         \
	(!(real) || (gen) != __atomic_load_n(&rt_scope_gen, __ATOMIC_ACQUIRE)                              \
		 ? ((gen) = __atomic_load_n(&rt_scope_gen, __ATOMIC_ACQUIRE), 1)                           \
		 : 0)

uint64_t rt_now(void);
int rt_thread_start(struct rt_thread *t);
/* Record an entry (is_exit 0) of fn, called from site (the call's return
 * address, 0 if not known), or an exit of fn; safe from signal handlers. */
void rt_probe(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site);
/* The same at a time and switch count of the caller's (no selection). */
void rt_probe_at(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site, uint64_t now, uint64_t sw);
/* An entry of an earlier time, held back by rt_select.c (new functions are
 * told to the recorder at the next probe). */
void rt_probe_held(struct rt_thread *t, uint64_t fn, uint64_t site, uint64_t at, uint64_t sw);
void rt_write_file(const char *suffix, const void *data, size_t len);
void rt_plt_init(void);
void rt_plt_after_dlopen(void);
void rt_plt_fork_child(void);
void rt_plt_save_names(void);
void rt_vfork_child(void); /* rt.c, for rt_plt.c's vfork */
/* Hold back every signal (no system call under seccomp: then nothing is
 * held); returns what rt_signals_release takes to put the mask back. */
uint64_t rt_signals_hold(void);
void rt_signals_release(uint64_t held);
/* A stub through which calls of an internal empty function are probed as
 * library calls, for the calibration; NULL if none can be made. */
void (*rt_plt_calib_stub(void))(void);
void rt_save_maps(void);
/* rt_patch.c: rewrite the NOP patch sites of the modules not seen yet */
void rt_patch_init(void);

/* Attaching (rt_attach.c, libstint-rt-attach.so only; rt.c has 0 / no-op
 * versions): the frames open in thread tid when stint attached, outermost
 * first; the environment as stint passes it ("NAME=value" lines); starting
 * the recording in the attached process; ending it in every thread. */
uint32_t rt_attach_frames(pid_t tid, uint64_t *open, uint32_t max);
extern const char *rt_env_given;
int rt_attach_start(void);
void rt_attach_finish(struct rt_thread *const *threads, unsigned n, int unmap);

/* The runtime's own work in the program's thread, unrecorded and marked
 * as the profiler's time (rt.c): rt_own_end(rt_own_begin(..)) around it. */
int rt_own_begin(int own_before);
void rt_own_end(int marked);

/* rt_kept.c: results worked out from a module's code, kept in the spool
 * for the recording's later processes ("<spool>/<kind>.<hash>"; kind of at
 * most 7 characters), and found in the user's cache by later recordings.
 * rt_kept_read returns the bytes (rt_kept_free them) or NULL.
 * rt_kept_identity: what names the file holding the code at addr (a
 * library's), to mix into a hash of results that depend on that code. */
uint64_t rt_kept_mix(uint64_t h, uint64_t v);
uint64_t rt_kept_hash(uint64_t h, const void *bytes, size_t n);
uint64_t rt_kept_identity(const void *addr);
void *rt_kept_read(const char *kind, uint64_t hash, size_t *len);
void rt_kept_free(void *data, size_t len);
void rt_kept_write(const char *kind, uint64_t hash, const void *data, size_t len);

#include "rt_sys.h"

#endif
