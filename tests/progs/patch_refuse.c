/*
 * patch_refuse.c - e2e target for functions that cannot be patched safely
 * at load (test e2e.patched_refusals): built plain at -O2, it must print
 * the same under stint, and the report must list each of these as not
 * instrumented, with its reason:
 *   tiny_a         - 2 bytes, tiny_b right after it: no room for a jump
 *                    (tiny_b, 4 bytes with padding after it, is patched)
 *   jump_in        - a loop jumps back into its first 5 bytes
 *   no_size        - a symbol without a size
 *   cold_back      - its loop's latch is in the part split off it
 *                    (cold_back.cold, as gcc splits a loop around a catch
 *                    block), which jumps back into its first 5 bytes
 * while counted_fn, an ordinary function, is counted.
 */
#include <stdio.h>

#include "e2e_prog.h"

long tiny_a(void);
long tiny_b(void);
long jump_in(long n);
long no_size(long x);
long cold_back(long n);

__asm__(".text\n"
	".globl tiny_a\n.type tiny_a, @function\n"
	"tiny_a: xor %eax, %eax\n ret\n"
	".size tiny_a, .-tiny_a\n"
	".globl tiny_b\n.type tiny_b, @function\n"
	"tiny_b: mov $7, %al\n ret\n"
	".size tiny_b, .-tiny_b\n"
	/* counts n down to 0 in %rax: the loop's head is the second
	 * instruction, inside the first 5 bytes */
	".p2align 4\n.globl jump_in\n.type jump_in, @function\n"
	"jump_in: xor %eax, %eax\n"
	"1: add $1, %rax\n"
	" sub $1, %rdi\n"
	" jg 1b\n"
	" ret\n"
	".size jump_in, .-jump_in\n"
	/* counts n down to 0 in %rax, the loop's head at offset 3 and its
	 * latch in cold_back.cold */
	".p2align 4\n.globl cold_back\n.type cold_back, @function\n"
	"cold_back: push %rbx\n"
	" xor %eax, %eax\n"
	"2: add $1, %rax\n"
	" jmp cold_back.cold\n"
	".size cold_back, .-cold_back\n"
	".type cold_back.cold, @function\n"
	"cold_back.cold: sub $1, %rdi\n"
	" jg 2b\n"
	" pop %rbx\n"
	" ret\n"
	".size cold_back.cold, .-cold_back.cold\n"
	".p2align 4\n.globl no_size\n.type no_size, @function\n"
	"no_size: lea 1(%rdi), %rax\n"
	" add %rax, %rax\n"
	" ret\n"
	".p2align 4\n");

E2E_FN long counted_fn(long x)
{
	return tiny_a() + tiny_b() + jump_in(x) + no_size(x) + cold_back(x);
}

int main(void)
{
	long s = 0;
	for (int i = 1; i <= 5; i++)
		s += counted_fn(i);
	printf("refusals sum=%ld\n", s);
	return 0;
}
