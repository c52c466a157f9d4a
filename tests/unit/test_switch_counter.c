/*
 * test_switch_counter.c - the fact the OS-event detector rests on: a perf
 * event a thread opens on itself (PERF_COUNT_SW_DUMMY, user space only) has
 * its user page's lock word advanced by exactly 2 per context switch of the
 * thread, as counted by getrusage, and by nothing else (not by a compute
 * loop, not by a system call that does not block).  Skips, saying why,
 * where perf events are not permitted.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint32_t *lock_word;

static long switches(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* The lock word and the switch count at one moment: a switch between the
 * two reads (a loaded machine) would make them disagree, so read again. */
static void sample(uint32_t *l, long *sw)
{
	for (int tries = 0; tries < 100; tries++) {
		long a = switches();
		*l = *lock_word;
		long b = switches();
		*sw = b;
		if (a == b)
			return;
	}
}

static int setup(void **state)
{
	(void)state;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_DUMMY;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		return 0;
	}
	void *page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (page != MAP_FAILED)
		lock_word = &((struct perf_event_mmap_page *)page)->lock;
	return 0;
}

static void test_two_per_switch_in_sleeps(void **state)
{
	(void)state;
	if (!lock_word)
		skip();
	uint32_t l0, l1;
	long s0, s1;
	sample(&l0, &s0);
	/* sleep until the thread has left the CPU 40 times at least */
	for (int i = 0; i < 400; i++) {
		usleep(500);
		if (switches() - s0 >= 40)
			break;
	}
	sample(&l1, &s1);
	assert_true(s1 - s0 >= 40);
	assert_int_equal(l1 - l0, 2 * (uint32_t)(s1 - s0));
}

static void test_still_without_switches(void **state)
{
	(void)state;
	if (!lock_word)
		skip();
	/* retry a few times: on a loaded machine preemption may strike */
	for (int attempt = 0; attempt < 20; attempt++) {
		uint32_t l0, l1;
		long s0, s1;
		sample(&l0, &s0);
		volatile long x = 0;
		for (long i = 0; i < 200000; i++)
			x += i;
		(void)x;
		for (int i = 0; i < 100; i++)
			getppid();
		sample(&l1, &s1);
		assert_int_equal(l1 - l0, 2 * (uint32_t)(s1 - s0));
		if (s1 == s0) {
			assert_int_equal(l1, l0);
			return;
		}
	}
	fail_msg("the thread was switched out in every attempt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_per_switch_in_sleeps),
		cmocka_unit_test(test_still_without_switches),
	};
	setup(NULL);
	if (!lock_word)
		printf("SKIP: perf events are not permitted here (perf_event_paranoid or seccomp)\n");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
