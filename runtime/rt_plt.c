/*
 * rt_plt.c - probes around calls into shared libraries: what a call does
 * at run time once rt_plt_got.c rewrote its GOT entry.
 *
 * doc/numbers.md wants "before and after each call" an instrumented function makes,
 * also into libraries that were not instrumented, so that time in read,
 * malloc or usleep shows as those functions of libc.so.6.  Chosen by
 * measurement over rtld-audit (la_pltenter/la_pltexit copy a stack frame per
 * call and disable lazy binding tricks, several times the cost): GOT entries
 * point to per-entry stubs (rt_plt_got.c).
 *
 * The stub enters rt_plt_entry (rt_plt_x86_64.S), which records the entry
 * and, for a call that returns, swaps the return address for a return
 * thunk.  Each pair (return address, library function) has a thunk of its
 * own, so the way back is written in code and a table, never lost: a
 * longjmp, a context switch, a signal handler that leaves, or a C++
 * exception cannot make a return land in the wrong place.  A per-thread
 * shadow stack (t->rets) remembers the calls in flight with the stack
 * address of their return slot, for the bookkeeping:
 *   - a call whose slot lies at or below the slot of a new call or return
 *     on the same stack was left (longjmp, an exception, a handler that
 *     jumped out, a library that jumped by itself): it is closed then (an
 *     exit event);
 *   - longjmp/siglongjmp and setcontext close the calls they leave at once,
 *     from the stack pointer they jump to;
 *   - C++ exceptions: _Unwind_RaiseException is interposed and puts the
 *     original return addresses of the calls in flight back (only where the
 *     slot still holds our thunk), __cxa_begin_catch closes the calls that
 *     were unwound and re-arms the others;
 *   - an unwinder the program does not call through us (glibc cancelling a
 *     thread blocked in a library call, with libgcc_s's own
 *     _Unwind_ForcedUnwind; libunwind; a debugger) reads the thunks' unwind
 *     information, which leads it to the caller through the thunk's table
 *     entry (rt_plt_x86_64.S).
 * The runtime never aborts the program and never writes to the stack but
 * the return slot of the call being made, and slots it has checked still
 * hold its own thunk.
 *
 * Calls counted without swapping the return address (a zero-length call,
 * entry and exit at once): functions that return twice (setjmp, sigsetjmp,
 * getcontext, swapcontext, savectx), and those whose caller's address
 * matters (dlsym, dlvsym, dlmopen, dlopen when not interposed by rt.c).
 * Calls that do not return (exit, abort, pthread_exit, __cxa_throw, ...)
 * record their entry; the frame closes when the program is seen past it
 * (the rules above) or at the thread's end.  vfork is replaced by
 * rt_plt_vfork, which gives the child a process entry of its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "rt_int.h"
#include "rt_patch.h"
#include "rt_plt.h"
#include "rt_select.h"

extern char rt_plt_thunks[], rt_plt_thunks_end[];
/* Where rt_plt_entry goes: to `to`, or, when thunk is set, to the call
 * instruction of the thunk whose address rt_plt_enter wrote in the return
 * slot (rt_plt_x86_64.S). */
struct rt_plt_way {
	uint64_t to;
	uint64_t thunk;
};
struct rt_plt_way rt_plt_enter(uint64_t idx, uint64_t *ret_slot, const uint64_t *args)
	__attribute__((visibility("hidden")));
uint64_t rt_plt_leave(uint64_t k, uint64_t *ret_slot) __attribute__((visibility("hidden")));
int64_t rt_plt_vfork_child(int64_t r) __attribute__((visibility("hidden")));
int64_t rt_plt_vfork_parent(int64_t r) __attribute__((visibility("hidden")));

#define RT_PLT_THUNK 32 /* as in rt_plt_x86_64.S */
#define RT_PLT_NTHUNKS 65536 /* as in rt_plt_x86_64.S */
#define RT_PLT_HASH (2 * RT_PLT_NTHUNKS)

/* The return thunks' table: thunk k returns to thunk_ret[k], and closes a
 * call of slot thunk_slot[k].  thunk_hash maps (return address, slot) to
 * k + 1.  Entries are written once, under rt_plt_thunk_spin. */
