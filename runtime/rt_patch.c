/*
 * rt_patch.c - probes for programs built without -finstrument-functions,
 * through the patch sites compilers leave on purpose.
 *
 * Two kinds of site start a function:
 *  - -pg -mfentry: "call *__fentry__@GOTPCREL(%rip)" (or a call to its PLT
 *    stub).  This library exports __fentry__ (rt_patch_entry), and being
 *    preloaded it is the one the dynamic linker binds: such calls reach the
 *    probe with no rewriting at all, also in a dlopen'ed library's
 *    constructors.  Sites the compiler left as NOPs (-mnop-mcount, listed in
 *    __mcount_loc) are rewritten as below.
 *  - -fpatchable-function-entry=N (N >= 5, no NOPs before the entry): the
 *    NOPs listed in __patchable_function_entries become "call island", the
 *    island being "jmp *rt_patch_entry" in a page mapped within reach of a
 *    32-bit displacement of the module.  Rewritten at start-up (from this
 *    library's constructor, before main) and inside each dlopen, before
 *    the library's constructors (rt_patch_objects_added), else after it.
 *
 * rt_patch_entry (rt_patch_x86_64.S) records the function's entry, and its
 * exit by swapping the function's return address for rt_patch_return.  The
 * original return addresses live on a per-thread shadow stack, each with
 * the stack slot it was taken from: a return finds its entry by that slot,
 * and entries above it (frames a longjmp skipped) are closed on the way;
 * a new entry closes those at or below its own slot on the same stack (the
 * thread's, or its sigaltstack, which is watched).  A function entered by
 * a tail jump is its jumping function's callee, closed with it.
 * A C++ exception must unwind through real return addresses: __cxa_throw,
 * __cxa_rethrow, std::rethrow_exception and pthread_exit put them back
 * first, and __cxa_end_catch, once no exception is in flight, closes the
 * frames that were unwound and swaps the live ones again.  Nothing else ever writes a return address.
 * A frame dropped as dead that was live after all (a coroutine's, on a
 * stack of its own) is found again on its return in a process-wide table
 * of dropped frames: the program never loses a return address.
 * Functions with no patch site at all are patched by rt_patch_cs.c, whose
 * trampolines call the same probe (rt_patch_entry_tramp).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "rt_elf.h"
#include "rt_int.h"
#include "rt_patch.h"
#include "rt_plt.h"
#include "rt_select.h"

extern void rt_patch_entry(void);
extern void rt_patch_return(void);
void rt_patch_enter(uint64_t ret_into_fn, uint64_t *slot, int tramp) __attribute__((visibility("hidden")));
uint64_t rt_patch_leave(uint64_t *slot) __attribute__((visibility("hidden")));

#define RT_PATCH_DEPTH 1024          /* swapped return addresses per thread, at first */
#define RT_PATCH_DEPTH_MAX (1u << 22) /* and at most (doubled as the stack deepens) */
#define RT_PATCH_STALE (16u << 20)   /* how far below a new frame a stale one may lie */
#define RT_PATCH_GONE 2

struct rt_patch_ent {
	uint64_t *slot; /* where the return address lives on the stack */
	uint64_t orig;  /* the caller's return address */
	uint64_t fn;    /* the function entered */
	int restored;   /* 1: *slot holds orig again (an exception is unwinding);
			 * RT_PATCH_GONE: returned on another thread (a coroutine
			 * resumed there, rt_patch_from_other_thread): its slot
			 * is not this thread's to write any more */
	uint32_t chain; /* an entry of a tail jump (RT_PATCH_TAIL): how many
			 * tail jumps deep in its chain, from 1; else not read */
};

/*
 * Tail jumps.  A function that ends in "jmp g" (gcc -O2) leaves g its own
 * return address, which the jumping function's entry had already swapped:
 * g's entry finds the return stub in its slot.  g is a callee of the
 * function that jumped, as in a -finstrument-functions build, whose exit
 * probe after the call keeps it a call: the jumping frame stays open, g's
 * entry is pushed above it, and the one return they share closes the whole
 * chain at once.  (Before, the jumping frame was closed at the jump and g
 * entered as its caller's callee: main -> is_even 330,000 calls for 30,000
 * of mutual recursion by tail jumps, main -> is_odd 300,000 never made.)
 * The entries of a chain are marked by their slot, one byte below the
 * slot they share (RT_PATCH_TAIL): no return, no unwind expression of the
 * return stubs and no drop matches them, so the return's first test in
 * rt_patch_leave fails and rt_patch_leave_search closes the chain with the
 * entry that owns the slot, and unwinders find that entry's orig; nothing
 * is ever written through such a slot.  Every test of the common path
 * stays as it was: the ordering tests see the chain just below its slot,
 * which is where its callees' slots lie too.  A chain deeper than
 * RT_PATCH_CHAIN_MAX (an interpreter dispatching by tail calls makes
 * millions) replaces its innermost entry instead: calls all counted,
 * memory bounded.
 */
#define RT_PATCH_TAIL 1
#define RT_PATCH_CHAIN_MAX 1024

/* The stack slot of an entry's return address, also for a tail jump's. */
static inline uintptr_t rt_patch_slot_of(const struct rt_patch_ent *e)
{
	return ((uintptr_t)e->slot + RT_PATCH_TAIL) & ~(uintptr_t)RT_PATCH_TAIL;
}

static inline int rt_patch_is_tail(const struct rt_patch_ent *e)
{
	return ((uintptr_t)e->slot & RT_PATCH_TAIL) != 0;
}

struct rt_patch_thread {
	uint32_t n;       /* entries in use */
	uint32_t cap;     /* entries there is room for */
	int busy;         /* inside the shadow-stack code: a signal handler's
			   * patched calls then run unrecorded (and unswapped) */
	int nrestored;    /* entries with restored set */
	uint64_t ret;     /* the return address swapped in: the thread's own
			   * return stub, else rt_patch_return */
	uint32_t ret_k;   /* that stub's number, or UINT32_MAX */
	uint32_t unused;
	struct rt_patch_ent e[];
};

/*
 * The return stubs of rt_patch_x86_64.S, one per thread while there are:
 * their unwind information reads the thread's shadow stack, from
 * rt_patch_ret_pt[k] (its owner; 0 when free).  A thread's stub is let go
 * with its shadow stack (rt_patch_thread_unmap).  Threads past the
 * RT_PATCH_NRETS-th share one more stub, whose entry stays 0: an unwinder
 * ends their stacks there (rt_patch_return itself, swapped in before, had
 * no word an unwind expression could read safely).
 */
#define RT_PATCH_NRETS 4096 /* as in rt_patch_x86_64.S */
#define RT_PATCH_RET_BYTES 32
extern char rt_patch_rets[], rt_patch_rets_end[];
uint64_t rt_patch_ret_pt[RT_PATCH_NRETS + 1] __attribute__((visibility("hidden")));
_Static_assert(offsetof(struct rt_patch_thread, n) == 0 && offsetof(struct rt_patch_thread, e) == 32 &&
		       sizeof(struct rt_patch_ent) == 32 && offsetof(struct rt_patch_ent, slot) == 0 &&
		       offsetof(struct rt_patch_ent, orig) == 8,
	       "the return stubs' unwind expression reads these (RT_PT_* in rt_patch_x86_64.S)");

/* Whether v is a return address the patcher swapped in (any thread's). */
static inline int rt_patch_is_ret(uint64_t v)
{
	return v == (uint64_t)(uintptr_t)rt_patch_return ||
	       v - (uint64_t)(uintptr_t)rt_patch_rets < (uint64_t)(rt_patch_rets_end - rt_patch_rets);
}

