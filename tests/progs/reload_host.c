/*
 * reload_host.c - e2e target (run_safety.py dlclose_address_reused): loads
 * libe2e_reload_a.so, calls a_entry() (a_step 3 times), unloads it, then
 * loads libe2e_reload_b.so, which the loader usually puts at the address A
 * had, and calls b_entry() (b_step 5 times), unloads it and loads A again
 * and calls a_entry() once more.  Prints "same" or "moved" (whether B's code
 * took A's place) on stdout.
 * Usage: e2e_reload_host DIR-OF-THE-LIBRARIES
 */
#include <dlfcn.h>
#include <stdio.h>

#include "e2e_prog.h"

static void *load(const char *dir, const char *name, const char *sym, void **fn)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	void *h = dlopen(path, RTLD_NOW);
	*fn = h ? dlsym(h, sym) : NULL;
	return h;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *fa, *fb;
	void *ha = load(argv[1], "libe2e_reload_a.so", "a_entry", &fa);
	if (!ha || !fa)
		return 2;
	((void (*)(void))fa)();
	dlclose(ha);
	void *hb = load(argv[1], "libe2e_reload_b.so", "b_entry", &fb);
	if (!hb || !fb)
		return 2;
	((void (*)(void))fb)();
	dlclose(hb);
	/* and A again, likely where it was the first time */
	void *fa2;
	ha = load(argv[1], "libe2e_reload_a.so", "a_entry", &fa2);
	if (!ha || !fa2)
		return 2;
	((void (*)(void))fa2)();
	printf("%s\n", fa == fb ? "same" : "moved");
	dlclose(ha);
	return 0;
}
