/*
 * arch_x86_64.h - x86_64 (Linux, glibc) for arch/arch.h: the time-stamp
 * counter, perf's and ptrace's register layouts, a signal context's
 * registers, the system-call instruction and glibc's jmp_buf.  Header
 * only, but for arch_cycles.c: the runtime (inside the profiled program,
 * linking nothing of the tools) uses it too.
 */
#ifndef STINT_ARCH_X86_64_H
#define STINT_ARCH_X86_64_H

#include <stdint.h>
#include <x86intrin.h>

/* ------------------------------------------------------------------------
 * The clock: the time-stamp counter
 * --------------------------------------------------------------------- */

/* The TSC: one instruction, no system call; the probes' clock when it is invariant. */
static inline __attribute__((always_inline)) uint64_t arch_cycles(void)
{
	return __rdtsc();
}

/* Evict the cache line of p, and wait for every earlier memory access
 * (the probe-cost calibration starts from cold buffer lines); inline asm,
 * as the runtime is built without SSE, whose header has the intrinsics */
static inline void arch_flush_line(const void *p)
{
	__asm__ volatile("clflush (%0)" ::"r"(p) : "memory");
}

static inline void arch_memory_fence(void)
{
	__asm__ volatile("mfence" ::: "memory");
}

/* Whether /proc/cpuinfo (its text) says the TSC ticks at one rate, also
 * in deep sleep states: constant_tsc and nonstop_tsc. */
int arch_cycles_invariant(const char *cpuinfo);

/*
 * Nanoseconds per TSC tick: the kernel's own conversion (a perf event's
 * user page) where it publishes one, else measured from two readings of
 * the TSC (c0, c1) and CLOCK_MONOTONIC (ns0, ns1); 1.0 if neither works.
 */
double arch_cycles_ns_per_tick(uint64_t c0, uint64_t ns0, uint64_t c1, uint64_t ns1);

/* ------------------------------------------------------------------------
 * Registers
 * --------------------------------------------------------------------- */

/* The user registers a perf sample copies (PERF_SAMPLE_REGS_USER, the
 * kernel's perf_regs numbering): AX BX CX DX SI DI BP SP IP (0-8) and
 * R8..R15 (16-23), in that order in the sample. */
#define ARCH_PERF_REGS_MASK 0xff01ffull
#define ARCH_PERF_NREGS 17
#define ARCH_PERF_REG_SP 7
#define ARCH_PERF_REG_IP 8

/* The same registers from PTRACE_GETREGS (struct user_regs_struct r), as
 * an initializer in perf's order. */
#define ARCH_PERF_REGS_FROM_PTRACE(r)                                                                   \
	{(r).rax, (r).rbx, (r).rcx, (r).rdx, (r).rsi, (r).rdi, (r).rbp, (r).rsp, (r).rip,              \
	 (r).r8,  (r).r9,  (r).r10, (r).r11, (r).r12, (r).r13, (r).r14, (r).r15}

/* DWARF's register numbers 0-16: RAX RDX RCX RBX RSI RDI RBP RSP R8..R15 RIP. */
#define ARCH_DWARF_NREGS 17

/* perf's registers (ARCH_PERF_NREGS) in DWARF's order. */
static inline void arch_perf_to_dwarf(const uint64_t *r, uint64_t *d)
{
	static const uint8_t from[ARCH_DWARF_NREGS] = {0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 8};
	for (int i = 0; i < ARCH_DWARF_NREGS; i++)
		d[i] = r[from[i]];
}

/* A signal's ucontext_t *uc: the interrupted instruction, the stack pointer. */
#define ARCH_UC_PC(uc) ((uintptr_t)(uc)->uc_mcontext.gregs[REG_RIP])
#define ARCH_UC_SP(uc) ((uintptr_t)(uc)->uc_mcontext.gregs[REG_RSP])

/*
 * Whether pc is at a system call ("syscall", 0f 05: the signal came in one
 * to be restarted) or just after one (the kernel returns there).  Reads the
 * bytes at pc, and the two before it unless they are on another page.
 */
static inline int arch_at_syscall(uintptr_t pc)
{
	const uint8_t *b = (const uint8_t *)pc;
	if ((pc & 0xfff) != 0xfff && b[0] == 0x0f && b[1] == 0x05)
		return 1;
	return (pc & 0xfff) >= 2 && b[-2] == 0x0f && b[-1] == 0x05;
}

/* A system call with up to six arguments, as glibc's syscall() makes it
 * but returning the kernel's result (-errno on failure) as it is. */
