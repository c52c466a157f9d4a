/*
 * arch_cycles.c - x86_64: whether the TSC can be the probes' clock, and
 * how many nanoseconds a tick is (arch/arch.h).  Used by the recorder; the
 * runtime reads the TSC only (arch_cycles, inline).
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../arch.h"

int arch_cycles_invariant(const char *cpuinfo)
{
	return cpuinfo && strstr(cpuinfo, " constant_tsc") && strstr(cpuinfo, " nonstop_tsc");
}

/*
 * The kernel publishes its TSC to nanoseconds conversion in a perf event's
 * user page (time_mult / 2^time_shift); use it when there, else measure
 * against CLOCK_MONOTONIC over the whole run.
 */
double arch_cycles_ns_per_tick(uint64_t c0, uint64_t ns0, uint64_t c1, uint64_t ns1)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		struct perf_event_mmap_page *pc =
			mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		if (pc != MAP_FAILED) {
			double v = 0;
			if (pc->cap_user_time && pc->time_mult)
				v = (double)pc->time_mult / (double)(1ull << pc->time_shift);
			munmap(pc, (size_t)sysconf(_SC_PAGESIZE));
			if (v > 0)
				return v;
		}
	}
	if (c1 > c0 && ns1 > ns0)
		return (double)(ns1 - ns0) / (double)(c1 - c0);
	return 1.0;
}
