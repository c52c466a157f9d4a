/*
 * s_remap.c - sampling e2e target (test sample.reused_address).
 *
 * Loads the library argv[1] (libs_plugin.so), notes where it was mapped,
 * closes it, and loads argv[2] (libs_reuse.so), which the kernel places in
 * the hole the first one left; then burns about 0.3 s in reuse_work.
 * Prints "reused" when reuse_work's code lies where the first library was
 * mapped, else "not reused" and why (the test is then skipped: its point
 * is the address held by two files in turn).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "s_sample.h"

struct range {
	unsigned long start, end;
};

/* The mappings of the file named path (its basename), from /proc/self/maps. */
static int mapped(const char *path, struct range *r, int max)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352];
	int n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		const char *name = strrchr(line, '/');
		if (name && strcmp(name + 1, base) == 0 && n < max &&
		    sscanf(line, "%lx-%lx", &r[n].start, &r[n].end) == 2)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: s_remap FIRST.so SECOND.so\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "s_remap: %s\n", dlerror());
		return 3;
	}
	struct range old[16];
	int nold = mapped(argv[1], old, 16);
	dlclose(h);
	struct range left[1];
	if (mapped(argv[1], left, 1)) {
		printf("not reused: %s stayed mapped after dlclose\n", argv[1]);
		fflush(stdout);
	}
	h = dlopen(argv[2], RTLD_NOW);
	uint64_t (*work)(uint64_t) = h ? (uint64_t (*)(uint64_t))dlsym(h, "reuse_work") : NULL;
	if (!work) {
		fprintf(stderr, "s_remap: %s\n", dlerror());
		return 4;
	}
	unsigned long a = (unsigned long)work;
	int in = 0;
	for (int i = 0; i < nold; i++)
		in |= a >= old[i].start && a < old[i].end;
	if (in)
		printf("reused: reuse_work at %#lx, where %s was mapped\n", a, argv[1]);
	else
		printf("not reused: reuse_work at %#lx, %s was at %#lx-%#lx\n", a, argv[1],
		       nold ? old[0].start : 0ul, nold ? old[nold - 1].end : 0ul);
	fflush(stdout);
	sink = work(s_iters(5));
	dlclose(h);
	return 0;
}
