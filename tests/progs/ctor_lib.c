/*
 * ctor_lib.c - e2e shared library built plain at -O2 (no patch site) and
 * with -fpatchable-function-entry=5, loaded with dlopen by ctor_host.c
 * (test e2e.patched_dlopen_constructor): its constructor calls lib_helper 3 times, lib_work (called by the host)
 * twice, so lib_helper has 5 calls when the library is patched before its
 * constructor runs.
 */
#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void lib_helper(int i)
{
	sink += e2e_burn(100, (uint64_t)i);
}

E2E_FN int lib_work(void)
{
	lib_helper(10);
	lib_helper(11);
	return (int)(sink & 1);
}

__attribute__((constructor)) static void lib_init(void)
{
	for (int i = 0; i < 3; i++)
		lib_helper(i);
}
