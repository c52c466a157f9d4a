/*
 * test_select.c - record-time selection in the runtime (runtime/rt_select.c),
 * driven with made-up times: --min-duration holds an entry back until the
 * call has lasted the minimum and then writes it at its own time, drops
 * shorter calls without writing anything (so the next record's delta, the
 * caller's interval, covers them exactly), and drops the held calls a
 * longjmp left; --depth hides the frames below N and finds their exits;
 * the glob matcher and the C++ name simplifier that --function uses.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/rt_int.h"
#include "../../runtime/rt_select.h"

/* The parts of rt.c that rt_select.c calls: entries written are recorded */
struct rt_global rt_g;
__thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));

void *rt_thread_block(void **slot, size_t size)
{
	if (!*slot)
		*slot = calloc(1, size);
	return *slot;
}
static struct { uint64_t fn, t; } written[64];
static unsigned nwritten;

void rt_probe_held(struct rt_thread *t, uint64_t fn, uint64_t site, uint64_t at, uint64_t sw)
{
	(void)sw;
	(void)site;
	written[nwritten].fn = fn;
	written[nwritten++].t = at;
	t->depth++;
}

uint64_t rt_now(void)
{
	return 0;
}

int rt_vec_hold(struct rt_thread *t)
{
	(void)t;
	return 0;
}

void rt_vec_release(struct rt_thread *t)
{
	(void)t;
}

/* One event as rt_probe() hands it over; what the selection leaves to be
 * written now (return 0) is "written" here as rt_emit would count it. */
static int ev(int is_exit, uint64_t fn, uint64_t now)
{
	struct rt_thread *t = &rt_self;
	int held = rt_sel_skip(fn) || rt_sel_event(t, is_exit, fn, 0, now, 0);
	if (!held) {
		if (is_exit)
			t->depth--;
		else
			t->depth++;
	}
	return held;
}

static void setup_selection(const char *spec)
{
	setenv("STINT_SELECT", spec, 1);
	rt_sel_init();
	rt_self.state = RT_ACTIVE;
	rt_self.depth = 0;
	nwritten = 0;
}

enum { A = 0x1000, B = 0x2000, C = 0x3000, D = 0x4000, E = 0x5000 };

static void min_duration_writes_long_calls_at_their_time(void **state)
{
	(void)state;
	setup_selection("t100\n");
	assert_true(ev(0, A, 0));   /* held */
	assert_true(ev(0, B, 10));  /* held */
	assert_true(ev(1, B, 15));  /* 5 < 100: dropped, nothing written */
	assert_int_equal(nwritten, 0);
	assert_true(ev(0, C, 50));  /* A has lasted 50: still held */
	assert_int_equal(nwritten, 0);
	/* C ends at 210: A (210) and C (160) have lasted 100, written at 0 and
	 * 50, oldest first; C's exit is written by the caller */
	assert_false(ev(1, C, 210));
	assert_int_equal(nwritten, 2);
	assert_int_equal(written[0].fn, A);
	assert_int_equal(written[0].t, 0);
	assert_int_equal(written[1].fn, C);
	assert_int_equal(written[1].t, 50);
	assert_true(ev(0, D, 220));
	assert_true(ev(1, D, 230)); /* dropped: A's interval runs from 210 to A's next record */
	assert_false(ev(1, A, 400));
	assert_int_equal(nwritten, 2);
	assert_int_equal(rt_self.depth, 0);
}

static void min_duration_longjmp_drops_left_calls(void **state)
{
	(void)state;
	setup_selection("t100\n");
	assert_true(ev(0, A, 1000));
	assert_true(ev(0, B, 1010));
	assert_true(ev(0, C, 1020));
	/* a longjmp from C to A's frame, then A returns at 1050: B and C are
	 * dropped with it, nothing written */
	assert_true(ev(1, A, 1050));
	assert_int_equal(nwritten, 0);
	/* A again; it lasts: written at its entry, and a longjmp past the held
	 * E to A's caller: E (short) dropped, A's exit written */
	assert_true(ev(0, A, 2000));
	assert_true(ev(0, E, 2150)); /* A written now, at 2000 */
	assert_int_equal(nwritten, 1);
	assert_int_equal(written[0].t, 2000);
	rt_self.depth = 1;
	assert_false(ev(1, A, 2160)); /* E's exit never came */
	assert_int_equal(nwritten, 1);
	assert_true(ev(0, B, 3000)); /* nothing left held: B is the only one */
	assert_true(ev(1, B, 3001));
	assert_int_equal(nwritten, 1);
}

