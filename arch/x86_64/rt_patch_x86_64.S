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
#include "arch_dwarf.inc"
#include "arch_save.inc"

#define RT_PATCH_NRETS 4096 /* as in rt_patch.c */
#define RT_PT_N 0
#define RT_PT_E 32
#define RT_PT_ES 32
#define RT_PT_ORIG 8
/* The return address of a frame whose return-address slot (CFA - 8) holds
 * a return stub's address: the expression the stubs' comment below explains */
.macro RT_PATCH_RA_FROM_STUB
	.cfi_escape DW_CFA_expression, DW_REG_RIP, 91, \
		DW_OP_dup, DW_OP_lit8, DW_OP_minus,          /* CFA (kept under: DW_OP_pick's bound), key */ \
		DW_OP_dup, DW_OP_deref, DW_OP_const1s, 0xe0, DW_OP_and, /* S */ \
		DW_OP_dup, DW_OP_plus_uconst, 16, DW_OP_dup, DW_OP_deref_size, 4, DW_SEXT32, \
		DW_OP_plus, DW_OP_deref,                     /* pt */ \
		DW_OP_dup, DW_OP_bra, 0x04, 0x00,            /* to have_pt */ \
		DW_OP_drop, DW_OP_skip, 0x16, 0x00,          /* to not_found */ \
		/* have_pt: */ DW_OP_dup, DW_OP_plus_uconst, RT_PT_E, DW_OP_swap, \
		DW_OP_plus_uconst, RT_PT_N, DW_OP_deref_size, 4, DW_OP_const1u, RT_PT_ES, DW_OP_mul, \
		DW_OP_over, DW_OP_plus,                      /* base, end */ \
		/* loop: */ DW_OP_dup, DW_OP_pick, 2, DW_OP_gt, DW_OP_bra, 0x0b, 0x00, /* cur > base: to body */ \
		DW_OP_drop, DW_OP_drop,                      \
		/* not_found: */ DW_OP_plus_uconst, 24, DW_OP_swap, DW_OP_drop, DW_OP_swap, DW_OP_drop, \
		DW_OP_skip, 0x18, 0x00,                      /* to the end: S + 24 */ \
		/* body: */ DW_OP_const1u, RT_PT_ES, DW_OP_minus, DW_OP_dup, DW_OP_deref, DW_OP_pick, 4, DW_OP_eq, \
		DW_OP_bra, 0x03, 0x00,                       /* to found */ \
		DW_OP_skip, 0xe0, 0xff,                      /* to loop */ \
		/* found: */ DW_OP_plus_uconst, RT_PT_ORIG, DW_OP_swap, DW_OP_drop, DW_OP_swap, DW_OP_drop, \
		DW_OP_swap, DW_OP_drop, DW_OP_swap, DW_OP_drop /* &orig */
.endm

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
	/* The stubs' unwind information (below): the old return-address slot
	 * still holds the stub's address (below %rsp, in the red zone, which
	 * signal frames leave alone) until the original return address is put
	 * back there; from then on the slot is the return address. */
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 0
	RT_PATCH_RA_FROM_STUB
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $80, %rsp
	.cfi_adjust_cfa_offset 80
	ARCH_SAVE_CLOBBERED
	lea 72(%rsp), %rdi           /* the old return-address slot */
	call rt_patch_leave
	mov %rax, 72(%rsp)           /* put the original return address back */
	.cfi_offset %rip, -8
	ARCH_RESTORE_CLOBBERED
	add $72, %rsp
	.cfi_adjust_cfa_offset -72
	ret
	.cfi_endproc
	.size rt_patch_return, .-rt_patch_return

/*
 * The return stubs: one per thread (runtime/rt_patch.c gives each
 * thread's shadow stack one, while there are), so that an unwinder the
 * runtime does not see (glibc cancelling a thread with libgcc_s's own
 * _Unwind_ForcedUnwind, libunwind, gdb on a core file) finds the real
 * return address of a patched function.  A stub jumps to rt_patch_return;
 * its 4 bytes at +16 hold the distance from there to its entry of
 * rt_patch_ret_pt (the owning thread's shadow stack), the 8 at +24 are 0.
 *
 * One FDE covers them, and 32 bytes before the first (an unwinder looks
 * up the instruction before a return address).  A stub's frame has the
 * caller's stack pointer (CFA = %rsp, the return address slot + 8); its
 * return address is the orig of the shadow-stack entry of that slot, found
 * by the expression below (innermost first), else 0 (the end of the stack,
 * as without it).  It reads struct rt_patch_thread: n at RT_PT_N, the
 * entries at RT_PT_E, RT_PT_ES bytes each, orig at RT_PT_ORIG (rt_patch.c
 * checks these).  Made by hand, as DWARF expression bytes:
 *   key = CFA - 8; S = *key & ~31; pt = *(S + 16 + (int32)*(S + 16))
 * (libgcc's DW_OP_pick refuses the bottom of the stack: the CFA stays
 * under the rest).
 *   pt == 0: S + 24
 *   for (cur = pt + RT_PT_E + pt->n * RT_PT_ES; cur > pt + RT_PT_E;)
 *       cur -= RT_PT_ES; if (*cur == key) return cur + RT_PT_ORIG
 *   S + 24
 */

	.p2align 5
rt_patch_rets_unwind:
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 0
	RT_PATCH_RA_FROM_STUB
	.skip 32, 0xcc
	.globl rt_patch_rets
	.hidden rt_patch_rets
	.type rt_patch_rets, @function
rt_patch_rets:
	.set ret_no, 0
	.rept RT_PATCH_NRETS + 1     /* the last: threads past the others */
	jmp rt_patch_return
	.p2align 4, 0xcc
	.long rt_patch_ret_pt + 8 * ret_no - .
	.long 0
	.quad 0
	.set ret_no, ret_no + 1
	.endr
	.cfi_endproc
	.size rt_patch_rets, .-rt_patch_rets
	.globl rt_patch_rets_end
	.hidden rt_patch_rets_end
rt_patch_rets_end:

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