/* Give a new shadow stack a return stub of its own, if one is free. */
static void rt_patch_claim_ret(struct rt_patch_thread *pt)
{
	static uint32_t hint;
	pt->ret = (uint64_t)(uintptr_t)rt_patch_return;
	pt->ret_k = UINT32_MAX;
	if ((size_t)(rt_patch_rets_end - rt_patch_rets) != (size_t)(RT_PATCH_NRETS + 1) * RT_PATCH_RET_BYTES)
		return;
	pt->ret = (uint64_t)(uintptr_t)(rt_patch_rets + (size_t)RT_PATCH_NRETS * RT_PATCH_RET_BYTES);
	uint32_t from = __atomic_load_n(&hint, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < RT_PATCH_NRETS; i++) {
		uint32_t k = (from + i) % RT_PATCH_NRETS;
		uint64_t none = 0;
		if (__atomic_compare_exchange_n(&rt_patch_ret_pt[k], &none, (uint64_t)(uintptr_t)pt, 0,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			pt->ret_k = k;
			pt->ret = (uint64_t)(uintptr_t)(rt_patch_rets + (size_t)k * RT_PATCH_RET_BYTES);
			__atomic_store_n(&hint, k + 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static size_t rt_patch_bytes(uint32_t cap)
{
	return sizeof(struct rt_patch_thread) + (size_t)cap * sizeof(struct rt_patch_ent);
}

/* mapped at the thread's first patched entry (rt_thread_block): not in
 * static TLS, which glibc takes from every thread's stack */
static __thread struct rt_patch_thread *rt_pt_p __attribute__((tls_model("initial-exec")));
/* The thread's signal stack (sigaltstack), where a handler's frames lie
 * apart from the interrupted ones: a slot there says nothing about the
 * frames on the thread's stack, nor the other way round. */
static __thread uintptr_t rt_alt_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t rt_alt_hi __attribute__((tls_model("initial-exec")));

static int rt_patch_same_stack(uintptr_t a, uintptr_t b)
{
	return (a - rt_alt_lo < rt_alt_hi - rt_alt_lo) == (b - rt_alt_lo < rt_alt_hi - rt_alt_lo);
}

#define RT_COMPILER_BARRIER() __asm__ volatile("" ::: "memory")

/* This file is built with a frame pointer for its exception hooks; the two
 * probes need none (gcc only: clang has no per-function optimize) */
#if defined(__GNUC__) && !defined(__clang__)
#define RT_PATCH_NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#else
#define RT_PATCH_NO_FRAME_POINTER
#endif

__attribute__((noinline, cold, noreturn)) static void rt_patch_die(const char *msg)
{
	ssize_t w = write(2, msg, strlen(msg));
	(void)w;
	abort();
}

/* The function whose patch site returns to r (see the site kinds above). */
static uint64_t rt_patch_fn_of(uint64_t r)
{
	const uint8_t *p = (const uint8_t *)(uintptr_t)r;
	uint64_t site = r - 5;          /* call rel32 */
	if (p[-5] != 0xe8 && p[-6] == 0xff && p[-5] == 0x15)
		site = r - 6;           /* call *disp32(%rip) */
	uint32_t endbr;
	memcpy(&endbr, (const void *)(uintptr_t)(site - 4), 4);
	return endbr == 0xfa1e0ff3u ? site - 4 : site; /* endbr64 first */
}

/* The function a probe call came from: a trampoline (rt_patch_cs.c) holds
 * its function's address before the return address of its call */
static uint64_t rt_patch_function(uint64_t ret_into_fn, int tramp)
{
	return tramp ? *(const uint64_t *)(uintptr_t)(ret_into_fn - 14) : rt_patch_fn_of(ret_into_fn);
}

/* Set while this thread starts its recording from a patched entry: what
 * that calls of the program's (bash defines getenv, which it reads) runs
 * unrecorded, instead of starting the recording again without end.  Only
 * there: a signal handler's patched calls that interrupt a probe are
 * recorded (rt.c queues their events). */
static __thread int rt_patch_in_rt __attribute__((tls_model("initial-exec")));

static void rt_patch_exit_event(uint64_t fn)
{
	if (rt_self.state == RT_ACTIVE)
		rt_probe_exit((void *)(uintptr_t)fn, NULL);
}

/*
 * Frames dropped from a shadow stack while their slot still held
 * rt_patch_return: most are gone (a longjmp, an exception), but a frame of
 * a coroutine whose stack lay where a new frame took it for a dead one is
 * still live, and returns one day through rt_patch_return.  Process-wide
 * (a coroutine may resume on another thread), keyed by slot: the latest
 * frame dropped at a slot is the only one that can still be live there.
 * Looked at only when a return finds no entry of its own.
 */
#define RT_PATCH_DROPPED 16384 /* a power of 2 */
#define RT_PATCH_PROBE 8
static struct {
	uint64_t *slot;
	uint64_t orig;
} rt_patch_dropped[RT_PATCH_DROPPED];
static int rt_patch_dropped_lock;

static void rt_patch_spin(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static uint32_t rt_patch_hash(const uint64_t *slot)
{
	uint64_t h = (uint64_t)(uintptr_t)slot >> 3;
	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (RT_PATCH_DROPPED - 1);
}

static void rt_patch_drop(const struct rt_patch_ent *e)
{
	if (e->restored || rt_patch_is_tail(e))
		return; /* its slot holds the real return address again; a tail
			 * jump's slot is its chain's first entry's */
	uint32_t h = rt_patch_hash(e->slot), at = h;
	/* a signal handler of this thread may come here while the lock is
	 * held: after a while it gives up (the frame is almost surely dead) */
	int tries = 0;
	while (__atomic_exchange_n(&rt_patch_dropped_lock, 1, __ATOMIC_ACQUIRE))
		if (++tries > 100000)
			return;
		else
			__builtin_ia32_pause();
	for (uint32_t k = 0; k < RT_PATCH_PROBE; k++) {
		uint32_t j = (h + k) & (RT_PATCH_DROPPED - 1);
		if (rt_patch_dropped[j].slot == e->slot || !rt_patch_dropped[j].slot) {
			at = j;
			break;
		}
	}
	rt_patch_dropped[at].slot = e->slot; /* else the first of the window is evicted */
	rt_patch_dropped[at].orig = e->orig;
	__atomic_store_n(&rt_patch_dropped_lock, 0, __ATOMIC_RELEASE);
}

static int rt_patch_undrop(uint64_t *slot, uint64_t *orig)
{
	uint32_t h = rt_patch_hash(slot);
	int found = 0;
	rt_patch_spin(&rt_patch_dropped_lock);
	for (uint32_t k = 0; k < RT_PATCH_PROBE && !found; k++) {
		uint32_t j = (h + k) & (RT_PATCH_DROPPED - 1);
		if (rt_patch_dropped[j].slot == slot) {
			*orig = rt_patch_dropped[j].orig;
			rt_patch_dropped[j].slot = NULL;
			found = 1;
		}
	}
	__atomic_store_n(&rt_patch_dropped_lock, 0, __ATOMIC_RELEASE);
	return found;
}

/*
 * A frame entered on another thread returns on this one: a coroutine (a
 * fiber of a scheduler that moves work between threads) resumed elsewhere,
 * its frames still on the shadow stack of the thread that ran it first,
 * which has not left them (it waits in pthread_join, say).  That thread's
 * entry for slot gives the way back, and is marked gone there (never
 * written through, never taken again).  Two threads holding an entry for
 * slot are two frames, one stale: which is not known, and a wrong one
 * returned the coroutine into another call site (the program's result
 * changed); then, as with none, the program is stopped.  Only threads
 * with a return stub of their own are known (rt_patch_ret_pt: the first
 * RT_PATCH_NRETS).  Under the
 * lock a shadow stack's growth and unmapping take, so none moves while it
 * is read; an entry is taken only if its slot is still slot after its
 * return address was read (an entry reused meanwhile has another slot: one
 * stack's slots are one thread's at a time).  Before, the program was
 * aborted ("lost track of a patched function's return address").
 */
static int rt_patch_from_other_thread(const struct rt_patch_thread *self, uint64_t *slot, uint64_t *orig)
{
	struct rt_patch_ent *found = NULL;
	uint64_t v = 0;
	int several = 0;
	rt_patch_spin(&rt_patch_dropped_lock);
	for (uint32_t k = 0; k < RT_PATCH_NRETS && !several; k++) {
		struct rt_patch_thread *o =
			(struct rt_patch_thread *)(uintptr_t)__atomic_load_n(&rt_patch_ret_pt[k], __ATOMIC_ACQUIRE);
		if (!o || o == self)
			continue;
		uint32_t n = __atomic_load_n(&o->n, __ATOMIC_ACQUIRE);
		if (n > o->cap)
			n = o->cap;
		for (uint32_t i = n; i-- > 0 && !several;) {
			struct rt_patch_ent *e = &o->e[i];
			if (__atomic_load_n(&e->slot, __ATOMIC_ACQUIRE) != slot ||
			    __atomic_load_n(&e->restored, __ATOMIC_ACQUIRE) != 0)
				continue;
			uint64_t r = __atomic_load_n(&e->orig, __ATOMIC_ACQUIRE);
			if (__atomic_load_n(&e->slot, __ATOMIC_ACQUIRE) != slot || rt_patch_is_ret(r))
				continue;
			several = found != NULL;
			found = e;
			v = r;
		}
	}
	/* taken once: marked gone where it was, so that a later frame at this
	 * slot (the coroutine calling from another site) never finds it */
	int zero = 0;
	int ok = found && !several &&
		 __atomic_compare_exchange_n(&found->restored, &zero, RT_PATCH_GONE, 0, __ATOMIC_ACQ_REL,
					     __ATOMIC_ACQUIRE);
	__atomic_store_n(&rt_patch_dropped_lock, 0, __ATOMIC_RELEASE);
	if (ok)
		*orig = v;
	return ok;
}

/*
 * A patched function was entered; slot holds its return address.  Frames
 * whose slot lies at or below it are gone (a longjmp or an exception went
 * past them): they are closed first.  A slot that already holds
 * rt_patch_return is a tail jump from a patched function (RT_PATCH_TAIL).
 */
static void rt_patch_enter_general(uint64_t ret_into_fn, uint64_t *slot, int tramp);
static struct rt_patch_thread *rt_patch_grow(struct rt_patch_thread *pt);

/* Push entry i (claimed before it is filled), give the slot
 * rt_patch_return, leave the shadow-stack code (busy back to nested), and
 * record the entry.  chain: 0, else a tail jump's place in its chain (its
 * entry marked, its call site not known). */
static inline __attribute__((always_inline)) void rt_patch_push(struct rt_patch_thread *pt, uint32_t i,
								 uint64_t ret_into_fn, uint64_t *slot, int tramp,
								 uint64_t orig, int nested, uint32_t chain)
{
	pt->n = i + 1;
	RT_COMPILER_BARRIER();
	struct rt_patch_ent *e = &pt->e[i];
	/* a trampoline (rt_patch_cs.c) holds its function's address before
	 * its 6-byte call */
	uint64_t fn = rt_patch_function(ret_into_fn, tramp);
	e->slot = chain ? (uint64_t *)((uintptr_t)slot - RT_PATCH_TAIL) : slot;
	e->orig = orig;
	e->fn = fn;
	e->restored = 0;
	if (chain)
		e->chain = chain;
	RT_COMPILER_BARRIER();
	*slot = pt->ret;
	RT_COMPILER_BARRIER();
	RT_GUARD(pt->busy, nested);
	/* the return address is the call site the entry records; a tail
	 * jump's is where the function that jumped was called from, not a
	 * site of its own: none (the jump's address is not known) */
	rt_probe_enter((void *)(uintptr_t)fn, chain ? NULL : (void *)(uintptr_t)orig);
}

/* (no frame pointer: the exception hooks below need theirs, not this) */
RT_PATCH_NO_FRAME_POINTER void rt_patch_enter(uint64_t ret_into_fn, uint64_t *slot, int tramp)
{
	struct rt_patch_thread *pt = rt_pt_p;
	if (RT_LIKELY(pt && !rt_patch_in_rt && !rt_sel_on && rt_self.state == RT_ACTIVE && !pt->busy)) {
		RT_GUARD(pt->busy, 1);
		RT_COMPILER_BARRIER();
		uint32_t n = pt->n;
		uint64_t orig = *slot;
		/* the common case, what rt_patch_enter_general does when no
		 * frame was left and this is no tail call: a push */
		if (RT_LIKELY(!rt_patch_is_ret(orig) && n < pt->cap &&
			      (n == 0 || pt->e[n - 1].slot > slot))) {
			rt_patch_push(pt, n, ret_into_fn, slot, tramp, orig, 0, 0);
			return;
		}
		RT_GUARD(pt->busy, 0);
	}
	rt_patch_enter_general(ret_into_fn, slot, tramp);
}

__attribute__((noinline)) static void rt_patch_enter_general(uint64_t ret_into_fn, uint64_t *slot, int tramp)
{
	struct rt_thread *t = &rt_self;
	if (RT_UNLIKELY(rt_patch_in_rt))
		return;
	/* not selected (stint record --function...): its return address is
	 * left alone, and it costs this test only */
	if (RT_UNLIKELY(rt_sel_on) && rt_sel_skip(rt_patch_function(ret_into_fn, tramp)))
		return;
	if (RT_UNLIKELY(t->state != RT_ACTIVE)) {
		if (t->state == RT_DONE) /* (a clone child on our thread pointer too: writes nothing) */
			return;
		rt_patch_in_rt = 1;
		int ok = rt_thread_start(t);
		rt_patch_in_rt = 0;
		if (!ok)
			return;
	}
	struct rt_patch_thread *pt = rt_pt_p;
	if (RT_UNLIKELY(!pt)) {
		if (!(pt = rt_thread_block((void **)&rt_pt_p, rt_patch_bytes(RT_PATCH_DEPTH))))
			return; /* (no memory: this call unrecorded, its return address left alone) */
		if (!pt->cap) { /* (a return address before the room: the fast path waits for cap) */
			rt_patch_claim_ret(pt);
			RT_COMPILER_BARRIER();
			pt->cap = RT_PATCH_DEPTH;
		}
	}
	/* A signal handler that interrupted the shadow-stack code of this
	 * thread (nested set) only pushes on top and pops its own entries,
	 * which it does before the interrupted code goes on: every step
	 * below leaves n consistent, and an entry is claimed before it is
	 * filled. */
	int nested = pt->busy;
	RT_GUARD(pt->busy, 1);
	RT_COMPILER_BARRIER();
	uint64_t orig = *slot;
	int tail = rt_patch_is_ret(orig);
	uint32_t chain = 0;
	while (!nested && pt->n) {
		struct rt_patch_ent *e = &pt->e[pt->n - 1];
		uintptr_t at = rt_patch_slot_of(e);
		if (at > (uintptr_t)slot || (uintptr_t)slot - at >= RT_PATCH_STALE ||
		    !rt_patch_same_stack((uintptr_t)slot, at))
			break;
		uint64_t fn = e->fn;
		if (at == (uintptr_t)slot && tail) {
			/* the frame that jumped (or its chain's innermost):
			 * kept, the new entry its callee (RT_PATCH_TAIL) */
			chain = rt_patch_is_tail(e) ? e->chain + 1 : 1;
			orig = e->orig;
			if (chain <= RT_PATCH_CHAIN_MAX)
				break;
			chain = RT_PATCH_CHAIN_MAX; /* replaces the innermost */
		} else {
			rt_patch_drop(e);
		}
		if (e->restored == 1)
			pt->nrestored--;
		RT_COMPILER_BARRIER();
		pt->n--;
		RT_COMPILER_BARRIER();
		rt_patch_exit_event(fn);
		if (chain)
			break;
	}
	if (chain)
		tail = 0;
	uint32_t i = pt->n;
	if (RT_UNLIKELY(i == pt->cap) && !tail && !nested) {
		struct rt_patch_thread *more = rt_patch_grow(pt);
		if (more)
			pt = more;
	}
	if (tail || i == pt->cap) { /* no entry to pair an exit with */
		RT_COMPILER_BARRIER();
		RT_GUARD(pt->busy, nested);
		/* a tail call in a signal handler that interrupted the
		 * shadow-stack code, which may not touch the entries below:
		 * still a call, counted as one of no length (its time stays
		 * its caller's), as a library call with no room to follow is.
		 * Before, it went uncounted: 6 % of a handler's tail calls. */
		if (tail && nested) {
			uint64_t fn = rt_patch_function(ret_into_fn, tramp);
			rt_probe_enter((void *)(uintptr_t)fn, NULL);
			rt_probe_exit((void *)(uintptr_t)fn, NULL);
		}
		return;
	}
	rt_patch_push(pt, i, ret_into_fn, slot, tramp, orig, nested, chain);
}

/*
 * A stack deeper than the shadow stack holds (recursion): twice the room,
 * so that every call of it is still recorded (before, the calls past 1024
 * patched frames went unrecorded, and their counts were short).  The
 * mapping grows in place or moves (mremap); no signal handler runs
 * meanwhile, which would find the old address.  Raw system calls: a
 * probe's path keeps the program's vector registers as they are.
 */
__attribute__((noinline, cold)) static struct rt_patch_thread *rt_patch_grow(struct rt_patch_thread *pt)
{
	if (pt->cap >= RT_PATCH_DEPTH_MAX || rt_g.no_syscalls)
		return NULL;
	uint64_t all = ~0ull, old;
	arch_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8, 0, 0);
	/* (another thread may be reading it: rt_patch_from_other_thread) */
	rt_patch_spin(&rt_patch_dropped_lock);
	uint32_t cap = pt->cap * 2;
	long m = arch_syscall6(SYS_mremap, (long)pt, (long)rt_patch_bytes(pt->cap), (long)rt_patch_bytes(cap),
			       MREMAP_MAYMOVE, 0, 0);
	struct rt_patch_thread *more = NULL;
	if ((unsigned long)m <= -4096ul) {
		more = (struct rt_patch_thread *)m;
		more->cap = cap;
		if (more->ret_k != UINT32_MAX)
			__atomic_store_n(&rt_patch_ret_pt[more->ret_k], (uint64_t)(uintptr_t)more, __ATOMIC_RELEASE);
		rt_pt_p = more;
	}
	__atomic_store_n(&rt_patch_dropped_lock, 0, __ATOMIC_RELEASE);
	arch_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
	return more;
}

/* A patched function returned through slot: its caller's address. */
static uint64_t rt_patch_leave_search(struct rt_patch_thread *pt, uint64_t *slot, int nested);

/* (no frame pointer: the exception hooks below need theirs, not this) */
RT_PATCH_NO_FRAME_POINTER uint64_t rt_patch_leave(uint64_t *slot)
{
	struct rt_patch_thread *pt = rt_pt_p; /* (mapped: a frame was swapped) */
	int nested = pt->busy;
	RT_GUARD(pt->busy, 1);
	RT_COMPILER_BARRIER();
	uint32_t n = pt->n;
	if (RT_LIKELY(n > 0 && pt->e[n - 1].slot == slot)) {
		/* the common case, rt_patch_leave_search's first turn: the
		 * innermost frame returns.  The shadow stack is consistent
		 * before the exit's probe, whose own guard queues a signal
		 * handler's events */
		uint64_t orig = pt->e[n - 1].orig, fn = pt->e[n - 1].fn;
		RT_COMPILER_BARRIER();
		pt->n = n - 1;
		RT_COMPILER_BARRIER();
		RT_GUARD(pt->busy, nested);
		rt_patch_exit_event(fn);
		return orig;
	}
	return rt_patch_leave_search(pt, slot, nested);
}

__attribute__((noinline)) static uint64_t rt_patch_leave_search(struct rt_patch_thread *pt, uint64_t *slot,
								 int nested)
{
	for (uint32_t i = pt->n; i-- > 0;) {
		if (pt->e[i].slot != slot)
			continue;
		/* entries above it are frames that never returned, or the
		 * tail jumps it made, which return with it (RT_PATCH_TAIL) */
		while (pt->n > i + 1) {
			uint64_t fn = pt->e[pt->n - 1].fn;
			rt_patch_drop(&pt->e[pt->n - 1]);
			if (pt->e[pt->n - 1].restored == 1)
				pt->nrestored--;
			RT_COMPILER_BARRIER();
			pt->n--;
			RT_COMPILER_BARRIER();
			rt_patch_exit_event(fn);
		}
		uint64_t orig = pt->e[i].orig, fn = pt->e[i].fn;
		RT_COMPILER_BARRIER();
		pt->n = i;
		RT_COMPILER_BARRIER();
		rt_patch_exit_event(fn);
		RT_GUARD(pt->busy, nested);
		return orig;
	}
	/* a frame dropped as dead that was not (a coroutine's): its exit was
	 * recorded when it was dropped */
	uint64_t orig;
	if (rt_patch_undrop(slot, &orig) || rt_patch_from_other_thread(pt, slot, &orig)) {
		RT_GUARD(pt->busy, nested);
		return orig;
	}
	rt_patch_die("stint: lost track of a patched function's return address\n");
	return 0;
}

/* ------------------------------------------------------------------------
 * Exceptions and thread exit: unwinders must see the real return addresses
 * --------------------------------------------------------------------- */

static void rt_patch_restore_all(void)
{
	struct rt_patch_thread *pt = rt_pt_p;
	if (!pt)
		return;
	for (uint32_t i = 0; i < pt->n; i++)
		if (!pt->e[i].restored) {
			if (!rt_patch_is_tail(&pt->e[i])) /* (its chain's first entry writes) */
				*pt->e[i].slot = pt->e[i].orig;
			pt->e[i].restored = 1;
			pt->nrestored++;
		}
}

/* A handler finished below sp: frames under it were unwound, the others
 * are live and get their swapped return addresses back. */
/* The innermost entry, unwound: dropped and closed (pt->busy held). */
static void rt_patch_close_innermost(struct rt_patch_thread *pt)
{
	rt_patch_drop(&pt->e[pt->n - 1]);
	pt->n--;
	if (pt->e[pt->n].restored == 1)
		pt->nrestored--;
	rt_patch_exit_event(pt->e[pt->n].fn);
}

static void rt_patch_after_catch(void *sp)
{
	struct rt_patch_thread *pt = rt_pt_p;
	if (!pt || !pt->nrestored)
		return;
	int nested = pt->busy;
	RT_GUARD(pt->busy, 1);
	RT_COMPILER_BARRIER();
	while (pt->n && rt_patch_slot_of(&pt->e[pt->n - 1]) < (uintptr_t)sp)
		rt_patch_close_innermost(pt);
	for (uint32_t i = 0; i < pt->n; i++)
		if (pt->e[i].restored == 1) {
			if (!rt_patch_is_tail(&pt->e[i]))
				*pt->e[i].slot = pt->ret;
			pt->e[i].restored = 0;
		}
	pt->nrestored = 0;
	RT_COMPILER_BARRIER();
	RT_GUARD(pt->busy, nested);
}

/*
 * The unwinder lands in a frame whose stack pointer is sp (a catch block,
 * a cleanup, Rust's catch_unwind): every frame whose return slot lies below
 * sp was unwound.  They are closed innermost first, whichever shadow stack
 * holds them (library calls, patched functions), so the reader closes each
 * in its place and the landing frame's next calls are its own, not the
 * thrower's; the live ones get their swapped return addresses back.
 * Called from _Unwind_SetIP, which a personality routine calls just before
 * the unwinder jumps to the landing pad.  -finstrument-functions entries
 * below sp are closed too: GCC's cleanups call their exit probes as the
 * exception passes, but clang calls them only before a return, and C code
 * between (a qsort comparator's caller) has no cleanups at all; the frames
 * left open took every later call of the catching function as theirs.
 */
void rt_unwound_below(void *sp)
{
	struct rt_thread *t = &rt_self;
	struct rt_patch_thread *pt = rt_pt_p;
	if (t->plt_busy || (pt && pt->busy))
		return; /* a signal handler inside the shadow-stack code: left as it is */
	RT_GUARD(t->plt_busy, 1);
	if (pt)
		RT_GUARD(pt->busy, 1);
	RT_COMPILER_BARRIER();
	for (;;) {
		/* (the thread's stack is in call order: its top is innermost) */
		rt_close_left(t, (uint64_t)(uintptr_t)sp, RT_PLT_SAME_STACK);
		uintptr_t lib = (uintptr_t)rt_plt_unwound(sp);
		uintptr_t pat = 0;
		if (pt && pt->n && rt_patch_slot_of(&pt->e[pt->n - 1]) < (uintptr_t)sp &&
		    rt_patch_same_stack(rt_patch_slot_of(&pt->e[pt->n - 1]), (uintptr_t)sp))
			pat = rt_patch_slot_of(&pt->e[pt->n - 1]);
		if (!lib && !pat)
			break;
		if (lib && (!pat || lib < pat)) /* the innermost: the lower address */
			rt_plt_close_innermost();
		else
			rt_patch_close_innermost(pt);
	}
	RT_COMPILER_BARRIER();
	if (pt)
		RT_GUARD(pt->busy, 0);
	RT_GUARD(t->plt_busy, 0);
	rt_walk_end(); /* the live ones re-armed */
}

void rt_walk_begin(void)
{
	rt_plt_restore_all();
	rt_patch_restore_all();
}

void rt_walk_end(void)
{
	rt_patch_after_catch(NULL); /* nothing was unwound: every one re-armed */
	rt_plt_rearm(NULL);
}

int rt_walk_own_frame(const void *ip)
{
	Dl_info self, at;
	return dladdr((void *)rt_walk_begin, &self) && dladdr(ip, &at) && self.dli_fbase == at.dli_fbase;
}

/*
 * glibc's backtrace() walks the stack with libgcc's unwinder, which it
 * loads itself (not the _Unwind_Backtrace above, rt_plt.c): the swapped
 * return addresses of patched functions and library calls ended its walk
 * at rt_patch_return (1 frame of 6), and backtrace_symbols printed
 * stint's library.  The real ones are put back while it runs.
 */
RT_API int backtrace(void **buf, int size)
{
	static int (*real)(void **, int);
	if (!real)
		real = (int (*)(void **, int))dlsym(RTLD_NEXT, "backtrace");
	if (!real)
		return 0;
	if (size <= 0)
		return real(buf, size);
	/* one more: the first is this function's own frame, left out */
	void **all = size <= 1024 ? alloca(((size_t)size + 1) * sizeof(*all)) : buf;
	rt_walk_begin();
	int n = real(all, all == buf ? size : size + 1);
	rt_walk_end();
	if (n <= 0)
		return n;
	int from = rt_walk_own_frame(all[0]) ? 1 : 0, m = n - from < size ? n - from : size;
	memmove(buf, all + from, (size_t)m * sizeof(*buf));
	return m;
}

RT_API void __cxa_throw(void *obj, void *type, void (*dtor)(void *))
{
	static void (*real)(void *, void *, void (*)(void *));
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (void (*)(void *, void *, void (*)(void *)))rt_next_fn_or_die(
			"__cxa_throw", (void *)__cxa_throw, __builtin_return_address(0));
	/* (also done by _Unwind_RaiseException's interposer, rt_plt.c, which
	 * libstdc++ may reach without going through here) */
	rt_patch_restore_all();
	real(obj, type, dtor);
	__builtin_unreachable();
}

RT_API void __cxa_rethrow(void)
{
	static void (*real)(void);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (void (*)(void))rt_next_fn_or_die("__cxa_rethrow", (void *)__cxa_rethrow,
							 __builtin_return_address(0));
	rt_patch_restore_all();
	real();
	__builtin_unreachable();
}

/* std::rethrow_exception(std::exception_ptr): one pointer, passed by value */
RT_API void _ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE(void *p)
{
	static void (*real)(void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (void (*)(void *))rt_next_fn_or_die(
			"_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
			(void *)_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE, __builtin_return_address(0));
	rt_patch_restore_all();
	real(p);
	__builtin_unreachable();
}

/* libstdc++'s per-thread exception state (the Itanium C++ ABI's) */
struct rt_cxa_eh_globals {
	void *caught;
	unsigned int uncaught;
};

RT_API void __cxa_end_catch(void)
{
	static void (*real)(void);
	static struct rt_cxa_eh_globals *(*globals)(void);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen)) {
		globals = (struct rt_cxa_eh_globals * (*)(void)) rt_next_fn("__cxa_get_globals", NULL,
									      __builtin_return_address(0));
		real = (void (*)(void))rt_next_fn_or_die("__cxa_end_catch", (void *)__cxa_end_catch,
							 __builtin_return_address(0));
	}
	real();
	/* A catch block left by a rethrow (its cleanup calls this), or a
	 * handler inside a destructor run by the unwinder: an exception is
	 * still in flight and needs the real return addresses.  Otherwise
	 * everything below our caller's frame is gone. */
	struct rt_cxa_eh_globals *g = globals ? globals() : NULL;
	if (!g || g->uncaught == 0)
		rt_patch_after_catch((char *)__builtin_frame_address(0) + 16);
}

RT_API int sigaltstack(const stack_t *ss, stack_t *old)
{
	static int (*real)(const stack_t *, stack_t *);
	if (!real)
		real = (int (*)(const stack_t *, stack_t *))dlsym(RTLD_NEXT, "sigaltstack");
	int r = real(ss, old);
	if (r == 0 && ss) {
		int off = ss->ss_flags & SS_DISABLE;
		rt_alt_lo = off ? 0 : (uintptr_t)ss->ss_sp;
		rt_alt_hi = off ? 0 : (uintptr_t)ss->ss_sp + ss->ss_size;
	}
	return r;
}

RT_API void pthread_exit(void *ret)
{
	static void (*real)(void *);
	if (!real)
		real = (void (*)(void *))dlsym(RTLD_NEXT, "pthread_exit");
	rt_patch_restore_all(); /* it unwinds the thread's stack */
	real(ret);
	__builtin_unreachable();
}

/* ------------------------------------------------------------------------
 * Rewriting NOP sites
 * --------------------------------------------------------------------- */

static uintptr_t rt_patch_done[1024]; /* load bases of the modules handled */
static unsigned rt_patch_ndone;
static pthread_mutex_t rt_patch_lock = PTHREAD_MUTEX_INITIALIZER;

/* A block of n bytes (read-write) mapped within reach of a rel32 from all
 * of [lo, hi), or NULL. */
uint8_t *rt_patch_near(uintptr_t lo, uintptr_t hi, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	n = (n + page - 1) & ~(page - 1);
	for (int dir = 0; dir < 2; dir++)
		for (uintptr_t k = 1; k < 1024; k++) {
			uintptr_t at = dir == 0 ? ((hi + page - 1) & ~(page - 1)) + k * (1u << 20)
						: (lo & ~(page - 1)) - k * (1u << 20) - n;
			if (dir == 1 && lo < k * (1u << 20) + n + page)
				break;
			if (dir == 0 ? at + n - lo >= (1u << 31) : hi - at >= (1u << 31))
				break;
			void *m = mmap((void *)at, n, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (m == MAP_FAILED)
				continue;
			if ((uintptr_t)m != at) { /* an old kernel took it as a hint */
				munmap(m, n);
				continue;
			}
			return m;
		}
	return NULL;
}

/* An island "jmp *0(%rip); .quad target" within reach of [lo, hi). */
static uint8_t *rt_patch_island_to(uintptr_t lo, uintptr_t hi, uint64_t target)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = rt_patch_near(lo, hi, page);
	if (!p)
		return NULL;
	memset(p, 0xcc, page);
	p[0] = 0xff;
	p[1] = 0x25;
	memset(p + 2, 0, 4);
	memcpy(p + 6, &target, 8);
	mprotect(p, page, PROT_READ | PROT_EXEC);
	return p;
}

static uint8_t *rt_patch_island(uintptr_t lo, uintptr_t hi)
{
	return rt_patch_island_to(lo, hi, (uint64_t)(uintptr_t)rt_patch_entry);
}

static int rt_patch_is_nop5(const uint8_t *p)
{
	/* nopl disp8(%rax,%rax,1): GCC's displacement is 0, LLVM's 8 */
	static const uint8_t nopl[4] = {0x0f, 0x1f, 0x44, 0x00};
	return memcmp(p, nopl, 4) == 0 ||
	       (p[0] == 0x90 && p[1] == 0x90 && p[2] == 0x90 && p[3] == 0x90 && p[4] == 0x90);
}

/* The executable PT_LOAD segment holding addr, as [lo, hi) and its flags. */
static int rt_patch_segment(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t *lo,
			    uintptr_t *hi)
{
	const ElfW(Phdr) *ph = rt_patch_load_segment(info, addr, 1);
	if (!ph)
		return 0;
	uintptr_t a = info->dlpi_addr + ph->p_vaddr;
	if (addr + 5 > a + ph->p_memsz)
		return 0;
	*lo = a;
	*hi = a + ph->p_memsz;
	return 1;
}

/*
 * Patch the NOP sites listed in one module's __patchable_function_entries
 * and __mcount_loc sections, found through the section headers of its
 * file (they are not in the program headers) and read from memory, where
 * the dynamic linker relocated them.
 */
/* Whether the ELF file (mapped) imports name: an undefined dynamic symbol. */
static int rt_patch_imports(const uint8_t *f, size_t fsz, const char *name)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	for (unsigned s = 0; s < eh->e_shnum; s++) {
		if (sh[s].sh_type != SHT_DYNSYM || sh[s].sh_link >= eh->e_shnum ||
		    sh[s].sh_offset + sh[s].sh_size > fsz || sh[s].sh_entsize != sizeof(ElfW(Sym)))
			continue;
		const ElfW(Shdr) *str = &sh[sh[s].sh_link];
		if (str->sh_offset + str->sh_size > fsz)
			continue;
		const ElfW(Sym) *sym = (const void *)(f + sh[s].sh_offset);
		for (size_t i = 0; i < sh[s].sh_size / sizeof(ElfW(Sym)); i++)
			if (sym[i].st_shndx == SHN_UNDEF && sym[i].st_name < str->sh_size &&
			    strcmp((const char *)f + str->sh_offset + sym[i].st_name, name) == 0)
				return 1;
	}
	return 0;
}

/* Whether this process moves instructions to patch functions without a
 * patch site: its program was not built with -finstrument-functions (an
 * instrumented program's other libraries stay library calls, as without
 * this). */
static int rt_patch_cs_on = -1;

/* STINT_PATCH_LIBS, read once before anything is patched: the program may
 * define getenv itself (bash does), and a patched one must not run from
 * the runtime's walks of the modules */
static const char *rt_patch_libs;

/* Whether list (STINT_PATCH_LIBS: "all", or names separated by commas)
 * names the library file base: the whole name, or its start up to a dot
 * ("libz", "libMagickCore-6.Q16" and "libpython3.11" for libz.so.1,
 * libMagickCore-6.Q16.so.6 and libpython3.11.so.1.0; only the part before
 * the first dot matched before). */
static int rt_patch_has(const char *list, const char *base)
{
	for (const char *p = list; p && *p;) {
		size_t l = strcspn(p, ",");
		if ((l == 3 && strncmp(p, "all", 3) == 0) ||
		    (l && strncmp(p, base, l) == 0 && (base[l] == '.' || base[l] == 0)))
			return 1;
		p += l + (p[l] == ',');
	}
	return 0;
}

/* what the runtime itself runs on, never patched */
static int rt_patch_never(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	static const char *const never[] = {"ld-linux", "ld64.so", "libc.so", "libc-", "libpthread", "libdl.",
					    "libdl-", "librt.", "libgcc_s", "libstint-", "libcapstone", "linux-vdso"};
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (strncmp(base, never[i], strlen(never[i])) == 0)
			return 1;
	return 0;
}

int rt_patch_module_selected(const char *name)
{
	if (!name || !*name) {
		/* the program itself, unless it is one of those run as a
		 * program (`/lib/x86_64-linux-gnu/libc.so.6` prints its
		 * version): patching the C library the runtime calls while it
		 * patches crashed it.  Nor a program the dynamic linker was
		 * run with (`ld-linux-x86-64.so.2 ./app`): /proc/self/exe,
		 * where its symbols are read, is then the linker's file */
		static int program = -1;
		if (program < 0) {
			char exe[4096];
			ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = 0;
			program = !rt_patch_never(exe);
		}
		return program;
	}
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (rt_patch_never(name))
		return 0;
	static const char *const sys[] = {"/lib/", "/lib32/", "/lib64/", "/libx32/", "/usr/lib/", "/usr/lib32/",
					  "/usr/lib64/", "/usr/libx32/"};
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
		if (strncmp(name, sys[i], strlen(sys[i])) == 0)
			return rt_patch_has(rt_patch_libs, base);
	return 1;
}

/*
 * Whether a table's sites are functions' entries (or right after an
 * endbr64 there), looking at its first few against the module's function
 * symbols.  -fpatchable-function-entry=N,M with M > 0 lists NOPs M bytes
 * before the entry: the call written there ran into the middle of the
 * function (SIGSEGV), or, M >= 5, was never run (nothing recorded, nothing
 * said).  Such a module is patched as one without sites.  A module with no
 * function symbols (stripped of both tables) is believed.
 */
static int rt_patch_sites_at_entries(const struct dl_phdr_info *info, const uint8_t *f, size_t fsz,
				     const uint64_t *sites, size_t n)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	uintptr_t bias = eh->e_type == ET_DYN ? info->dlpi_addr : 0;
	size_t nfns = 0, checked = n < 16 ? n : 16;
	static const unsigned tables[2] = {SHT_SYMTAB, SHT_DYNSYM};
	for (int t = 0; t < 2 && !nfns; t++) {
		unsigned want = tables[t];
		for (unsigned s = 0; s < eh->e_shnum; s++) {
			if (sh[s].sh_type != want || sh[s].sh_entsize != sizeof(ElfW(Sym)) ||
			    sh[s].sh_offset + sh[s].sh_size > fsz)
				continue;
			const ElfW(Sym) *sym = (const void *)(f + sh[s].sh_offset);
			for (size_t k = 0; k < sh[s].sh_size / sizeof(ElfW(Sym)); k++) {
				if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value ||
				    sym[k].st_shndx == SHN_UNDEF)
					continue;
				nfns++;
				uintptr_t entry = bias + sym[k].st_value;
				for (size_t i = 0; i < checked; i++) {
					uintptr_t site = (uintptr_t)sites[i];
					uint32_t endbr = 0;
					if (site == entry + 4)
						memcpy(&endbr, (const void *)entry, 4);
					if (site == entry || endbr == 0xfa1e0ff3u)
						return 1;
				}
			}
		}
	}
	return nfns == 0;
}

/* Whether section s is a table of NOP patch sites. */
static int rt_patch_is_site_table(const uint8_t *f, size_t fsz, const ElfW(Shdr) *sh, unsigned s)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *strs = &sh[eh->e_shstrndx];
	if (sh[s].sh_name >= strs->sh_size || strs->sh_offset + strs->sh_size > fsz)
		return 0;
	const char *nm = (const char *)f + strs->sh_offset + sh[s].sh_name;
	if (strcmp(nm, "__patchable_function_entries") != 0 && strcmp(nm, "__mcount_loc") != 0)
		return 0;
	return (sh[s].sh_flags & SHF_ALLOC) && sh[s].sh_type == SHT_PROGBITS;
}