static void depth_hides_deeper_frames(void **state)
{
	(void)state;
	setup_selection("d2\n");
	assert_false(ev(0, A, 0));
	assert_false(ev(0, B, 1));
	assert_true(ev(0, C, 2));  /* third level: hidden */
	assert_true(ev(0, C, 3));  /* recursion below it too */
	assert_true(ev(0, D, 4));
	assert_true(ev(1, D, 5));
	assert_true(ev(1, C, 6));
	assert_true(ev(1, C, 7));
	assert_false(ev(1, B, 8)); /* B's exit is written */
	assert_false(ev(0, E, 9)); /* level 2 again */
	assert_true(ev(0, C, 10));
	assert_true(ev(0, D, 11));
	/* a longjmp from D to E's caller: E's exit (named) ends the hidden ones */
	assert_false(ev(1, E, 12));
	assert_false(ev(1, A, 13));
	assert_int_equal(rt_self.depth, 0);
}

static void depth_and_min_duration_together(void **state)
{
	(void)state;
	setup_selection("d1\nt100\n");
	assert_true(ev(0, A, 0));   /* held */
	assert_true(ev(0, B, 10));  /* a held frame counts for the depth: hidden */
	assert_true(ev(1, B, 20));
	assert_true(ev(0, B, 200)); /* A written at 0; B hidden */
	assert_int_equal(nwritten, 1);
	assert_true(ev(1, B, 210));
	assert_false(ev(1, A, 300));
	assert_int_equal(nwritten, 1);
}

static void glob_as_report_matches(void **state)
{
	(void)state;
	assert_true(rt_sel_match("alpha_*", "alpha_one"));
	assert_true(rt_sel_match("a?pha*", "alpha"));
	assert_true(rt_sel_match("[ab]eta_one", "beta_one"));
	assert_false(rt_sel_match("[!ab]eta_one", "beta_one"));
	assert_true(rt_sel_match("[a-c]eta*", "beta"));
	assert_true(rt_sel_match("pha", "alpha")); /* a substring, as stint report --function */
	assert_false(rt_sel_match("x*y", "xabc"));
	assert_true(rt_sel_match("*::run", "ns::Task::run"));
	assert_true(rt_sel_match("a\\*b", "a*b"));
	assert_false(rt_sel_match("a\\*b", "axb"));
}

static void cxx_names_without_parameters(void **state)
{
	(void)state;
	char b[256];
	assert_true(rt_sel_plain_name("_ZN2ns5Klass6methodEi", b, sizeof(b)));
	assert_string_equal(b, "ns::Klass::method");
	assert_true(rt_sel_plain_name("_ZN2ns5KlassC2Ev", b, sizeof(b)));
	assert_string_equal(b, "ns::Klass::Klass");
	assert_true(rt_sel_plain_name("_ZN2ns5KlassD1Ev", b, sizeof(b)));
	assert_string_equal(b, "ns::Klass::~Klass");
	assert_true(rt_sel_plain_name("_ZNK2ns5Klass3getEv", b, sizeof(b)));
	assert_string_equal(b, "ns::Klass::get");
	assert_true(rt_sel_plain_name("_Z3fooi", b, sizeof(b)));
	assert_string_equal(b, "foo");
	assert_true(rt_sel_plain_name("_ZL3barv", b, sizeof(b)));
	assert_string_equal(b, "bar");
	assert_true(rt_sel_plain_name("_ZN3fooB5cxx11Ev", b, sizeof(b)));
	assert_string_equal(b, "foo");
	assert_true(rt_sel_plain_name("_ZNSt6thread4joinEv", b, sizeof(b)));
	assert_string_equal(b, "std::thread::join");
	assert_false(rt_sel_plain_name("_ZNSt6vectorIiSaIiEE9push_backEOi", b, sizeof(b))); /* template */
	assert_false(rt_sel_plain_name("main", b, sizeof(b)));
	assert_false(rt_sel_plain_name("_Z999x", b, sizeof(b))); /* cut short */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(min_duration_writes_long_calls_at_their_time),
		cmocka_unit_test(min_duration_longjmp_drops_left_calls),
		cmocka_unit_test(depth_hides_deeper_frames),
		cmocka_unit_test(depth_and_min_duration_together),
		cmocka_unit_test(glob_as_report_matches),
		cmocka_unit_test(cxx_names_without_parameters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