static inline long arch_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Where longjmp(env) will land: glibc keeps the stack pointer mangled with
 * the thread's pointer guard in __jmpbuf[6] (x86_64 ABI of glibc). */
static inline uint64_t arch_longjmp_sp(const uint64_t *env)
{
	uint64_t guard;
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	uint64_t v = env[6];
	v = (v >> 0x11) | (v << (64 - 0x11));
	return v ^ guard;
}

/*
 * The program's floating-point and vector registers (runtime/rt.c keeps
 * them across the probes' slow paths, which call the C library): the
 * XSAVE components x87, SSE (xmm0-15, MXCSR), YMM_Hi128, opmask,
 * ZMM_Hi256 and Hi16_ZMM that XCR0 enables, the bytes of XSAVE's standard
 * form up to the last of them, and whether XGETBV 1 (XINUSE) can tell they
 * are unused.  Without XSAVE (mask 0), FXSAVE's 512 bytes: x87 and SSE.
 * The runtime itself is built with -mgeneral-regs-only, so its own code
 * never touches them: the trampolines save the general registers only.
 */
#define ARCH_VEC_COMPONENTS 0xe7u
#define ARCH_VEC_SSE_ONLY 0x3u  /* x87 and SSE: the legacy area, 576 bytes */
#define ARCH_VEC_SSE_BYTES 576u

static inline void arch_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static inline uint64_t arch_xgetbv(uint32_t which)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(which));
	return (uint64_t)hi << 32 | lo;
}

/* *mask: the components to keep (0: FXSAVE's), *bytes: the area they
 * need, *inuse_known: XGETBV 1 is there */
static inline void arch_vec_probe(uint32_t *mask, uint32_t *bytes, int *inuse_known)
{
	uint32_t r[4];
	*mask = 0;
	*bytes = 512;
	*inuse_known = 0;
	arch_cpuid(0, 0, r);
	uint32_t max = r[0];
	arch_cpuid(1, 0, r);
	if (max < 0xd || !(r[2] & (1u << 27))) /* OSXSAVE */
		return;
	uint32_t m = (uint32_t)arch_xgetbv(0) & ARCH_VEC_COMPONENTS;
	uint32_t end = ARCH_VEC_SSE_BYTES; /* legacy area and header */
	for (unsigned i = 2; i < 8; i++)
		if (m & (1u << i)) {
			arch_cpuid(0xd, i, r); /* size, offset in the standard form */
			if (r[1] + r[0] > end)
				end = r[1] + r[0];
		}
	arch_cpuid(0xd, 1, r);
	*inuse_known = (r[0] >> 2) & 1;
	*mask = m;
	*bytes = end;
}

/* whether one of mask's components is live now */
static inline int arch_vec_live(uint32_t mask, int inuse_known)
{
	return !inuse_known || (arch_xgetbv(1) & mask);
}

/* area: 64-byte aligned, the bytes arch_vec_probe said */
static inline void arch_vec_save(uint8_t *area, uint32_t mask)
{
	if (!mask) {
		__asm__ volatile("fxsave64 (%0)" ::"r"(area) : "memory");
		return;
	}
	for (int i = 0; i < 64; i++) /* XSAVE leaves the header's other bits */
		area[512 + i] = 0;
	__asm__ volatile("xsave64 (%0)" ::"r"(area), "a"(mask), "d"(0) : "memory");
}

static inline void arch_vec_restore(const uint8_t *area, uint32_t mask)
{
	if (!mask)
		__asm__ volatile("fxrstor64 (%0)" ::"r"(area) : "memory");
	else
		__asm__ volatile("xrstor64 (%0)" ::"r"(area), "a"(mask), "d"(0) : "memory");
}

/* f() on the stack that ends at top (runtime/rt.c: a clone child's own
 * stack may be a page or two) */
void arch_call_on_stack(void *top, void (*f)(void)) __attribute__((visibility("hidden")));
#define ARCH_CALL_ON_STACK_ASM                                                   \
	__asm__(".text\n"                                                        \
		".globl arch_call_on_stack\n.hidden arch_call_on_stack\n"        \
		".type arch_call_on_stack, @function\n"                          \
		"arch_call_on_stack:\n"                                          \
		" push %rbp\n"                                                   \
		" mov %rsp, %rbp\n"                                              \
		" mov %rdi, %rsp\n"                                              \
		" and $-16, %rsp\n"                                              \
		" call *%rsi\n"                                                  \
		" mov %rbp, %rsp\n"                                              \
		" pop %rbp\n"                                                    \
		" ret\n"                                                         \
		".size arch_call_on_stack, .-arch_call_on_stack\n")

#endif
