/*
 * s_jit_map.c - sampling e2e target (test sample.jit_perf_map): a tiny JIT
 * copies a loop into anonymous executable memory, runs it there, and
 * describes it in /tmp/perf-<pid>.map as node --perf-basic-prof, the JVM's
 * perf-map-agent and LuaJIT do ("START SIZE NAME").  It prints the map's
 * path; the test removes the file.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "s_sample.h"

S_FN uint64_t proto(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s = s * 31 + (i ^ (s >> 7));
	return s;
}

S_FN void proto_end(void)
{
}

int main(void)
{
	size_t len = (size_t)((char *)proto_end - (char *)proto);
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || len > 4096)
		return 1;
	memcpy(code, (void *)proto, len);
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jitted_loop\n", (unsigned long)(uintptr_t)code, len);
	fclose(f);
	printf("%s\n", path);
	uint64_t (*fn)(uint64_t) = (uint64_t (*)(uint64_t))(uintptr_t)code;
	printf("%llu\n", (unsigned long long)fn(s_iters(3)));
	return 0;
}
