/*
 * rt_plt.h - what the two halves of the library-call probes share:
 * rt_plt_got.c (which GOT entries are rewritten, and to what) and rt_plt.c
 * (what a rewritten call does at run time).  Private to runtime/.
 */
#ifndef STINT_RT_PLT_H
#define STINT_RT_PLT_H

#include <stdint.h>

#define RT_PLT_MAX_SLOTS (1u << 18)
/* Two return slots this close are taken to be on the same stack: a
 * thread's stack is one mapping of at most this size in practice, and the
 * separate stacks of ucontext coroutines or sigaltstack lie further apart
 * or, when not, only make bookkeeping close a call early (never unsafe). */
#define RT_PLT_SAME_STACK (64ull << 20)

/* What a hooked call does (rt_plt_kind_of decides from its name). */
enum rt_plt_kind {
	RT_PLT_CALL = 0,   /* entry, return address swapped, exit at its return */
	RT_PLT_NORETURN,   /* entry only: closed once the program is past it */
	RT_PLT_JUMP,       /* longjmp & co: entry, then closes what it leaves */
	RT_PLT_SETCONTEXT, /* the same, for a ucontext */
	RT_PLT_ONCE,       /* returns twice or needs its caller: entry+exit at once */
	RT_PLT_VFORK,      /* vfork: rt_plt_vfork */
	RT_PLT_THREAD_EXIT, /* pthread_exit: as NORETURN, the return addresses put back first */
};

/* One rewritten GOT entry; its number is in the stub that reaches it. */
struct rt_plt_slot {
	uint64_t target; /* where the call goes */
	uint64_t fn;     /* the function it is recorded as (differs for rt.c's interposers, and for a
			  * second name landing where another does: rt_plt_got.c, rt_plt_fn_of) */
	uint32_t kind;   /* enum rt_plt_kind */
	uint32_t last;   /* the thunk of this slot's last call + 1: a cache */
};

extern struct rt_plt_slot *rt_plt_slots; /* slot number -> call (rt_plt_got.c) */
extern uint32_t rt_plt_nslots;

/* rt_plt_got.c */
int rt_plt_kind_of(const char *name); /* -1: never hooked; else an enum rt_plt_kind */

/* rt_plt.c.  The calls in flight get their real return addresses for an unwinder
 * (rt_plt_restore_all), and the thunks again after it (rt_plt_rearm: with
 * sp, the calls below it were unwound and close). */
void rt_plt_restore_all(void);
void rt_plt_rearm(void *sp);
/* The return slot of the innermost library call in flight when it lies
 * below sp on sp's stack (the unwinder left it), else NULL; and closing
 * that call.  The caller holds plt_busy (rt_unwound_below). */
uint64_t *rt_plt_unwound(void *sp);
void rt_plt_close_innermost(void);

/* rt_plt.c and rt_plt_x86_64.S */
void rt_plt_entry(void);
void rt_plt_vfork(void);
int rt_plt_thunks_ok(void);
void rt_plt_thunks_after_fork(void);

#endif
