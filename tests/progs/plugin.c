/*
 * plugin.c - e2e instrumented shared library, loaded with dlopen by
 * dlopen_host.c (test e2e.dlopen_plugin).  plugin_entry calls plugin_step
 * 12 times and usleep(2000) once.
 */
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void plugin_step(void) { sink += e2e_burn(5000, 3); }

E2E_FN int plugin_entry(void)
{
	for (int i = 0; i < 12; i++)
		plugin_step();
	usleep(2000);
	return 7;
}
