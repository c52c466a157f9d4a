/*
 * rt_patch_x86_64.S - the trampolines of patched function entries (see
 * runtime/rt_patch.c), x86_64: part of the runtime, built into
 * libstint-rt.so (arch/README.md).
 *
 * rt_patch_entry is called from a function's first instruction (or the one
 * after its endbr64): the patched "call island", or the compiler's own
 * "call __fentry__", which is why it is also exported under that name.  On
 * top of the stack is the address in the function to go on at, above it
 * the function's return address.  It saves every general register a call
 * may clobber (the argument and return registers, r10, r11: a caller
 * compiled with interprocedural register allocation, GCC's -fipa-ra at
 * -O2, keeps values in the ones it knows the callee leaves alone; the
 * vector registers are kept by the runtime's slow paths, arch_save.inc)
 * and lets
 * rt_patch_enter() record the entry and swap that return address for
 * rt_patch_return, which records the exit through rt_patch_leave() and
 * returns to the original address.  rt_patch_entry_tramp is the same
 * probe called from a trampoline of rt_patch_cs.c (functions with no patch
 * site, whose first instructions were moved there).
 */
#include "arch_save.inc"

	.text
/* the entry probe: \kind in %edx tells rt_patch_enter how to find the
 * function (0: from the patch site's bytes, 1: the qword before the
 * trampoline's call) */
.macro RT_ENTRY kind
	.cfi_startproc
	/* %rsp is 0 mod 16 here (the function's entry was 8 mod 16) */
	sub $80, %rsp
	.cfi_adjust_cfa_offset 80
	ARCH_SAVE_CLOBBERED
	mov 80(%rsp), %rdi           /* where the function goes on */
	lea 88(%rsp), %rsi           /* where its return address is */
	mov $\kind, %edx
	call rt_patch_enter
	ARCH_RESTORE_CLOBBERED
	add $80, %rsp
	.cfi_adjust_cfa_offset -80
	ret
	.cfi_endproc
.endm

	.p2align 4
	.globl rt_patch_entry
	.hidden rt_patch_entry
	.type rt_patch_entry, @function
	.globl __fentry__
	.type __fentry__, @function
rt_patch_entry:
__fentry__:
	RT_ENTRY 0
	.size rt_patch_entry, .-rt_patch_entry
	.size __fentry__, .-__fentry__

/* called from the trampolines of rt_patch_cs.c */
	.p2align 4
	.globl rt_patch_entry_tramp
	.hidden rt_patch_entry_tramp
	.type rt_patch_entry_tramp, @function
rt_patch_entry_tramp:
	RT_ENTRY 1
	.size rt_patch_entry_tramp, .-rt_patch_entry_tramp

	.p2align 4
	.globl rt_patch_return
	.hidden rt_patch_return
	.type rt_patch_return, @function
rt_patch_return:
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $80, %rsp
	ARCH_SAVE_CLOBBERED
	lea 72(%rsp), %rdi           /* the old return-address slot */
	call rt_patch_leave
	mov %rax, 72(%rsp)           /* put the original return address back */
	ARCH_RESTORE_CLOBBERED
	add $72, %rsp
	ret
	.size rt_patch_return, .-rt_patch_return

/*
 * rt_patch_debug_stub: what ld.so's r_brk (the debugger's hook) jumps to
 * once runtime/rt_patch.c has rewritten it; it saves every register a call
 * may clobber (ld.so is built with -fipa-ra), calls
 * rt_patch_objects_added() and returns to ld.so's caller.
 */
	.p2align 4
	.globl rt_patch_debug_stub
	.hidden rt_patch_debug_stub
	.type rt_patch_debug_stub, @function
rt_patch_debug_stub:
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11                    /* %rsp: 16-byte aligned */
	sub $256, %rsp
	ARCH_SAVE_XMM 16, 0
	call rt_patch_objects_added
	ARCH_RESTORE_XMM 16, 0
	add $256, %rsp
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rax
	ret
	.size rt_patch_debug_stub, .-rt_patch_debug_stub

/* The yardstick of the patched path's probe cost (runtime/rt_calib.c): a
 * function whose entry is what a patch site gives it. */
	.p2align 4
	.globl rt_calib_patched
	.hidden rt_calib_patched
	.type rt_calib_patched, @function
rt_calib_patched:
	call rt_patch_entry
	ret
	.size rt_calib_patched, .-rt_calib_patched

	.section .note.GNU-stack,"",@progbits
