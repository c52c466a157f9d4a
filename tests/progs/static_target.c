/*
 * static_target.c - e2e target linked with -static (test
 * e2e.exec_unloadable_named): a program with no dynamic loader, into which
 * no runtime can be preloaded; it only prints a line.
 */
#include <stdio.h>

int main(void)
{
	puts("static target ran");
	return 0;
}
