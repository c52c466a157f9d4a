/*
 * rt_plt_x86_64.S - the trampolines that put probes around calls into
 * shared libraries (see runtime/rt_plt.c), x86_64: part of the runtime,
 * built into libstint-rt.so (arch/README.md).
 *
 * rt_plt_entry is reached from a per-GOT-slot stub with the slot number in
 * %r11 and the caller's return address on top of the stack.  It saves the
 * argument registers and lets rt_plt_enter() record the entry.  A call that
 * returns is then made from a return thunk: the caller's return address is
 * popped (rt_plt.c keeps it) and the thunk calls the library function,
 * whose return lands in the thunk with the stack as the caller left it.
 * Other calls jump to the library function (or wherever rt_plt_enter says).
 *
 * The return thunks: RT_PLT_NTHUNKS fixed pieces of code, 32 bytes each,
 * that call the library function in %r11, then load their own number into
 * %r11 and join rt_plt_thunk_common.  rt_plt.c gives each pair (original
 * return address, library function) a thunk of its own and remembers that
 * pair in a table, so the way back to the caller never depends on
 * per-thread bookkeeping: whatever a longjmp, a context switch or a signal
 * did in between, a thunk always knows where to return (rt_plt_leave()
 * reads it from the table).  Calling, rather than swapping the return
 * address for the thunk's, keeps the processor's return predictions
 * paired: the library function's return goes where the thunk's call
 * predicts, and rt_plt_thunk_common's where the program's call does
 * (measured on a Lua run: 36 ns per library-call event with the swap, 26
 * with the call).
 *
 * rt_plt_vfork replaces vfork: see rt_plt.c (rt_plt_vfork_child/parent).
 */
#define RT_PLT_NTHUNKS 65536
#include "arch_dwarf.inc"
#include "arch_save.inc"

	.text
	.p2align 4
	.globl rt_plt_entry
	.hidden rt_plt_entry
	.type rt_plt_entry, @function
rt_plt_entry:
	.cfi_startproc
	/* %rsp is 8 mod 16 here; 72 bytes make it 0 mod 16 for the call.  The
	 * general registers only: the runtime never touches the vector ones,
	 * the arguments in xmm0-7 (ymm, zmm) included, but inside RT_VEC_KEEP
	 * (runtime/rt.c), tests/layers/check_probe_paths.py checks */
	sub $72, %rsp
	.cfi_adjust_cfa_offset 72
	ARCH_SAVE_ARGS
	mov %r11, %rdi
	lea 72(%rsp), %rsi           /* where the return address is */
	mov %rsp, %rdx               /* the saved arguments: rdi, rsi, rdx, ... */
	call rt_plt_enter            /* %rax: the library function; %rdx: set */
	mov %rax, %r11               /* when called from a thunk (rt_plt_way) */
	mov %rdx, 64(%rsp)
	ARCH_RESTORE_ARGS
	cmpq $0, 64(%rsp)
	jne 1f
	add $72, %rsp
	.cfi_adjust_cfa_offset -72
	jmp *%r11
1:	.cfi_adjust_cfa_offset 72
	/* the return slot holds the thunk's address now: pop it with the
	 * rest, then go there (the slot lies in the red zone, which signal
	 * handlers leave alone); the thunk's call fills the slot again */
	add $80, %rsp
	.cfi_adjust_cfa_offset -80
	jmp *-8(%rsp)
	.cfi_endproc
	.size rt_plt_entry, .-rt_plt_entry

/* The return address of a frame whose return-address slot (CFA - 8) holds
 * a return thunk's address (see the thunks below) */
.macro RT_PLT_RA_FROM_THUNK
	.cfi_escape DW_CFA_expression, DW_REG_RIP, 24, \
		DW_OP_lit8, DW_OP_minus, DW_OP_deref,          /* the thunk's address */ \
		DW_OP_const1s, 0xe0, DW_OP_and,                /* its start */ \
		DW_OP_plus_uconst, 16, DW_OP_dup,              /* its distance word */ \
		DW_OP_deref_size, 4, DW_SEXT32, \
		DW_OP_plus                                     /* &rt_plt_thunk_ret[k] */
