/*
 * rt_plt_x86_64.S - the trampolines that put probes around calls into
 * shared libraries (see runtime/rt_plt.c), x86_64: part of the runtime,
 * built into libstint-rt.so (arch/README.md).
 *
 * rt_plt_entry is reached from a per-GOT-slot stub with the slot number in
 * %r11 and the caller's return address on top of the stack.  It saves the
 * argument registers, lets rt_plt_enter() record the entry and, for a call
 * that returns, swap the return address for a return thunk, then jumps to
 * the library function (or wherever rt_plt_enter says).
 *
 * The return thunks: RT_PLT_NTHUNKS fixed pieces of code, 16 bytes each,
 * that only load their own number into %r11 and join rt_plt_thunk_common.
 * rt_plt.c gives each pair (original return address, library function) a
 * thunk of its own and remembers that pair in a table, so the way back to
 * the caller never depends on per-thread bookkeeping: whatever a longjmp,
 * a context switch or a signal did in between, a thunk always knows where
 * to return (rt_plt_leave() reads it from the table).
 *
 * rt_plt_vfork replaces vfork: see rt_plt.c (rt_plt_vfork_child/parent).
 */
#define RT_PLT_NTHUNKS 65536
#include "arch_save.inc"

	.text
	.p2align 4
	.globl rt_plt_entry
	.hidden rt_plt_entry
	.type rt_plt_entry, @function
rt_plt_entry:
	.cfi_startproc
	/* %rsp is 8 mod 16 here; 200 bytes make it 0 mod 16 for the call */
	sub $200, %rsp
	.cfi_adjust_cfa_offset 200
	ARCH_SAVE_ARGS
	ARCH_SAVE_XMM 8, 64
	mov %r11, %rdi
	lea 200(%rsp), %rsi          /* where the return address is */
	mov %rsp, %rdx               /* the saved arguments: rdi, rsi, rdx, ... */
	call rt_plt_enter
	mov %rax, %r11               /* the library function */
	ARCH_RESTORE_ARGS
	ARCH_RESTORE_XMM 8, 64
	add $200, %rsp
	.cfi_adjust_cfa_offset -200
	jmp *%r11
	.cfi_endproc
	.size rt_plt_entry, .-rt_plt_entry

	/* Where every return thunk leads; %r11 holds the thunk's number. */
	.p2align 4
	.type rt_plt_thunk_common, @function
rt_plt_thunk_common:
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $64, %rsp
	mov %rax, 0(%rsp)
	mov %rdx, 8(%rsp)
	movdqu %xmm0, 16(%rsp)
	movdqu %xmm1, 32(%rsp)
	mov %r11, %rdi
	lea 56(%rsp), %rsi           /* the old return-address slot */
	call rt_plt_leave
	mov %rax, 56(%rsp)           /* put the original return address back */
	mov 0(%rsp), %rax
	mov 8(%rsp), %rdx
	movdqu 16(%rsp), %xmm0
	movdqu 32(%rsp), %xmm1
	add $56, %rsp
	ret
	.size rt_plt_thunk_common, .-rt_plt_thunk_common

	.p2align 4
	.globl rt_plt_thunks
	.hidden rt_plt_thunks
	.type rt_plt_thunks, @function
rt_plt_thunks:
	.set thunk_no, 0
	.rept RT_PLT_NTHUNKS
	movl $thunk_no, %r11d
	jmp rt_plt_thunk_common
	.p2align 4
	.set thunk_no, thunk_no + 1
	.endr
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
