/*
 * dlopen_host.c - e2e target: loads an instrumented shared library with
 * dlopen after start-up (test e2e.dlopen_plugin).
 * Usage: e2e_dlopen_host PATH-OF-libe2e_plugin.so
 *
 * main calls host_step 2 times, dlopens the plugin and calls its
 * plugin_entry once (which calls plugin_step 12 times and usleep once);
 * exits 0 if plugin_entry returned 7.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void host_step(void) { sink += e2e_burn(5000, 1); }

int main(int argc, char **argv)
{
	if (argc != 2)
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
	return entry() == 7 ? 0 : 1;
}