/*
 * The sites of a table (section s) of a shared library not relocated yet
 * (rt_patch_objects_added): in memory the table holds what the linker put
 * there, not the addresses; each slot's R_X86_64_RELATIVE relocation
 * gives the address (its addend, plus the load address).  Into a mapping
 * of *len bytes; NULL when a slot has no such relocation (the table is
 * then read once relocated, when dlopen returns).
 */
static uint64_t *rt_patch_early_sites(const struct dl_phdr_info *info, const uint8_t *f, size_t fsz,
				      const ElfW(Shdr) *sh, unsigned s, size_t *len)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	size_t n = sh[s].sh_size / 8;
	if (eh->e_type != ET_DYN || !n)
		return NULL;
	*len = n * 8 + n;
	uint64_t *sites = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sites == MAP_FAILED)
		return NULL;
	uint8_t *have = (uint8_t *)(sites + n);
	size_t found = 0;
	for (unsigned r = 0; r < eh->e_shnum; r++) {
		if (sh[r].sh_type != SHT_RELA || sh[r].sh_entsize != sizeof(ElfW(Rela)) ||
		    sh[r].sh_offset + sh[r].sh_size > fsz)
			continue;
		const ElfW(Rela) *rel = (const void *)(f + sh[r].sh_offset);
		for (size_t i = 0; i < sh[r].sh_size / sizeof(*rel); i++) {
			uint64_t off = rel[i].r_offset - sh[s].sh_addr;
			if (ELF64_R_TYPE(rel[i].r_info) != R_X86_64_RELATIVE || rel[i].r_offset < sh[s].sh_addr ||
			    off >= n * 8 || off % 8 || have[off / 8])
				continue;
			sites[off / 8] = info->dlpi_addr + (uint64_t)rel[i].r_addend;
			have[off / 8] = 1;
			found++;
		}
	}
	if (found != n) {
		munmap(sites, *len);
		return NULL;
	}
	return sites;
}

