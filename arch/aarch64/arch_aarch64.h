/*
 * arch_aarch64.h - the start of a port to aarch64 (arch/README.md): only
 * what the in-process sampler needs of a signal's context so far.  The
 * clock, the perf and DWARF registers and the trampolines are still to
 * write; until then arch/arch.h refuses to build for aarch64.
 */
#ifndef STINT_ARCH_AARCH64_H
#define STINT_ARCH_AARCH64_H

#include <stdint.h>

#define ARCH_UC_PC(uc) ((uintptr_t)(uc)->uc_mcontext.pc)
#define ARCH_UC_SP(uc) ((uintptr_t)(uc)->uc_mcontext.sp)

/* Whether pc is at "svc #0" (to be restarted) or just after one. */
static inline int arch_at_syscall(uintptr_t pc)
{
	const uint32_t *w = (const uint32_t *)pc;
	if (pc & 3)
		return 0;
	if (w[0] == 0xd4000001u)
		return 1;
	return (pc & 0xfff) >= 4 && w[-1] == 0xd4000001u;
}

#endif
