/*
 * rt_plt_x86_64.S - the trampolines that put probes around calls into
 * shared libraries (see rt_plt.c).
 *
 * rt_plt_entry is reached from a per-GOT-slot stub with the slot number in
 * %r11 and the caller's return address on top of the stack.  It saves the
 * argument registers, lets rt_plt_enter() record the entry and swap the
 * return address for rt_plt_return, then jumps to the library function.
 *
 * rt_plt_return is where the library function returns: it saves the
 * return-value registers, asks rt_plt_leave() to record the exit and hand
 * back the original return address, and returns there.
 */
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
	mov %r11, %rdi
	lea 200(%rsp), %rsi          /* where the return address is */
	call rt_plt_enter
	mov %rax, %r11               /* the library function */
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
	add $200, %rsp
	.cfi_adjust_cfa_offset -200
	jmp *%r11
	.cfi_endproc
	.size rt_plt_entry, .-rt_plt_entry

	.p2align 4
	.globl rt_plt_return
	.hidden rt_plt_return
	.type rt_plt_return, @function
rt_plt_return:
	/* %rsp is the old return-address slot + 8, and 0 mod 16 */
	sub $64, %rsp
	mov %rax, 0(%rsp)
	mov %rdx, 8(%rsp)
	movdqu %xmm0, 16(%rsp)
	movdqu %xmm1, 32(%rsp)
	lea 56(%rsp), %rdi           /* the old return-address slot */
	call rt_plt_leave
	mov %rax, 56(%rsp)           /* put the original return address back */
	mov 0(%rsp), %rax
	mov 8(%rsp), %rdx
	movdqu 16(%rsp), %xmm0
	movdqu 32(%rsp), %xmm1
	add $56, %rsp
	ret
	.size rt_plt_return, .-rt_plt_return

	.section .note.GNU-stack,"",@progbits