/*
 * Patch one module: its NOP sites, else (no site) its functions with
 * Capstone.  early: the module is not relocated yet (rt_patch_objects_added);
 * 0 when it must wait until dlopen returns (a site table without
 * relocations to read it from, or Capstone not loaded), else 1.
 */
static int rt_patch_module(const struct dl_phdr_info *info, int early)
{
	size_t nsites = 0;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	size_t fsz;
	const uint8_t *f = rt_map_elf(path, &fsz);
	if (!f)
		return 1;
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	uint8_t *island = NULL;
	int tables = 0;
	for (unsigned s = 0; s < eh->e_shnum; s++)
		tables += rt_patch_is_site_table(f, fsz, sh, s);
	if (early && !tables && !rt_patch_cs_loaded()) {
		rt_unmap_elf(f, fsz);
		return 0; /* Capstone is not loaded inside dlopen */
	}
	for (unsigned s = 0; early && s < eh->e_shnum; s++) { /* every table readable, or none patched now */
		size_t l;
		uint64_t *t = rt_patch_is_site_table(f, fsz, sh, s) ? rt_patch_early_sites(info, f, fsz, sh, s, &l) : NULL;
		if (t)
			munmap(t, l);
		else if (rt_patch_is_site_table(f, fsz, sh, s)) {
			rt_unmap_elf(f, fsz);
			return 0;
		}
	}
	for (unsigned s = 0; s < eh->e_shnum; s++) {
		if (!rt_patch_is_site_table(f, fsz, sh, s))
			continue;
		size_t early_len = 0;
		uint64_t *early_sites = early ? rt_patch_early_sites(info, f, fsz, sh, s, &early_len) : NULL;
		if (early && !early_sites)
			continue; /* (out of memory since the check above) */
		const uint64_t *sites = early ? early_sites : (const uint64_t *)(info->dlpi_addr + sh[s].sh_addr);
		size_t n = sh[s].sh_size / 8;
		if (!rt_patch_sites_at_entries(info, f, fsz, sites, n))
			n = 0; /* (NOPs before the entries: patched as without sites) */
		for (size_t i = 0; i < n; i++) {
			uintptr_t site = (uintptr_t)sites[i];
			uintptr_t lo, hi;
			if (!rt_patch_segment(info, site, &lo, &hi) || !rt_patch_is_nop5((uint8_t *)site))
				continue;
			/* a function the selection leaves out keeps its NOPs */
			if (rt_sel_on && !rt_sel_want(rt_patch_fn_of(site + 5)))
				continue;
			if (!island || (intptr_t)((uintptr_t)island - (site + 5)) != (int32_t)((uintptr_t)island - (site + 5))) {
				island = rt_patch_island(lo, hi);
				if (!island)
					break;
				rt_patch_own(info->dlpi_addr, island, (size_t)sysconf(_SC_PAGESIZE));
			}
			size_t page = (size_t)sysconf(_SC_PAGESIZE);
			uintptr_t pg = site & ~(page - 1);
			size_t len = ((site + 5 + page - 1) & ~(page - 1)) - pg;
			int rwx = mprotect((void *)pg, len, PROT_READ | PROT_WRITE | PROT_EXEC) == 0;
			if (!rwx && mprotect((void *)pg, len, PROT_READ | PROT_WRITE) < 0)
				continue;
			uint8_t call[5];
			int32_t rel = (int32_t)((uintptr_t)island - (site + 5));
			call[0] = 0xe8;
			memcpy(call + 1, &rel, 4);
			memcpy((void *)site, call, 5);
			mprotect((void *)pg, len, PROT_READ | PROT_EXEC);
			nsites++;
		}
		if (early_sites)
			munmap(early_sites, early_len);
	}
	/* no patch site of the compiler's: its functions' first instructions
	 * are moved (rt_patch_cs.c), in a program not built for
	 * instrumentation and the libraries it selects */
	if (!nsites && rt_patch_cs_on && rt_patch_module_selected(info->dlpi_name) &&
	    !rt_patch_imports(f, fsz, "__cyg_profile_func_enter") && !rt_patch_imports(f, fsz, "__fentry__")) {
		char shown[4096];
		const char *p = info->dlpi_name;
		if (!p || !*p) {
			ssize_t n = readlink("/proc/self/exe", shown, sizeof(shown) - 1);
			shown[n > 0 ? n : 0] = 0;
			p = shown;
		}
		rt_patch_cs_module(info, f, fsz, p);
	}
	rt_unmap_elf(f, fsz);
	return 1;
}

