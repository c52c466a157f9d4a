/*
 * jvm_marker.c - e2e target: a program whose symbols say it holds HotSpot,
 * the Java virtual machine (JVM_handle_linux_signal, which only libjvm.so
 * defines), built plain at -O2 (test e2e.patched_jvm_left_alone).  The VM
 * walks its own native frames by their return addresses, so none is
 * patched: jvm_work's 10 calls are not counted, and every function is
 * listed with reason "jvm".
 */
#include <stdio.h>

#include "e2e_prog.h"

/* (the name is what stint looks for; the function does nothing) */
__attribute__((noinline, used, visibility("default"))) int JVM_handle_linux_signal(int sig)
{
	return sig == 0;
}

E2E_FN long jvm_work(long i)
{
	return (long)e2e_burn(100, (uint64_t)i) & 0xff;
}

int main(void)
{
	long s = 0;
	for (long i = 0; i < 10; i++)
		s += jvm_work(i) > 0x100;
	printf("jvm marker %ld %d\n", s, JVM_handle_linux_signal(1));
	return 0;
}
