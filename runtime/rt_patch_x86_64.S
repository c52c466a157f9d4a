/*
 * rt_patch_x86_64.S - the trampolines of patched function entries (see
 * rt_patch.c).
 *
 * rt_patch_entry is called from a function's first instruction (or the one
 * after its endbr64): the patched "call island", or the compiler's own
 * "call __fentry__", which is why it is also exported under that name.  On
 * top of the stack is the address in the function to go on at, above it
 * the function's return address.  It saves the argument registers and lets
 * rt_patch_enter() record the entry and swap that return address for
 * rt_patch_return, which records the exit through rt_patch_leave() and
 * returns to the original address.
 */
	.text
	.p2align 4
	.globl rt_patch_entry
	.hidden rt_patch_entry
	.type rt_patch_entry, @function
	.globl __fentry__
	.type __fentry__, @function
rt_patch_entry:
__fentry__:
	.cfi_startproc
	/* %rsp is 0 mod 16 here (the function's entry was 8 mod 16) */
	sub $192, %rsp
	.cfi_adjust_cfa_offset 192
	mov %rdi, 0(%rsp)
	mov %rsi, 8(%rsp)
	mov %rdx, 16(%rsp)
	mov %rcx, 24(%rsp)
	mov %r8, 32(%rsp)
	mov %r9, 40(%rsp)
	mov %rax, 48(%rsp)
	mov %r10, 56(%rsp)
	movdqu %xmm0, 64(%rsp)
	movdqu %xmm1, 80(%rsp)
	movdqu %xmm2, 96(%rsp)
	movdqu %xmm3, 112(%rsp)
	movdqu %xmm4, 128(%rsp)
	movdqu %xmm5, 144(%rsp)
	movdqu %xmm6, 160(%rsp)
	movdqu %xmm7, 176(%rsp)
	mov 192(%rsp), %rdi          /* where the function goes on */
	lea 200(%rsp), %rsi          /* where its return address is */
	call rt_patch_enter
	mov 0(%rsp), %rdi
	mov 8(%rsp), %rsi
	mov 16(%rsp), %rdx
	mov 24(%rsp), %rcx
	mov 32(%rsp), %r8
	mov 40(%rsp), %r9
	mov 48(%rsp), %rax
	mov 56(%rsp), %r10
	movdqu 64(%rsp), %xmm0
	movdqu 80(%rsp), %xmm1
	movdqu 96(%rsp), %xmm2
	movdqu 112(%rsp), %xmm3
	movdqu 128(%rsp), %xmm4
	movdqu 144(%rsp), %xmm5
	movdqu 160(%rsp), %xmm6
	movdqu 176(%rsp), %xmm7
	add $192, %rsp
	.cfi_adjust_cfa_offset -192
	ret
	.cfi_endproc
	.size rt_patch_entry, .-rt_patch_entry
	.size __fentry__, .-__fentry__

	.p2align 4
	.globl rt_patch_return
	.hidden rt_patch_return
	.type rt_patch_return, @function
rt_patch_return:
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $64, %rsp
	mov %rax, 0(%rsp)
	mov %rdx, 8(%rsp)
	movdqu %xmm0, 16(%rsp)
	movdqu %xmm1, 32(%rsp)
	lea 56(%rsp), %rdi           /* the old return-address slot */
	call rt_patch_leave
	mov %rax, 56(%rsp)           /* put the original return address back */
	mov 0(%rsp), %rax
	mov 8(%rsp), %rdx
	movdqu 16(%rsp), %xmm0
	movdqu 32(%rsp), %xmm1
	add $56, %rsp
	ret
	.size rt_patch_return, .-rt_patch_return

	.section .note.GNU-stack,"",@progbits
