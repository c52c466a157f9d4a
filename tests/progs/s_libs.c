/*
 * s_libs.c - sampling e2e target (test sample.shared_libs).
 *
 * Burns about 0.3 s of CPU in lib_work of libs_work.so (linked normally)
 * and about 0.3 s in plugin_work of the library named by argv[1]
 * (libs_plugin.so, loaded with dlopen, closed at the end).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "s_sample.h"

uint64_t lib_work(uint64_t n);

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: s_libs PLUGIN.so\n");
		return 2;
	}
	sink = lib_work(s_iters(5));
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "s_libs: %s\n", dlerror());
		return 3;
	}
	uint64_t (*plugin_work)(uint64_t) = (uint64_t (*)(uint64_t))dlsym(h, "plugin_work");
	if (!plugin_work) {
		fprintf(stderr, "s_libs: %s\n", dlerror());
		return 4;
	}
	sink = plugin_work(s_iters(5));
	dlclose(h);
	return 0;
}
