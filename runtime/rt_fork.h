/*
 * rt_fork.h - processes made without fork(): clone() without CLONE_VM, and
 * the fork-like raw system calls made through syscall(), run no
 * pthread_atfork handler, so the child kept its parent's recording state.
 * Both runtime libraries (libstint-rt.so, libstint-sampler.so) take those
 * two calls over with these helpers and start the child as a fork child,
 * through the function they pass.  Header-only: the libraries share no
 * object code; each defines arch_call_on_stack (ARCH_CALL_ON_STACK_ASM).
 */
#ifndef STINT_RT_FORK_H
#define STINT_RT_FORK_H

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "rt_sys.h"

#include "../arch/arch.h"

/* The child's set-up runs on a stack of its own: a clone child's may be a
 * page or two (googletest's death tests), a syscall() child's is its
 * parent's, which may be a coroutine's. */
#define RT_FORK_STACK (256u << 10)

/* Run child() on a new stack (none: on this one, which is then all the
 * child has). */
static inline void rt_fork_child_setup(void (*child)(void))
{
	uint8_t *stack = mmap(NULL, RT_FORK_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED) {
		child();
		return;
	}
	arch_call_on_stack(stack + RT_FORK_STACK, child);
	munmap(stack, RT_FORK_STACK);
}

/* What a clone() child runs first: the set-up, then the program's function. */
struct rt_fork_clone_call {
	int (*fn)(void *);
	void *arg;
	void (*child)(void);
};

static inline int rt_fork_clone_child(void *p)
{
	struct rt_fork_clone_call c = *(struct rt_fork_clone_call *)p; /* the parent's frame, copied */
	rt_fork_child_setup(c.child);
	return c.fn(c.arg);
}

typedef int (*rt_fork_clone_fn)(int (*)(void *), void *, int, void *, ...);

/*
 * Whether clone flags make a child on our memory that keeps the caller's
 * thread pointer (CLONE_VM without CLONE_SETTLS): its probes would find
 * the caller's thread-local recording state and write into it while the
 * caller does.  The runtime is told before such a clone (share(0, 0, vfork))
 * and after it in the caller (share(1, result, vfork)); with CLONE_VFORK the
 * caller waits until the child has left our memory.
 */
static inline int rt_fork_shares_tls(uint64_t flags)
{
	return (flags & CLONE_VM) && !(flags & CLONE_SETTLS);
}

typedef void (*rt_fork_share_fn)(int after, long result, int vfork);

/* clone(fn, stack, flags, arg, ptid, tls, ctid) through real, with child()
 * run first in a child that is a process of its own (no CLONE_VM), and
 * share (or NULL) around a child that shares our thread-local state. */
static inline int rt_fork_clone(rt_fork_clone_fn real, int (*fn)(void *), void *stack, int flags, void *arg,
				void *ptid, void *tls, void *ctid, void (*child)(void), rt_fork_share_fn share)
{
	if (share && fn && rt_fork_shares_tls((unsigned)flags)) {
		int vfork = (flags & CLONE_VFORK) != 0;
		share(0, 0, vfork);
		int r = real(fn, stack, flags, arg, ptid, tls, ctid);
		share(1, r, vfork); /* (the child runs fn, never this) */
		return r;
	}
	if ((flags & CLONE_VM) || !fn)
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	struct rt_fork_clone_call c = {fn, arg, child};
	return real(rt_fork_clone_child, stack, flags, &c, ptid, tls, ctid);
}

/* Whether a raw system call makes a new process that goes on running this
 * thread's code: SYS_fork, SYS_clone or SYS_clone3 without CLONE_VM (a
 * thread, or a vfork child on our memory), CLONE_VFORK or CLONE_SETTLS
 * (a thread pointer of its own: our thread-local state is not there). */
/* The flags of a raw clone system call (0 and 0 when nr is none). */
static inline int rt_fork_clone_flags(long nr, long a, long b, uint64_t *flags)
{
	if (nr == SYS_clone) {
		*flags = (uint64_t)a;
		return 1;
	}
#ifdef SYS_clone3
	if (nr == SYS_clone3 && a && (size_t)b >= sizeof(uint64_t)) {
		memcpy(flags, (const void *)a, sizeof(*flags)); /* struct clone_args' first member */
		return 1;
	}
#endif
	*flags = 0;
	return 0;
}