/* Whether a module not relocated yet (rt_patch_objects_added) can be
 * patched now: relocations in its code (DT_TEXTREL) would write over the
 * patches; such a module waits until dlopen returns. */
static int rt_patch_early_ok(const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++)
		if (dyn->d_tag == DT_TEXTREL || (dyn->d_tag == DT_FLAGS && (dyn->d_un.d_val & DF_TEXTREL)))
			return 0;
	return 1;
}

/* Set once the runtime's constructor has patched the modules loaded with
 * the program. */
static int rt_patch_ready;

/*
 * After a dlclose: the modules no longer loaded leave rt_patch_done, so
 * that one loaded later at the same address (the same library again, a
 * plugin reloaded, or another) is patched as the new code it is.  Before,
 * its functions went unrecorded: a library loaded, called and closed 1000
 * times counted the calls of its first load only.
 */
static uintptr_t rt_patch_loaded[sizeof(rt_patch_done) / sizeof(rt_patch_done[0])]; /* under rt_patch_lock */
static unsigned rt_patch_nloaded;

static int rt_patch_note_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (rt_patch_nloaded < sizeof(rt_patch_loaded) / sizeof(rt_patch_loaded[0]))
		rt_patch_loaded[rt_patch_nloaded++] = info->dlpi_addr;
	return 0;
}

