/*
 * got_data.c - e2e target, built -O2 -fno-plt (test e2e.unprobed_library_
 * calls): getpid is called 10 times through its GOT entry and nothing else
 * reads it (probed), getppid 10 times through its entry too, but the code
 * also loads that entry as data (its address, compared below), as LLVM's
 * code does for hot calls (mov GOT(%rip), %reg; call *%reg).  stint leaves
 * getppid's entry alone (a probe's address there would change the
 * comparison) and must say so.
 */
#include <stdio.h>
#include <unistd.h>

#include "e2e_prog.h"

static pid_t (*volatile seen)(void);

E2E_FN int same_as_getppid(pid_t (*fn)(void))
{
	return fn == getppid;
}

int main(void)
{
	long s = 0;
	for (int i = 0; i < 10; i++)
		s += getpid() > 0;
	seen = getppid;
	for (int i = 0; i < 10; i++)
		s += getppid() > 0;
	printf("got data %ld %d\n", s, same_as_getppid(seen));
	return 0;
}
