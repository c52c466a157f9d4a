/*
 * s_nocfi.c - sampling e2e target (test sample.no_unwind_info in
 * tests/e2e/run_sample.py): hot code without call-frame information, as
 * in hand-written assembly (x264's, libswscale's).
 *
 * nocfi_spin is a leaf loop with no CFI: no unwinder can find its caller,
 * so its stacks are cut short there, and stint says where.  nocfi_garbage
 * is the same with %rbp pointing at two words of 0x10 bytes, as a
 * register that is no frame pointer holds anything: libdwfl's
 * frame-pointer fallback then reads 0x1010101010101010 as the caller,
 * which no stack must show.  About 0.8 s of CPU in all.
 */
#include <stdio.h>

#include "s_sample.h"

__asm__(".text\n"
	".globl nocfi_spin\n"
	".type nocfi_spin, @function\n"
	"nocfi_spin:\n"
	"	mov %rdi, %rcx\n"
	"1:	dec %rcx\n"
	"	jnz 1b\n"
	"	ret\n"
	".size nocfi_spin, .-nocfi_spin\n"
	".globl nocfi_garbage\n"
	".type nocfi_garbage, @function\n"
	"nocfi_garbage:\n"
	"	push %rbp\n"
	"	movabs $0x1010101010101010, %rax\n"
	"	push %rax\n"
	"	push %rax\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rcx\n"
	"1:	dec %rcx\n"
	"	jnz 1b\n"
	"	add $16, %rsp\n"
	"	pop %rbp\n"
	"	ret\n"
	".size nocfi_garbage, .-nocfi_garbage\n");

void nocfi_spin(uint64_t n);
void nocfi_garbage(uint64_t n);

S_FN static void drive(uint64_t n)
{
	for (int i = 0; i < 40; i++) {
		nocfi_spin(n / 40);
		nocfi_garbage(n / 40);
	}
}

int main(void)
{
	drive(s_iters(6));
	puts("done");
	return 0;
}
