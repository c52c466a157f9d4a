/*
 * go_marker.c - e2e target: a module that says it holds Go code (a
 * .go.buildinfo section, as the Go linker writes), built plain at -O2
 * (test e2e.patched_go_left_alone).  Go's runtime walks its goroutines'
 * stacks by its own tables and stops the program at a return address it
 * does not know, so no function of such a module is patched: go_work's 10
 * calls are not counted, and every function is listed with reason "go".
 */
#include <stdio.h>

#include "e2e_prog.h"

/* (the Go linker's magic; its contents do not matter to stint) */
__attribute__((section(".go.buildinfo"), used)) static const char go_buildinfo[16] = "\xff Go buildinf:";

E2E_FN long go_work(long i)
{
	return (long)e2e_burn(100, (uint64_t)i) & 0xff;
}

int main(void)
{
	long s = 0;
	for (long i = 0; i < 10; i++)
		s += go_work(i) > 0x100;
	printf("go marker %ld\n", s);
	return 0;
}