.endm

	/* Where every return thunk leads; %r11 holds the thunk's number.  The
	 * results in rax and rdx are kept (xmm0-1, st0-1: untouched).  Its
	 * unwind information is the thunks': the old return-address slot
	 * still holds the thunk's address (below %rsp, in the red zone, which
	 * signal frames leave alone) until the original return address is put
	 * back there; from then on the slot is the return address. */
	.p2align 4
	.type rt_plt_thunk_common, @function
rt_plt_thunk_common:
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 0
	RT_PLT_RA_FROM_THUNK
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $32, %rsp
	.cfi_adjust_cfa_offset 32
	mov %rax, 0(%rsp)
	mov %rdx, 8(%rsp)
	mov %r11, %rdi
	lea 24(%rsp), %rsi           /* the old return-address slot */
	call rt_plt_leave
	mov %rax, 24(%rsp)           /* put the original return address back */
	.cfi_offset %rip, -8
	mov 0(%rsp), %rax
	mov 8(%rsp), %rdx
	add $24, %rsp
	.cfi_adjust_cfa_offset -24
	ret
	.cfi_endproc
	.size rt_plt_thunk_common, .-rt_plt_thunk_common

/*
 * The thunks carry call-frame information, so that any unwinder that
 * meets one (glibc's cancellation of a thread blocked in a library call,
 * with libgcc_s's own _Unwind_ForcedUnwind; libunwind; gdb) goes on to the
 * caller as if the call had returned there, instead of stopping with the
 * program's cleanups not run.  One FDE covers them all: a thunk's frame
 * has the caller's stack pointer (CFA = %rsp), and its return address is
 * the thunk's table entry, rt_plt_thunk_ret[k].  The expression finds k
 * from the thunk's address, which the slot just below the CFA holds
 * (thunk+0 before the call, thunk+3 during it): rounded down to the
 * 32-byte thunk, whose 4 bytes at +16 hold the distance from there to its
 * table entry (a link-time constant, so the unwind data needs no
 * relocation at load).
 */
	.p2align 5
	.globl rt_plt_thunks
	.hidden rt_plt_thunks
	.type rt_plt_thunks, @function
rt_plt_thunks:
	.cfi_startproc simple
	.cfi_def_cfa %rsp, 0
	RT_PLT_RA_FROM_THUNK
	.set thunk_no, 0
	.rept RT_PLT_NTHUNKS
	call *%r11                   /* 3 bytes: RT_PLT_THUNK_CALL of rt_plt.c */
	movl $thunk_no, %r11d
	jmp rt_plt_thunk_common
	.p2align 4, 0xcc
	.long rt_plt_thunk_ret + 8 * thunk_no - .
	.p2align 5, 0xcc
	.set thunk_no, thunk_no + 1
	.endr
	.cfi_endproc
	.size rt_plt_thunks, .-rt_plt_thunks
	.globl rt_plt_thunks_end
	.hidden rt_plt_thunks_end
rt_plt_thunks_end:

/*
 * rt_plt_vfork: the program's vfork, reached through rt_plt_entry (the
 * return address was not swapped).  As glibc's own vfork it keeps its
 * return address in a register across the system call, since the child
 * runs on the parent's stack and may overwrite it.  The child calls
 * rt_plt_vfork_child() (its own recording), the parent, once the child
 * has gone, rt_plt_vfork_parent() (its state back).  Both return vfork's
 * result.  %rdi survives the system call in both.
 */
	.p2align 4
	.globl rt_plt_vfork
	.hidden rt_plt_vfork
	.type rt_plt_vfork, @function
rt_plt_vfork:
	pop %rdi                     /* the return address; %rsp 0 mod 16 */
	mov $58, %eax                /* SYS_vfork */
	syscall
	push %rdi                    /* 8 mod 16 */
	push %rax                    /* 0 mod 16, for the calls */
	mov %rax, %rdi
	test %rax, %rax
	jne 1f
	call rt_plt_vfork_child      /* returns 0 */
	jmp 2f
1:	call rt_plt_vfork_parent     /* returns the pid, or -1 with errno set */
2:	add $8, %rsp
	ret
	.size rt_plt_vfork, .-rt_plt_vfork

	.section .note.GNU-stack,"",@progbits
