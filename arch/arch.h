/*
 * arch.h - what stint needs of the machine, behind one folder per
 * architecture (arch/README.md).  A port fills arch/<name>/ with the same
 * names as arch/x86_64/arch_x86_64.h and adds itself below; nothing
 * outside arch/ needs to change.
 *
 * The interface (each documented in the port's header):
 *   arch_cycles()                the cycle counter, the runtime's clock (inline: the probe's hot path)
 *   arch_cycles_invariant(info)  whether /proc/cpuinfo says it ticks at one rate in every state
 *   arch_cycles_ns_per_tick(...) nanoseconds per tick of it (arch_cycles.c)
 *   ARCH_PERF_REGS_MASK, ARCH_PERF_NREGS, ARCH_PERF_REG_SP, ARCH_PERF_REG_IP
 *                                the user registers a perf sample copies, and where SP and IP are
 *   ARCH_PERF_REGS_FROM_PTRACE(r) the same registers from PTRACE_GETREGS, in that order
 *   ARCH_DWARF_NREGS, arch_perf_to_dwarf()  the registers in DWARF's numbering (libdwfl unwinding)
 *   ARCH_UC_PC(uc), ARCH_UC_SP(uc)  a signal's ucontext_t: where the thread was (need _GNU_SOURCE)
 *   arch_at_syscall(pc)          whether pc is at (or just after) a system-call instruction
 *   arch_longjmp_sp(env)         where longjmp(env) leaves the stack pointer (glibc's jmp_buf)
 * and the runtime's trampolines in assembly (rt_patch_<arch>.S,
 * rt_plt_<arch>.S: the symbols runtime/rt_patch.h and rt_plt.h declare).
 */
#ifndef STINT_ARCH_H
#define STINT_ARCH_H

#if defined(__x86_64__)
#include "x86_64/arch_x86_64.h"
#else
#error "stint has no port to this architecture: arch/README.md says what one provides"
#endif

#endif
