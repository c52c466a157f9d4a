/*
 * throw_host.c - e2e target (test e2e.exception_in_local_library): a C
 * program that dlopens a C++ library (argv[1], RTLD_NOW, so RTLD_LOCAL)
 * whose code throws.  stint's runtime, preloaded, stands in for
 * __cxa_throw and the unwinder's entries, and looked the real ones up in
 * the global scope only, where a C program has no libstdc++: it called
 * address 0 (SIGSEGV).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* argv[2]: how many times to load, call and unload it (a Rust library's
 * own libgcc_s goes with it each time) */
int main(int argc, char **argv)
{
	int cycles = argc > 2 ? atoi(argv[2]) : 1;
	for (int i = 0; i < cycles; i++) {
		void *h = dlopen(argc > 1 ? argv[1] : "./libe2e_throw_plugin.so", RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		int (*catches)(int) = (int (*)(int))dlsym(h, "plugin_catches");
		printf("caught %d\n", catches ? catches(30) : -1);
		fflush(stdout);
		if (cycles > 1)
			dlclose(h);
	}
	return 0;
}