static struct rt_patch_block {
	uintptr_t base;
	void *block;
	size_t len;
} rt_patch_blocks[4096]; /* under rt_patch_lock */
static unsigned rt_patch_nblocks;

void rt_patch_own(uintptr_t base, void *block, size_t len)
{
	if (rt_patch_nblocks < sizeof(rt_patch_blocks) / sizeof(rt_patch_blocks[0]))
		rt_patch_blocks[rt_patch_nblocks++] = (struct rt_patch_block){base, block, len};
	/* (else kept for good, as all were before) */
}

static int rt_patch_is_loaded(uintptr_t base)
{
	if (rt_patch_nloaded == sizeof(rt_patch_loaded) / sizeof(rt_patch_loaded[0]))
		return 1; /* (too many modules to tell) */
	for (unsigned k = 0; k < rt_patch_nloaded; k++)
		if (rt_patch_loaded[k] == base)
			return 1;
	return 0;
}

void rt_patch_after_dlclose(void)
{
	if (!__atomic_load_n(&rt_patch_ready, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&rt_patch_lock);
	rt_patch_nloaded = 0;
	dl_iterate_phdr(rt_patch_note_loaded, NULL);
	unsigned kept = 0;
	for (unsigned i = 0; i < rt_patch_ndone; i++)
		if (rt_patch_is_loaded(rt_patch_done[i]))
			rt_patch_done[kept++] = rt_patch_done[i];
	rt_patch_ndone = kept;
	/* the module's code is gone, and no thread can be in what led to it */
	kept = 0;
	for (unsigned i = 0; i < rt_patch_nblocks; i++)
		if (rt_patch_is_loaded(rt_patch_blocks[i].base))
			rt_patch_blocks[kept++] = rt_patch_blocks[i];
		else
			munmap(rt_patch_blocks[i].block, rt_patch_blocks[i].len);
	rt_patch_nblocks = kept;
	pthread_mutex_unlock(&rt_patch_lock);
}

/* arg: non-NULL while the dynamic linker adds modules (rt_patch_objects_added) */
static int rt_patch_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (unsigned i = 0; i < rt_patch_ndone; i++)
		if (rt_patch_done[i] == info->dlpi_addr)
			return 0;
	if (arg && !rt_patch_early_ok(info))
		return 0; /* when dlopen returns */
	Dl_info self;
	int skip = (dladdr((void *)rt_patch_visit, &self) && (uintptr_t)self.dli_fbase == info->dlpi_addr) ||
		   (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso"));
	if (!skip && !rt_patch_module(info, arg != NULL))
		return 0; /* when dlopen returns */
	if (rt_patch_ndone < sizeof(rt_patch_done) / sizeof(rt_patch_done[0]))
		rt_patch_done[rt_patch_ndone++] = info->dlpi_addr;
	return 0;
}

/*
 * Modules a dlopen adds, patched before their constructors run.
 *
 * The dynamic linker tells debuggers about new modules through r_debug
 * (<link.h>): it sets r_state and calls the empty function at r_brk, a
 * debugger's breakpoint.  Inside dlopen it does so with RT_CONSISTENT once
 * every new module is mapped, before it relocates them and runs their
 * constructors.  The runtime turns that function into a jump to
 * rt_patch_debug_stub, which saves every register a call may clobber (ld.so
 * is compiled with -fipa-ra: its callers keep values in the registers they
 * know the empty function leaves alone), calls rt_patch_objects_added and
 * returns to ld.so's caller.  Only an r_brk that is a lone "ret" followed by
 * at least 4 bytes of padding is rewritten (the padding takes the jump's
 * other bytes, the "ret" becomes its first, one byte written last): else,
 * and where the code cannot be made writable, modules are patched when
 * dlopen returns, as before.  A debugger's breakpoint at r_brk still works:
 * it steps over the jump.
 */
extern void rt_patch_debug_stub(void); /* arch/x86_64/rt_patch_x86_64.S */
void rt_patch_objects_added(void) __attribute__((visibility("hidden")));


/*
 * From ld.so's r_brk (above), inside dlopen, with the dynamic linker's
 * lock held: once the new modules are mapped (RT_CONSISTENT), the modules
 * patched at load are patched now, so their constructors are recorded.
 * It never waits for a lock of ours that a thread may hold while it calls
 * into the dynamic linker (it leaves the work to rt_patch_init after
 * dlopen then), and never loads Capstone (a dlopen inside dlopen).
 */
void rt_patch_objects_added(void)
{
	if (_r_debug.r_state != RT_CONSISTENT || !__atomic_load_n(&rt_patch_ready, __ATOMIC_ACQUIRE) ||
	    !rt_patch_cs_on)
		return;
	/* the scan and the patching are the profiler's time, not dlopen's */
	int mark = rt_own_begin(0);
	rt_sel_after_dlopen();
	if (pthread_mutex_trylock(&rt_patch_lock) != 0) {
		rt_own_end(mark);
		return;
	}
	int early = 1;
	dl_iterate_phdr(rt_patch_visit, &early);
	rt_own_end(mark);
	pthread_mutex_unlock(&rt_patch_lock);
}

/* Point r_brk at rt_patch_debug_stub (once, from the constructor). */
static void rt_patch_hook_debug_state(void)
{
	uint8_t *brk = (uint8_t *)(uintptr_t)_r_debug.r_brk;
	if (!brk || brk[0] != 0xc3)
		return;
	for (int i = 1; i < 5; i++) /* the bytes of NOPs and int3 padding */
		if (brk[i] != 0x66 && brk[i] != 0x2e && brk[i] != 0x0f && brk[i] != 0x1f && brk[i] != 0x84 &&
		    brk[i] != 0x00 && brk[i] != 0x90 && brk[i] != 0xcc && brk[i] != 0x40 && brk[i] != 0x44)
			return;
	/* the padding: up to the next 16-byte boundary, where the next
	 * function may start */
	if ((((uintptr_t)brk + 16) & ~(uintptr_t)15) < (uintptr_t)brk + 5)
		return;
	uintptr_t at = (uintptr_t)brk;
	uint8_t *island = rt_patch_island_to(at, at + 5, (uint64_t)(uintptr_t)rt_patch_debug_stub);
	if (!island)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t pg = at & ~(page - 1);
	size_t len = ((at + 5 + page - 1) & ~(page - 1)) - pg;
	int rwx = mprotect((void *)pg, len, PROT_READ | PROT_WRITE | PROT_EXEC) == 0;
	if (!rwx && mprotect((void *)pg, len, PROT_READ | PROT_WRITE) < 0)
		return;
	int32_t rel = (int32_t)((uintptr_t)island - (at + 5));
	memcpy(brk + 1, &rel, 4);
	__atomic_store_n(brk, (uint8_t)0xe9, __ATOMIC_RELEASE);
	mprotect((void *)pg, len, PROT_READ | PROT_EXEC);
}

/* A fork child has one thread: the lock may have been held by another. */
void rt_patch_thread_unmap(void)
{
	struct rt_patch_thread *pt = rt_pt_p;
	if (!pt || pt->n || pt->busy || rt_g.no_syscalls)
		return; /* (frames still swapped: kept, a few pages) */
	rt_pt_p = NULL;
	rt_patch_spin(&rt_patch_dropped_lock); /* (rt_patch_from_other_thread) */
	if (pt->ret_k != UINT32_MAX)
		__atomic_store_n(&rt_patch_ret_pt[pt->ret_k], 0, __ATOMIC_RELEASE);
	munmap(pt, rt_patch_bytes(pt->cap));
	__atomic_store_n(&rt_patch_dropped_lock, 0, __ATOMIC_RELEASE);
}

void rt_patch_fork_child(void)
{
	pthread_mutex_init(&rt_patch_lock, NULL);
	rt_patch_dropped_lock = 0;
}

/* dl_iterate_phdr's first module is the program */
static int rt_patch_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	int *on = arg;
	size_t fsz;
	const uint8_t *f = rt_map_elf(path, &fsz);
	*on = 0;
	if (f) {
		*on = !rt_patch_imports(f, fsz, "__cyg_profile_func_enter");
		rt_unmap_elf(f, fsz);
	}
	return 1;
}

