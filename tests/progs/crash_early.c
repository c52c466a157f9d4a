/*
 * crash_early.c - e2e target: a program that dies of SIGSEGV in a
 * constructor, before main and before any call stint records (test
 * e2e.err_crash_before_any_call).  Built plain and run where nothing is
 * patched, record must say the program crashed, not that it lacks a build
 * option, and exit as the program did.
 */
#include <signal.h>

__attribute__((constructor)) static void crash_first(void)
{
	raise(SIGSEGV);
}

int main(void)
{
	return 0;
}
