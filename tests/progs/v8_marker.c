/*
 * v8_marker.c - e2e target: a module whose symbols say it holds V8, the
 * JavaScript engine of node and Electron (the embedded builtins' accessor
 * V8 defines), built plain at -O2 (test e2e.patched_v8_left_alone).  V8's
 * garbage collector looks up return addresses in its own code tables, and
 * its code calls the module's functions, so none is patched: v8_work's 10
 * calls are not counted, and every function is listed with reason "v8".
 */
#include <stdio.h>

#include "e2e_prog.h"

/* (the name is what stint looks for; the function does nothing) */
__attribute__((noinline, used)) const void *v8_blob(void) __asm__("_ZNK2v88internal7Isolate18embedded_blob_codeEv");
const void *v8_blob(void)
{
	return NULL;
}

E2E_FN long v8_work(long i)
{
	return (long)e2e_burn(100, (uint64_t)i) & 0xff;
}

int main(void)
{
	long s = 0;
	for (long i = 0; i < 10; i++)
		s += v8_work(i) > 0x100;
	printf("v8 marker %ld %d\n", s, v8_blob() == NULL);
	return 0;
}