/* read by the thunks' unwind information too (rt_plt_x86_64.S) */
uint64_t rt_plt_thunk_ret[RT_PLT_NTHUNKS] __attribute__((visibility("hidden")));
static uint32_t rt_plt_thunk_slot[RT_PLT_NTHUNKS];
static uint32_t rt_plt_thunk_hash[RT_PLT_HASH];
static uint32_t rt_plt_nthunks;
static int rt_plt_thunk_spin;

/* the thunks of rt_plt_x86_64.S are what this file counts on */
int rt_plt_thunks_ok(void)
{
	return (size_t)(rt_plt_thunks_end - rt_plt_thunks) == (size_t)RT_PLT_NTHUNKS * RT_PLT_THUNK;
}

/* In a fork child: another thread may have held the spin flag. */
void rt_plt_thunks_after_fork(void)
{
	rt_plt_thunk_spin = 0;
}

/* ------------------------------------------------------------------------
 * Return thunks
 * --------------------------------------------------------------------- */

/* The thunk's call instruction, and where the library function returns:
 * what its return slot holds while the call is in flight. */
#define RT_PLT_THUNK_CALL 3 /* call *%r11 */

static inline uint64_t rt_plt_thunk_addr(uint32_t k)
{
	return (uint64_t)(uintptr_t)(rt_plt_thunks + (size_t)k * RT_PLT_THUNK);
}

static inline uint64_t rt_plt_thunk_return(uint32_t k)
{
	return rt_plt_thunk_addr(k) + RT_PLT_THUNK_CALL;
}

static inline uint32_t rt_plt_hash_of(uint64_t ret, uint32_t idx)
{
	return (uint32_t)(((ret ^ ((uint64_t)idx << 40)) * 0x9E3779B97F4A7C15ull) >> 40) & (RT_PLT_HASH - 1);
}