static inline int rt_fork_makes_process(long nr, long a, long b)
{
	uint64_t flags;
	if (nr == SYS_fork)
		return 1;
	if (!rt_fork_clone_flags(nr, a, b, &flags))
		return 0;
	return !(flags & (CLONE_VM | CLONE_VFORK | CLONE_SETTLS));
}

/* Whether a raw system call restricts the process's system calls
 * (seccomp(2): a filter, or strict mode).  Strict mode with flags or
 * arguments, or a filter without one, is refused (EINVAL, EFAULT) and
 * restricts nothing: libseccomp's seccomp_init() makes such calls to see
 * what seccomp(2) supports, and the thread's recording ended there, as
 * before a strict mode that turns the time-stamp counter off. */
static inline int rt_fork_restricts(long nr, long a, long b, long c)
{
#ifdef SYS_seccomp
	return nr == SYS_seccomp && ((a == 0 /* SECCOMP_SET_MODE_STRICT */ && b == 0 && c == 0) ||
				     (a == 1 /* _FILTER */ && c != 0));
#else
	(void)nr, (void)a, (void)b, (void)c;
	return 0;
#endif
}

/* syscall(nr, ...) as glibc makes it (the same instruction; -1 and errno
 * on failure), with child() run in the new process of a fork-like call,
 * share around a clone whose child keeps our thread pointer (in the
 * caller only: such a child returns here too, with 0), and restrict(0, 0,
 * mode) before a seccomp(2) that restricts the process's system calls,
 * restrict(1, result, mode) after it (share and restrict may be NULL). */
static inline long rt_fork_syscall(long nr, va_list ap, void (*child)(void), void (*restrict_)(int, long, long),
				   rt_fork_share_fn share)
{
	long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
	long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
	int forks = rt_fork_makes_process(nr, a, b);
	int restricts = restrict_ && rt_fork_restricts(nr, a, b, c);
	uint64_t flags;
	int shares = share && rt_fork_clone_flags(nr, a, b, &flags) && rt_fork_shares_tls(flags);
	int vfork = shares && (flags & CLONE_VFORK);
	if (restricts)
		restrict_(0, 0, a);
	if (shares)
		share(0, 0, vfork);
	long r = arch_syscall6(nr, a, b, c, d, e, f);
	if (shares && r != 0)
		share(1, (unsigned long)r > -4096ul ? -1 : r, vfork);
	if (restricts)
		restrict_(1, r, a);
	if (r == 0 && forks)
		child();
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * The two functions a runtime library exports, taking over the C library's:
 * clone() and syscall(), with child() run first in the processes they
 * make, restrict_ (or NULL) around a seccomp(2) call and share (or NULL)
 * around a child that keeps our thread pointer (API: the library's export
 * attribute).  Expanded once per library.
 */
#define RT_FORK_WRAPPERS(API, child, restrict_, share)                                                         \
	API int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)                  \
	{                                                                                         \
		static rt_fork_clone_fn real;                                                     \
		if (!real)                                                                        \
			real = (rt_fork_clone_fn)dlsym(RTLD_NEXT, "clone");                       \
		if (!real) {                                                                      \
			errno = ENOSYS;                                                           \
			return -1;                                                                \
		}                                                                                 \
		va_list ap;                                                                       \
		va_start(ap, arg); /* read only for the flags that use them, as the kernel does */ \
		void *ptid = va_arg(ap, void *), *tls = va_arg(ap, void *), *ctid = va_arg(ap, void *); \
		va_end(ap);                                                                       \
		return rt_fork_clone(real, fn, stack, flags, arg, ptid, tls, ctid, child, share); \
	}                                                                                         \
                                                                                                  \
	API long syscall(long nr, ...)                                                            \
	{                                                                                         \
		va_list ap;                                                                       \
		va_start(ap, nr);                                                                 \
		long r = rt_fork_syscall(nr, ap, child, restrict_, share);                        \
		va_end(ap);                                                                       \
		return r;                                                                         \
	}

#endif
