/*
 * loop_entry.c - e2e target built plain -O2, patched at load (test
 * e2e.patched_loop_to_entry): loop_entry's loop jumps back to its first
 * instruction (hand-written, as a compiler makes a loop with no prologue
 * before it), so patching its entry would count each turn as a call; it
 * must be left unpatched, and said so.  main calls it 100 times with 10
 * turns each, and calls outer, a plain function, 100 times.
 */
#include <stdio.h>

#include "e2e_prog.h"

unsigned loop_entry(unsigned n);
__asm__(".text\n"
	".globl loop_entry\n"
	".type loop_entry, @function\n"
	"loop_entry:\n"
	"\tsubl $1, %edi\n"
	"\tjnz loop_entry\n"
	"\tmovl $7, %eax\n"
	"\tret\n"
	".size loop_entry, .-loop_entry\n");

static volatile unsigned sink;

E2E_FN unsigned outer(unsigned i)
{
	return loop_entry(10) + i;
}

int main(void)
{
	for (unsigned i = 0; i < 100; i++)
		sink += outer(i);
	printf("%u\n", sink);
	return 0;
}