/* The thunk of (ret, idx), made if new; ~0u when the table is full. */
static uint32_t rt_plt_thunk(uint32_t idx, uint64_t ret)
{
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	uint32_t c = __atomic_load_n(&s->last, __ATOMIC_ACQUIRE);
	if (RT_LIKELY(c && rt_plt_thunk_ret[c - 1] == ret && rt_plt_thunk_slot[c - 1] == idx))
		return c - 1;
	uint32_t h = rt_plt_hash_of(ret, idx);
	for (;;) {
		uint32_t e = __atomic_load_n(&rt_plt_thunk_hash[h], __ATOMIC_ACQUIRE);
		if (!e)
			break;
		if (rt_plt_thunk_ret[e - 1] == ret && rt_plt_thunk_slot[e - 1] == idx) {
			__atomic_store_n(&s->last, e, __ATOMIC_RELEASE);
			return e - 1;
		}
		h = (h + 1) & (RT_PLT_HASH - 1);
	}
	/* new: a spin flag held for a few stores.  Only other threads can
	 * hold it: this thread's signal handlers do not get here while it
	 * does (t->plt_busy makes their calls zero-length) */
	while (__atomic_exchange_n(&rt_plt_thunk_spin, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	uint32_t k = ~0u;
	for (;;) {
		uint32_t e = rt_plt_thunk_hash[h];
		if (!e) {
			if (rt_plt_nthunks < RT_PLT_NTHUNKS) {
				k = rt_plt_nthunks++;
				rt_plt_thunk_ret[k] = ret;
				rt_plt_thunk_slot[k] = idx;
				__atomic_store_n(&rt_plt_thunk_hash[h], k + 1, __ATOMIC_RELEASE);
			}
			break;
		}
		if (rt_plt_thunk_ret[e - 1] == ret && rt_plt_thunk_slot[e - 1] == idx) {
			k = e - 1;
			break;
		}
		h = (h + 1) & (RT_PLT_HASH - 1);
	}
	__atomic_store_n(&rt_plt_thunk_spin, 0, __ATOMIC_RELEASE);
	if (k != ~0u)
		__atomic_store_n(&s->last, k + 1, __ATOMIC_RELEASE);
	return k;
}

/* ------------------------------------------------------------------------
 * The shadow stack
 * --------------------------------------------------------------------- */

/* a and b (return slots) on one stack, a at or below b */
static inline int rt_plt_at_or_below(uint64_t *a, uint64_t *b)
{
	return a <= b && (uint64_t)((char *)b - (char *)a) < RT_PLT_SAME_STACK;
}

/* A call's exit, through the instrumented functions' own probe (its lean
 * path when the thread is on it). */
static void rt_plt_close(struct rt_thread *t, uint64_t fn)
{
	if (t->state == RT_ACTIVE)
		rt_probe_exit((void *)(uintptr_t)fn, NULL);
}

/*
 * Close the calls in flight whose return slot lies below `limit` (or at it,
 * when `at` is set) on its stack: the program has left them.  Entries of
 * other stacks (coroutines, a signal stack) are kept.
 */
static void rt_plt_drop_below(struct rt_thread *t, uint64_t *limit, int at)
{
	uint32_t n = t->nrets;
	int dropped = 0;
	/* innermost first: the reader closes frames in that order */
	for (uint32_t i = n; i-- > 0;) {
		struct rt_ret *r = &t->rets[i];
		if (at ? rt_plt_at_or_below(r->slot, limit)
		       : r->slot < limit && rt_plt_at_or_below(r->slot, limit)) {
			rt_plt_close(t, r->fn);
			r->fn = 0; /* marks it gone */
			dropped = 1;
		} else if (rt_plt_at_or_below(limit, r->slot)) {
			break; /* a live call above: older ones of this stack lie higher */
		}
	}
	if (!dropped)
		return;
	uint32_t j = 0;
	for (uint32_t i = 0; i < n; i++)
		if (t->rets[i].fn)
			t->rets[j++] = t->rets[i];
	t->nrets = j;
}

uint64_t *rt_plt_unwound(void *sp)
{
	struct rt_thread *t = &rt_self;
	if (!t->nrets)
		return NULL;
	uint64_t *slot = t->rets[t->nrets - 1].slot;
	return slot < (uint64_t *)sp && rt_plt_at_or_below(slot, sp) ? slot : NULL;
}

void rt_plt_close_innermost(void)
{
	struct rt_thread *t = &rt_self;
	if (t->nrets)
		rt_plt_close(t, t->rets[--t->nrets].fn);
}

/* Record a zero-length call from site: entry and exit at once. */
static void rt_plt_once(struct rt_thread *t, uint64_t fn, uint64_t site)
{
	rt_probe(t, 0, fn, site);
	if (t->state == RT_ACTIVE)
		rt_probe(t, 1, fn, 0);
}

static int rt_plt_vfork_prepare(uint64_t fn);
static void rt_plt_restore_slots(struct rt_thread *t);

/* The two calls out of the library-call probes (rt_plt_x86_64.S saves no
 * vector register): with the program's vector registers kept. */
__attribute__((noinline, cold)) static int rt_plt_vfork_prepare_kept(struct rt_thread *t, uint64_t fn)
{
	int r;
	RT_VEC_KEEP(t, r = rt_plt_vfork_prepare(fn));
	return r;
}

__attribute__((noinline, cold)) static void rt_plt_restore_slots_kept(struct rt_thread *t)
{
	RT_VEC_KEEP(t, rt_plt_restore_slots(t));
}

/* ------------------------------------------------------------------------
 * The probes, called from the trampolines
 * --------------------------------------------------------------------- */

struct rt_plt_way rt_plt_enter(uint64_t idx, uint64_t *ret_slot, const uint64_t *args)
{
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	uint64_t target = s->target;
	struct rt_thread *t = &rt_self;
	if (RT_UNLIKELY(t->state != RT_ACTIVE) && !rt_thread_start(t))
		return (struct rt_plt_way){s->kind == RT_PLT_VFORK ? s->fn : target, 0};
	uint32_t kind = s->kind;
	uint64_t site = *ret_slot; /* the call's return address: its line is the call's */
	if (RT_UNLIKELY(t->plt_busy)) {
		/* a signal handler interrupted this thread's bookkeeping */
		if (kind != RT_PLT_VFORK)
			rt_plt_once(t, s->fn, site);
		return (struct rt_plt_way){target, 0};
	}
	RT_GUARD(t->plt_busy, 1);
	/* calls left at or below this slot on this stack are over */
	if (t->nrets && rt_plt_at_or_below(t->rets[t->nrets - 1].slot, ret_slot))
		rt_plt_drop_below(t, ret_slot, 1);
	if (RT_UNLIKELY(kind != RT_PLT_CALL)) {
		if (kind == RT_PLT_ONCE) {
			rt_plt_once(t, s->fn, site);
		} else if (kind == RT_PLT_VFORK) {
			if (rt_g.plt)
				rt_probe(t, 0, s->fn, site);
			RT_GUARD(t->plt_busy, 0);
			int ok = rt_plt_vfork_prepare_kept(t, rt_g.plt ? s->fn : 0) == 0;
			return (struct rt_plt_way){ok ? target : s->fn, 0};
		} else {
			/* glibc unwinds pthread_exit with libgcc_s's own
			 * _Unwind_ForcedUnwind, not the one interposed below: the
			 * unwinder must find the real return addresses already
			 * (the thread ends, nothing to re-arm) */
			if (kind == RT_PLT_THREAD_EXIT)
				rt_plt_restore_slots_kept(t);
			rt_probe(t, 0, s->fn, site);
			if (t->nrets < RT_RETS) {
				struct rt_ret *r = &t->rets[t->nrets++];
				*r = (struct rt_ret){.slot = ret_slot, .fn = s->fn};
			}
			/* where the jump lands: longjmp's jmp_buf or setcontext's
			 * ucontext is the first argument */
			uint64_t *to = NULL;
			if (kind == RT_PLT_JUMP && args[0])
				to = (uint64_t *)(uintptr_t)arch_longjmp_sp((const uint64_t *)args[0]);
			else if (kind == RT_PLT_SETCONTEXT && args[0])
				to = (uint64_t *)ARCH_UC_SP((const ucontext_t *)args[0]);
			if (!(to > ret_slot && rt_plt_at_or_below(ret_slot, to)))
				to = NULL; /* not on this stack: left to the rules above */
			if (to) /* everything below the landing point, this call first */
				rt_plt_drop_below(t, to, 0);
			if (to && kind == RT_PLT_JUMP)
				rt_close_left(t, (uint64_t)(uintptr_t)to, RT_PLT_SAME_STACK);
		}
		RT_GUARD(t->plt_busy, 0);
		return (struct rt_plt_way){target, 0};
	}
	uint32_t k = t->nrets < RT_RETS ? rt_plt_thunk((uint32_t)idx, *ret_slot) : ~0u;
	if (RT_UNLIKELY(k == ~0u)) {
		/* no room to follow the return: counted, as a zero-length call */
		rt_plt_once(t, s->fn, site);
		RT_GUARD(t->plt_busy, 0);
		return (struct rt_plt_way){target, 0};
	}
	struct rt_ret *r = &t->rets[t->nrets];
	r->slot = ret_slot;
	r->orig = *ret_slot;
	r->fn = s->fn;
	r->thunk = k;
	r->swapped = 1;
	r->restored = 0;
	t->nrets++;
	*ret_slot = rt_plt_thunk_addr(k);
	RT_GUARD(t->plt_busy, 0);
	rt_probe_enter((void *)(uintptr_t)s->fn, (void *)(uintptr_t)site);
	return (struct rt_plt_way){target, 1};
}

/*
 * A library call returned through thunk k, whose return slot was ret_slot.
 * Calls deeper on the same stack that never returned are closed first.
 * The way back comes from the thunk's table entry, whatever the shadow
 * stack holds.
 */
uint64_t rt_plt_leave(uint64_t k, uint64_t *ret_slot)
{
	uint64_t orig = rt_plt_thunk_ret[k];
	struct rt_thread *t = &rt_self;
	if (t->plt_busy || !t->nrets)
		return orig;
	RT_GUARD(t->plt_busy, 1);
	struct rt_ret *top = &t->rets[t->nrets - 1];
	if (RT_LIKELY(top->slot == ret_slot && top->swapped && top->thunk == k)) {
		uint64_t fn = top->fn;
		t->nrets--;
		RT_GUARD(t->plt_busy, 0);
		rt_plt_close(t, fn);
		return orig;
	}
	uint32_t i = t->nrets;
	while (i > 0 && t->rets[i - 1].slot != ret_slot)
		i--;
	if (i > 0 && t->rets[i - 1].swapped && t->rets[i - 1].thunk == k) {
		uint64_t fn = t->rets[i - 1].fn;
		/* entries below it on this stack were left; then this call ends */
		rt_plt_drop_below(t, ret_slot, 0);
		uint32_t n = t->nrets;
		for (uint32_t j = n; j-- > 0;)
			if (t->rets[j].slot == ret_slot) {
				for (uint32_t m = j; m + 1 < n; m++) /* not memmove: no call out (rt_plt_x86_64.S) */
					t->rets[m] = t->rets[m + 1];
				t->nrets = n - 1;
				break;
			}
		RT_GUARD(t->plt_busy, 0);
		rt_plt_close(t, fn);
		return orig;
	}
	/* not followed (closed already as left): nothing to record */
	RT_GUARD(t->plt_busy, 0);
	return orig;
}

/* ------------------------------------------------------------------------
 * vfork: the child records into a process entry of its own
 * --------------------------------------------------------------------- */

/* The parent's recording state while its vfork child runs on its memory. */
static __thread struct rt_thread *rt_plt_vfork_saved __attribute__((tls_model("initial-exec")));
static __thread uint64_t rt_plt_vfork_fn __attribute__((tls_model("initial-exec")));

/*
 * Every signal is held back, as for fork (rt.c's rt_atfork_prepare), from
 * before the system call until each side's recording state is its own: a
 * handler of the program's that ran in the parent as the child ended, while
 * rt_plt_vfork_parent put the parent's state back, probed on the child's
 * (its spool chunk unmapped under it: gdb, whose SIGCHLD handler runs as
 * its vfork child execs, crashed in 6 of 8 runs); in the child, on the
 * parent's.  The mask before is kept in the thread's memory, which the
 * child shares.
 */
static __thread uint64_t rt_plt_vfork_mask __attribute__((tls_model("initial-exec")));

static int rt_plt_vfork_prepare(uint64_t fn)
{
	struct rt_thread *t = &rt_self;
	void *m = mmap(NULL, sizeof(*t) + sizeof(rt_g), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	rt_plt_vfork_mask = rt_signals_hold();
	memcpy(m, t, sizeof(*t));
	((struct rt_thread *)m)->vec_busy = 0; /* kept only while this runs (rt_plt_enter) */
	memcpy((char *)m + sizeof(*t), &rt_g, sizeof(rt_g)); /* the child gets a new key */
	rt_plt_vfork_saved = m;
	rt_plt_vfork_fn = fn;
	return 0;
}

int64_t rt_plt_vfork_child(int64_t r)
{
	rt_vfork_child();
	rt_signals_release(rt_plt_vfork_mask); /* (the word stays: it is the parent's) */
	return r;
}

int64_t rt_plt_vfork_parent(int64_t r)
{
	struct rt_thread *t = &rt_self, *saved = rt_plt_vfork_saved;
	if (saved) {
		/* what the child mapped in the memory it shared with us */
		if (t->hdr && t->hdr != saved->hdr)
			munmap(t->hdr, RT_HDR_MAP);
		if (t->chunk_base && t->chunk_base != saved->chunk_base)
			munmap(t->chunk_base, fmt_spool_chunk_size(t->chunk));
		if (t->seen && t->seen != saved->seen)
			munmap(t->seen, (size_t)t->seen_cap * sizeof(uint64_t));
		if (t->fns_map && t->fns_map != saved->fns_map)
			munmap(t->fns_map, RT_FNS_WINDOW);
		if (t->arrays && t->arrays != saved->arrays)
			munmap(t->arrays, sizeof(*t->arrays));
		if (t->lock && t->lock != saved->lock)
			rt_close_switch_page(t->lock);
		memcpy(t, saved, sizeof(*t));
		memcpy(&rt_g, (char *)saved + sizeof(*t), sizeof(rt_g));
		munmap(saved, sizeof(*t) + sizeof(rt_g));
		rt_plt_vfork_saved = NULL;
	}
	rt_sel_vfork(0); /* (rt_select.c's state is the parent's again) */
	if (t->state == RT_ACTIVE && rt_plt_vfork_fn)
		rt_probe(t, 1, rt_plt_vfork_fn, 0); /* the parent's vfork ends now */
	rt_signals_release(rt_plt_vfork_mask);
	rt_plt_vfork_mask = 0;
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ------------------------------------------------------------------------
 * Exceptions: unwinders must see the real return addresses
 * --------------------------------------------------------------------- */

/* Read one word that may no longer be mapped (a coroutine's freed stack). */
static int rt_plt_peek(const uint64_t *p, uint64_t *v)
{
	struct iovec local = {v, sizeof(*v)}, remote = {(void *)p, sizeof(*v)};
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*v))
		return 0;
	if (errno != ENOSYS && errno != EPERM)
		return -1;
	/* forbidden here (a seccomp filter): mapped is the best we can check */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec;
	if (mincore((void *)((uintptr_t)p & ~(page - 1)), page, &vec) < 0)
		return -1;
	*v = *p;
	return 0;
}

static void rt_plt_restore_slots(struct rt_thread *t)
{
	for (uint32_t i = 0; i < t->nrets; i++) {
		struct rt_ret *r = &t->rets[i];
		uint64_t v;
		/* only a slot that still holds our thunk is a call in flight */
		if (r->swapped && !r->restored && rt_plt_peek(r->slot, &v) == 0 &&
		    v == rt_plt_thunk_return(r->thunk)) {
			*r->slot = r->orig;
			r->restored = 1;
		}
	}
}

void rt_plt_restore_all(void)
{
	struct rt_thread *t = &rt_self;
	if (t->plt_busy)
		return;
	RT_GUARD(t->plt_busy, 1);
	rt_plt_restore_slots(t);
	RT_GUARD(t->plt_busy, 0);
}

/*
 * A handler was found, or a backtrace is done: calls whose return slot lies
 * below sp (on this stack) were unwound, and close now; the others are
 * re-armed.
 */
void rt_plt_rearm(void *sp)
{
	struct rt_thread *t = &rt_self;
	if (t->plt_busy)
		return;
	RT_GUARD(t->plt_busy, 1);
	if (sp)
		rt_plt_drop_below(t, sp, 0);
	for (uint32_t i = 0; i < t->nrets; i++) {
		struct rt_ret *r = &t->rets[i];
		if (r->restored) {
			*r->slot = rt_plt_thunk_return(r->thunk);
			r->restored = 0;
		}
	}
	RT_GUARD(t->plt_busy, 0);
}

typedef int (*rt_unwind_fn)(void *);

RT_API int _Unwind_RaiseException(void *exc)
{
	static rt_unwind_fn real;
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (rt_unwind_fn)rt_next_fn_or_die("_Unwind_RaiseException", (void *)_Unwind_RaiseException,
						       __builtin_return_address(0));
	/* both kinds of swapped return addresses: Rust's panics and code
	 * that throws without __cxa_throw come only here */
	rt_walk_begin();
	int r = real(exc);
	/* returns only when no handler was found: nothing was unwound */
	rt_walk_end();
	return r;
}

RT_API int _Unwind_ForcedUnwind(void *exc, void *stop, void *arg)
{
	static int (*real)(void *, void *, void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (int (*)(void *, void *, void *))rt_next_fn_or_die(
			"_Unwind_ForcedUnwind", (void *)_Unwind_ForcedUnwind, __builtin_return_address(0));
	rt_walk_begin();
	return real(exc, stop, arg);
}

/* A cleanup block (destructors, a Rust drop) unwinds on from here; the
 * landing before it swapped the live return addresses again. */
RT_API void _Unwind_Resume(void *exc)
{
	static void (*real)(void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (void (*)(void *))rt_next_fn_or_die("_Unwind_Resume", (void *)_Unwind_Resume,
							   __builtin_return_address(0));
	rt_walk_begin();
	real(exc);
	__builtin_unreachable();
}

RT_API int _Unwind_Resume_or_Rethrow(void *exc)
{
	static rt_unwind_fn real;
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (rt_unwind_fn)rt_next_fn_or_die("_Unwind_Resume_or_Rethrow", (void *)_Unwind_Resume_or_Rethrow,
						       __builtin_return_address(0));
	rt_walk_begin();
	int r = real(exc);
	rt_walk_end();
	return r;
}

/*
 * A personality routine found where the unwinder lands (a catch block, a
 * cleanup, Rust's catch_unwind) and sets its address, just before the jump:
 * the frames below the landing frame's stack pointer are gone now.  Their
 * exits are recorded here, at the landing, and the live frames' return
 * addresses swapped again (rt_unwound_below).  While the personality runs,
 * the context's CFA is that of the frame below the landing one (libgcc's
 * and LLVM's unwinders alike): the landing frame's stack pointer at its
 * call, under which every return slot is gone, the one just below first.
 * (Its stack pointer register is no help: the unwinder's context may hold
 * it as a pointer to a copy that is gone.)
 */
RT_API void _Unwind_SetIP(void *ctx, uintptr_t ip)
{
	static void (*real)(void *, uintptr_t);
	static uintptr_t (*get_cfa)(void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen)) {
		get_cfa = (uintptr_t(*)(void *))rt_next_fn("_Unwind_GetCFA", NULL, __builtin_return_address(0));
		real = (void (*)(void *, uintptr_t))rt_next_fn_or_die("_Unwind_SetIP", (void *)_Unwind_SetIP,
								      __builtin_return_address(0));
	}
	real(ctx, ip);
	uintptr_t cfa = get_cfa ? get_cfa(ctx) : 0;
	if (cfa)
		rt_unwound_below((void *)cfa);
}

/* The walk as the caller's callback sees it: without this library's
 * frame of _Unwind_Backtrace below, the first the unwinder reports. */
struct rt_walk {
	int (*fn)(void *, void *);
	void *arg;
	int skipped;
};

static int rt_walk_frame(void *ctx, void *arg)
{
	static uint64_t (*get_ip)(void *);
	struct rt_walk *w = arg;
	if (!w->skipped) {
		w->skipped = 1;
		static uint32_t gen;
		if (RT_NEXT_STALE(get_ip, gen))
			get_ip = (uint64_t(*)(void *))rt_next_fn("_Unwind_GetIP", NULL, (void *)w->fn);
		if (get_ip && rt_walk_own_frame((const void *)(uintptr_t)get_ip(ctx)))
			return 0; /* _URC_NO_REASON: go on */
	}
	return w->fn(ctx, w->arg);
}

RT_API int _Unwind_Backtrace(void *fn, void *arg)
{
	static int (*real)(void *, void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (int (*)(void *, void *))rt_next_fn_or_die("_Unwind_Backtrace", (void *)_Unwind_Backtrace,
								  __builtin_return_address(0));
	struct rt_walk w = {(int (*)(void *, void *))fn, arg, 0};
	rt_walk_begin();
	int r = real(fn ? (void *)rt_walk_frame : fn, fn ? (void *)&w : arg);
	rt_walk_end();
	return r;
}

RT_API void *__cxa_begin_catch(void *exc)
{
	static void *(*real)(void *);
	static uint32_t gen;
	if (RT_NEXT_STALE(real, gen))
		real = (void *(*)(void *))rt_next_fn_or_die("__cxa_begin_catch", (void *)__cxa_begin_catch,
							    __builtin_return_address(0));
	/* everything below our caller's frame is gone */
	rt_plt_rearm((char *)__builtin_frame_address(0) + 16);
	return real(exc);
}