int rt_patch_program_probed(void)
{
	static int probed = -1;
	if (probed < 0) {
		int on = 0;
		dl_iterate_phdr(rt_patch_program, &on);
		const char *off = getenv("STINT_PATCH");
		probed = on && !(off && strcmp(off, "0") == 0);
	}
	return probed;
}

int rt_patch_wanted(void)
{
	if (rt_patch_cs_on < 0) {
		/* tests: as where Capstone is missing (recorder/rec_patch.c) */
		const char *nocs = getenv("STINT_NO_CAPSTONE");
		rt_patch_libs = getenv("STINT_PATCH_LIBS");
		rt_patch_cs_on = rt_patch_program_probed() && !(nocs && *nocs && strcmp(nocs, "0") != 0);
	}
	return rt_patch_cs_on;
}

void rt_patch_init(void)
{
	static int once;
	if (!__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		pthread_atfork(NULL, NULL, rt_patch_fork_child);
	pthread_mutex_lock(&rt_patch_lock);
	rt_patch_wanted();
	dl_iterate_phdr(rt_patch_visit, NULL);
	if (!rt_patch_ready && rt_patch_cs_on)
		rt_patch_hook_debug_state();
	pthread_mutex_unlock(&rt_patch_lock);
	__atomic_store_n(&rt_patch_ready, 1, __ATOMIC_RELEASE);
}
