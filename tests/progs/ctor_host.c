/*
 * ctor_host.c - e2e target (test e2e.patched_dlopen_constructor): built
 * plain at -O2 and with -fpatchable-function-entry=5, it loads the library named in argv[1] (ctor_lib.c) with
 * dlopen and calls its lib_work once.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*work)(void) = (int (*)(void))dlsym(h, "lib_work");
	printf("work=%d\n", work ? work() : -1);
	return 0;
}
