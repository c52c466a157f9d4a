/*
 * patch_starts.c - e2e target for first instructions that real -O2 code
 * starts functions with and that a program patched at load must move
 * (test e2e.patched_odd_starts): built plain at -O2, it must print the same
 * under stint, and every function here must be patched and counted.
 *   sse_first   - movdqa from a constant (66 0f 6f /r, RIP-relative): the
 *                 operand-size prefix once made Capstone 4 report a 16-bit
 *                 displacement, and the function was refused (Lua's
 *                 luaL_buffinit, sqlite's and zlib's constant loads)
 *   cmp_first   - comisd against a constant (66 0f 2f /r, RIP-relative)
 */
#include <stdio.h>

#include "e2e_prog.h"

long sse_first(long x);
long cmp_first(double d);

__asm__(".section .rodata\n"
	".p2align 4\n"
	"ps_k16: .quad 40, 2\n"
	"ps_kd: .double 2.5\n"
	".text\n"
	".p2align 4\n.globl sse_first\n.type sse_first, @function\n"
	"sse_first: movdqa ps_k16(%rip), %xmm1\n"
	" movq %xmm1, %rax\n"
	" add %rdi, %rax\n"
	" ret\n"
	".size sse_first, .-sse_first\n"
	".p2align 4\n.globl cmp_first\n.type cmp_first, @function\n"
	"cmp_first: comisd ps_kd(%rip), %xmm0\n"
	" seta %al\n"
	" movzbl %al, %eax\n"
	" ret\n"
	".size cmp_first, .-cmp_first\n");

int main(void)
{
	long s = 0;
	for (int i = 1; i <= 5; i++)
		s += sse_first(i) + cmp_first(i);
	printf("odd starts sum=%ld\n", s);
	return 0;
}
