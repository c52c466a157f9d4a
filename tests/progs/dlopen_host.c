/*
 * dlopen_host.c - e2e target: loads an instrumented shared library with
 * dlopen after start-up (test e2e.dlopen_plugin).
 * Usage: e2e_dlopen_host PATH-OF-libe2e_plugin.so [twice]
 *
 * main calls host_step 2 times, dlopens the plugin and calls its
 * plugin_entry once (which calls plugin_step 12 times and usleep once);
 * exits 0 if plugin_entry returned 7.  With "twice" it then dlcloses the
 * plugin, loads it again (at the same address, as a rule) and calls
 * plugin_entry once more (test e2e.dlopen_again_probed).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void host_step(void) { sink += e2e_burn(5000, 1); }

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 3)
		return 2;
	for (int i = 0; i < 2; i++)
		host_step();
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	int (*entry)(void) = (int (*)(void))dlsym(h, "plugin_entry");
	if (!entry)
		return 2;
	if (entry() != 7)
		return 1;
	if (argc == 3 && strcmp(argv[2], "twice") == 0) {
		dlclose(h);
		h = dlopen(argv[1], RTLD_NOW);
		entry = h ? (int (*)(void))dlsym(h, "plugin_entry") : NULL;
		if (!entry || entry() != 7)
			return 1;
	}
	return 0;
}
