/*
 * test_analysis.c - the instrumentation values of doc/numbers.md (instrumentation) on
 * synthetic event streams, exact to the tick; and the sampling counts of
 * section 2 for inlined functions on synthetic samples; and filters: every
 * view computed from the selected intervals or samples only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "evbuild.h"
#include "../../format/fmt_sample.h"
#include "../../analysis/analysis.h"
#include "../../analysis/an_view.h"
#include "../../lib/util.h"

static const struct an_row *find(const struct an_row *rows, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	fail_msg("no row '%s'", name);
	return NULL;
}

/* values in microseconds (ns_per_tick is 1000) */
static void check(const struct an_row *r, uint64_t calls, double ei, double ee, double ai, double ae)
{
	assert_int_equal(r->calls, calls);
	assert_float_equal(r->v[AN_EI], ei * 1000, 1e-6);
	assert_float_equal(r->v[AN_EE], ee * 1000, 1e-6);
	assert_float_equal(r->v[AN_AI], ai * 1000, 1e-6);
	assert_float_equal(r->v[AN_AE], ae * 1000, 1e-6);
}

static void run(struct fmt_data *d, struct an_result *r)
{
	struct an_opts o = {0};
	an_instr_run(d, &o, r);
}

/* lib/util.c's UTIL_GROW_ZEROED, which the walk's per-function tables use:
 * capacities double from 256, what was there stays, the rest is zero */
/* /proc/PID/cmdline made one string: NULs between arguments are spaces, a
 * title's trailing padding is dropped, an empty argument inside is kept */
static void test_args_joined(void **state)
{
	(void)state;
	char a[] = "sh\0-c\0echo hi\0"; /* (the literal's own NUL is the room) */
	assert_int_equal(util_args_joined(a, sizeof(a) - 1), 13);
	assert_string_equal(a, "sh -c echo hi");
	char t[] = "nginx: worker process\0\0\0\0\0";
	assert_int_equal(util_args_joined(t, sizeof(t) - 1), 21);
	assert_string_equal(t, "nginx: worker process");
	char e[] = "a\0\0b\0";
	util_args_joined(e, sizeof(e) - 1);
	assert_string_equal(e, "a  b");
	char z[] = "\0";
	assert_int_equal(util_args_joined(z, 0), 0);
	assert_string_equal(z, "");
}

static void test_grow_zeroed(void **state)
{
	(void)state;
	uint32_t *a = NULL, cap = 0;
	UTIL_GROW_ZEROED(a, cap, 300);
	assert_int_equal(cap, 512);
	for (uint32_t i = 0; i < cap; i++)
		assert_int_equal(a[i], 0);
	a[300] = 7;
	uint32_t *same = a;
	UTIL_GROW_ZEROED(a, cap, 511); /* held already */
	assert_ptr_equal(a, same);
	assert_int_equal(cap, 512);
	UTIL_GROW_ZEROED(a, cap, 5000);
	assert_int_equal(cap, 8192);
	for (uint32_t i = 0; i < cap; i++)
		assert_int_equal(a[i], i == 300 ? 7 : 0);
	free(a);
}

/* Two files of one name are shown by path, the others by file name. */
static void test_module_labels(void **state)
{
	(void)state;
	struct an_result r;
	memset(&r, 0, sizeof(r));
	uint32_t a = an_module_intern(&r, "/usr/bin/git"), b = an_module_intern(&r, "/usr/lib/git-core/git");
	uint32_t c = an_module_intern(&r, "/lib/x86_64-linux-gnu/libc.so.6"), v = an_module_intern(&r, "[vdso]");
	an_module_labels(&r);
	assert_string_equal(r.mods[a].base, "/usr/bin/git");
	assert_string_equal(r.mods[b].base, "/usr/lib/git-core/git");
	assert_string_equal(r.mods[c].base, "libc.so.6");
	assert_string_equal(r.mods[v].base, "[vdso]");
	an_result_free(&r);
}

/* doc/numbers.md (instrumentation), worked example */
static void test_spec_example(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "a", "b"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 3);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	evb_enter(&b, 10, 0x2000, 0);
	evb_exit(&b, 30, 0);
	evb_enter(&b, 35, 0x3000, 0);
	evb_exit(&b, 85, 1); /* b slept */
	evb_exit(&b, 90, 0);
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	assert_float_equal(r.session.v[AN_EI], 90000, 1e-6);
	assert_float_equal(r.session.v[AN_AI], 40000, 1e-6);
	check(find(r.functions, r.nfunctions, "main"), 1, 90, 20, 40, 20);
	check(find(r.functions, r.nfunctions, "a"), 1, 20, 20, 20, 20);
	check(find(r.functions, r.nfunctions, "b"), 1, 50, 50, 0, 0);
	/* threads and processes: inclusive = exclusive = their intervals */
	assert_int_equal(r.nthread_rows, 1);
	assert_float_equal(r.thread_rows[0].v[AN_EI], 90000, 1e-6);
	assert_float_equal(r.thread_rows[0].v[AN_AE], 40000, 1e-6);
	assert_float_equal(r.processes[0].v[AN_AI], 40000, 1e-6);
	/* min/max per call */
	const struct an_row *m = find(r.functions, r.nfunctions, "main");
	assert_float_equal(m->vmin[AN_EI], 90000, 1e-6);
	assert_float_equal(m->vmax[AN_EE], 20000, 1e-6);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* A recursive function receives each interval once. */
static void test_recursion(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "f"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);  /* main */
	evb_enter(&b, 10, 0x2000, 0); /* f */
	evb_enter(&b, 20, 0x2000, 0); /* f */
	evb_enter(&b, 30, 0x2000, 0); /* f */
	evb_exit(&b, 40, 1);
	evb_exit(&b, 50, 0);
	evb_exit(&b, 60, 0);
	evb_exit(&b, 70, 0);
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	/* f is on the stack from 10 to 60: 50 once, not 50+30+10 */
	check(find(r.functions, r.nfunctions, "f"), 3, 50, 50, 40, 40);
	check(find(r.functions, r.nfunctions, "main"), 1, 70, 20, 60, 20);
	/* per call: innermost call 10, outermost 50 */
	const struct an_row *f = find(r.functions, r.nfunctions, "f");
	assert_float_equal(f->vmin[AN_EI], 10000, 1e-6);
	assert_float_equal(f->vmax[AN_EI], 50000, 1e-6);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* Frames left open close at the thread's last timestamp; empty-stack
 * intervals count in the totals only. */
static void test_open_frames_and_empty_stack(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "g"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	evb_init(&b);
	evb_enter(&b, 5, 0x1000, 0); /* [0,5] empty stack */
	evb_enter(&b, 15, 0x2000, 0);
	evb_exit(&b, 20, 0);
	evb_enter(&b, 30, 0x2000, 1); /* never exits: killed */
	evb_add_thread(&d, &b, 100);
	/* a second thread: only an empty-stack interval and one call */
	struct evb b2;
	evb_init(&b2);
	evb_enter(&b2, 100, 0x2000, 0);
	evb_exit(&b2, 104, 0);
	evb_add_thread(&d, &b2, 101);
	struct an_result r;
	run(&d, &r);
	assert_float_equal(r.session.v[AN_EI], (30 + 104) * 1000.0, 1e-6);
	assert_float_equal(r.session.v[AN_AI], (20 + 104) * 1000.0, 1e-6);
	/* main: entered at 5, closed at 30 */
	check(find(r.functions, r.nfunctions, "main"), 1, 25, 20, 15, 10);
	/* g: [15,20] in thread 1, the open call has no time, [100,104] in thread 2 */
	check(find(r.functions, r.nfunctions, "g"), 3, 9, 9, 9, 9);
	assert_int_equal(r.nthread_rows, 2);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* longjmp: an exit naming an outer function closes the skipped frames. */
static void test_exit_skipping_frames(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "a", "b", "c"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 4);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	evb_enter(&b, 10, 0x2000, 0);
	evb_enter(&b, 20, 0x3000, 0);
	evb_enter(&b, 30, 0x4000, 0); /* c longjmps back into main */
	evb_exit_fn(&b, 40, 0x1000, 0);
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	check(find(r.functions, r.nfunctions, "main"), 1, 40, 10, 40, 10);
	check(find(r.functions, r.nfunctions, "c"), 1, 10, 10, 10, 10);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* Modules: EI counts an interval once if any function of it is on the stack. */
static void test_modules_and_percentages(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "cb", "lib:qsort", "lib:memcpy"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 4);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);  /* main */
	evb_enter(&b, 10, 0x82000, 0); /* qsort */
	evb_enter(&b, 20, 0x2000, 0); /* cb, called back by qsort */
	evb_enter(&b, 25, 0x83000, 0); /* memcpy */
	evb_exit(&b, 35, 0);
	evb_exit(&b, 40, 0);
	evb_exit(&b, 60, 1);
	evb_exit(&b, 100, 0);
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	const struct an_row *lib = find(r.modules, r.nmodules, "libx.so");
	/* libx on the stack from 10 to 60 */
	assert_float_equal(lib->v[AN_EI], 50000, 1e-6);
	assert_float_equal(lib->v[AN_AI], 30000, 1e-6);
	/* exclusive: qsort [10,20]+[40,60], memcpy [25,35] */
	assert_float_equal(lib->v[AN_EE], 40000, 1e-6);
	assert_float_equal(lib->v[AN_AE], 20000, 1e-6);
	const struct an_row *exe = find(r.modules, r.nmodules, "test");
	assert_float_equal(exe->v[AN_EI], 100000, 1e-6);
	assert_float_equal(exe->v[AN_EE], 60000, 1e-6);
	/* memcpy is its own function in its library */
	const struct an_row *m = find(r.functions, r.nfunctions, "memcpy");
	assert_string_equal(m->module, "libx.so");
	check(m, 1, 10, 10, 10, 10);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* The probe cost is subtracted from every interval, never below zero. */
static void test_compensation(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "a"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	d.procs[0].cost = 3 << 10; /* 3 ticks per event */
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);
	evb_enter(&b, 2, 0x2000, 0); /* 2 -> 0 */
	evb_exit(&b, 12, 0);        /* 10 -> 7 */
	evb_exit(&b, 22, 0);        /* 10 -> 7 */
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	check(find(r.functions, r.nfunctions, "main"), 1, 14, 7, 14, 7);
	check(find(r.functions, r.nfunctions, "a"), 1, 7, 7, 7, 7);
	assert_float_equal(r.compensated_ns, 8000, 1e-6);
	an_result_free(&r);
	struct an_opts off = {.no_compensation = 1};
	an_instr_run(&d, &off, &r);
	check(find(r.functions, r.nfunctions, "main"), 1, 22, 12, 22, 12);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* Two processes with their own probe costs: the cost said is the one that
 * was subtracted, events x cost (the plain mean over processes was not). */
static void test_compensation_two_processes(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "a"};
	struct fmt_data d, d2;
	struct evb b;
	evb_data(&d, names, 2);
	evb_data(&d2, names, 2);
	d.procs = realloc(d.procs, 2 * sizeof(*d.procs));
	d.procs[1] = d2.procs[0];
	d.procs[1].pid = 200;
	d2.nprocs = 0;
	d.nprocs = 2;
	d.procs[0].cost = 3 << 10; /* 3 ticks per event */
	d.procs[1].cost = 1 << 10; /* 1 */
	for (uint32_t proc = 0; proc < 2; proc++) {
		evb_init(&b);
		evb_enter(&b, 0, 0x1000, 0);
		for (int i = 0; i < (proc ? 9 : 1); i++) { /* 2 events, or 18 */
			evb_enter(&b, 100 + 100 * (uint64_t)i, 0x2000, 0);
			evb_exit(&b, 150 + 100 * (uint64_t)i, 0);
		}
		evb_exit(&b, 2000, 0);
		evb_add_thread(&d, &b, 100 + proc);
		d.threads[d.nthreads - 1].proc = proc;
	}
	struct an_result r;
	run(&d, &r);
	assert_int_equal(r.probe_events, 24);
	/* (4 x 3 + 20 x 1) / 24 ticks of 1 us */
	assert_true(r.cost_ns > 32000.0 / 24 - 1e-6 && r.cost_ns < 32000.0 / 24 + 1e-6);
	double said = r.cost_ns * (double)r.probe_events + r.overhead_ns - r.unsubtracted_ns;
	assert_true(said - r.compensated_ns < 1e-3 && r.compensated_ns - said < 1e-3);
	an_result_free(&r);
	fmt_data_free(&d);
	fmt_data_free(&d2);
}

/* A fork child starts with the parent's frames open, not counted as calls. */
static void test_inherited_frames(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "worker"};
	struct fmt_data d;
	struct evb b;
	evb_data(&d, names, 2);
	evb_init(&b);
	evb_inherit(&b, 0x1000);
	evb_enter(&b, 10, 0x2000, 0);
	evb_exit(&b, 30, 0);
	evb_exit(&b, 35, 0);
	evb_add_thread(&d, &b, 100);
	struct an_result r;
	run(&d, &r);
	check(find(r.functions, r.nfunctions, "main"), 0, 35, 15, 35, 15);
	check(find(r.functions, r.nfunctions, "worker"), 1, 20, 20, 20, 20);
	an_result_free(&r);
	fmt_data_free(&d);
}

static struct fmt_inline inl(const char *name, uint32_t call_line)
{
	return (struct fmt_inline){strdup(name), strdup("x.c"), 1, strdup("x.c"), call_line};
}

static void sample_row(const struct an_row *r, double incl, double excl)
{
	assert_float_equal(r->v[AN_EI], incl, 1e-9);
	assert_float_equal(r->v[AN_EE], excl, 1e-9);
}

/*
 * doc/numbers.md (sampling), inlined functions: main calls outer (0x2000); inl_a
 * is inlined into outer at x.c:20 and x.c:21, inl_b into inl_a at x.c:6,
 * and at 0x2030 inl_a into itself (recursion, once per sample).
 */
static void test_sampling_inlined(void **state)
{
	(void)state;
	static const char *const names[] = {"main", "outer"};
	struct fmt_data d;
	evb_data(&d, names, 2);
	free(d.method);
	d.method = strdup("sampling");
	struct fmt_process *p = &d.procs[0];
	p->nlines = 4;
	p->lines = calloc(4, sizeof(*p->lines));
	p->lines[0] = (struct fmt_line){0x1010, strdup("m.c"), 3, NULL, 0};
	p->lines[1] = (struct fmt_line){0x2010, strdup("x.c"), 10, calloc(2, sizeof(struct fmt_inline)), 2};
	p->lines[1].inl[0] = inl("inl_a", 20);
	p->lines[1].inl[1] = inl("inl_b", 6);
	p->lines[2] = (struct fmt_line){0x2020, strdup("x.c"), 7, calloc(1, sizeof(struct fmt_inline)), 1};
	p->lines[2].inl[0] = inl("inl_a", 21);
	p->lines[3] = (struct fmt_line){0x2030, strdup("x.c"), 8, calloc(2, sizeof(struct fmt_inline)), 2};
	p->lines[3].inl[0] = inl("inl_a", 22);
	p->lines[3].inl[1] = inl("inl_a", 9);
	/* stacks, innermost first; the caller's return address is 0x1011 */
	static const uint64_t stacks[][2] = {{0x2010, 0x1011}, {0x2010, 0x1011}, {0x2010, 0x1011},
					    {0x2020, 0x1011}, {0x2030, 0x1011}};
	uint8_t *buf = malloc(1024), *e = buf;
	for (int i = 0; i < 5; i++)
		e = fmt_put_sample(e, 1000, stacks[i], 2, 0);
	d.nthreads = 1;
	d.threads = calloc(1, sizeof(*d.threads));
	d.threads[0] = (struct fmt_thread){.tid = 100, .name = strdup("t"), .nevents = 5, .ev = buf,
					   .ev_len = (size_t)(e - buf), .ev_owned = buf};
	struct an_result r;
	an_sample_run(&d, NULL, &r);
	assert_int_equal(r.samples, 5);
	sample_row(find(r.functions, r.nfunctions, "main"), 5, 0);
	sample_row(find(r.functions, r.nfunctions, "outer"), 5, 0);
	sample_row(find(r.functions, r.nfunctions, "inl_a"), 5, 2);
	sample_row(find(r.functions, r.nfunctions, "inl_b"), 3, 3);
	assert_string_equal(find(r.functions, r.nfunctions, "inl_b")->module, "test");
	/* the inlined call sites' lines: inclusive only */
	sample_row(find(r.lines, r.nlines, "x.c:20"), 3, 0);
	sample_row(find(r.lines, r.nlines, "x.c:6"), 3, 0);
	sample_row(find(r.lines, r.nlines, "x.c:21"), 1, 0);
	sample_row(find(r.lines, r.nlines, "x.c:10"), 3, 3);
	sample_row(find(r.lines, r.nlines, "x.c:7"), 1, 1);
	sample_row(find(r.lines, r.nlines, "x.c:9"), 1, 0);
	sample_row(find(r.lines, r.nlines, "m.c:3"), 5, 0);
	an_result_free(&r);
	/* annotate inl_a: its frames' lines (the next inlined call site, or the
	 * address's own line innermost) and addresses, once per sample each */
	const char **found;
	assert_int_equal(an_sample_names(&d, "inl_a", 1, &found), 4); /* a name per inline record */
	free(found);
	assert_int_equal(an_sample_names(&d, "inl_", 0, &found), 5);
	free(found);
	struct an_fn_samples fs;
	an_sample_function(&d, "inl_a", NULL, NULL, &fs);
	assert_int_equal(fs.total, 5);
	assert_int_equal(fs.incl, 5);
	assert_int_equal(fs.excl, 2);
	assert_string_equal(fs.module, "/bin/test");
	assert_int_equal(fs.decl_line, 1);
	assert_int_equal(fs.offset, 0x1010);
	static const struct { uint32_t line; uint64_t incl, excl; } want_lines[] = {{6, 3, 0}, {7, 1, 1}, {9, 1, 0},
										   {8, 1, 1}};
	assert_int_equal(fs.nlines, 4);
	for (int i = 0; i < 4; i++) {
		assert_string_equal(fs.lines[i].file, "x.c");
		assert_int_equal(fs.lines[i].line, want_lines[i].line);
		assert_int_equal(fs.lines[i].incl, want_lines[i].incl);
		assert_int_equal(fs.lines[i].excl, want_lines[i].excl);
	}
	static const uint64_t want_addrs[][3] = {{0x1010, 3, 0}, {0x1020, 1, 1}, {0x1030, 1, 1}};
	assert_int_equal(fs.naddrs, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fs.addrs[i].addr, want_addrs[i][0]);
		assert_int_equal(fs.addrs[i].incl, want_addrs[i][1]);
		assert_int_equal(fs.addrs[i].excl, want_addrs[i][2]);
	}
	an_fn_samples_free(&fs);
	fmt_data_free(&d);
}

/* ------------------------------------------------------------------------
 * Filters: a filter selects intervals (samples), every view is computed
 * from them, and percentages are of the selection.
 * --------------------------------------------------------------------- */

static double sum_excl(const struct an_row *rows, uint32_t n)
{
	double s = 0;
	for (uint32_t i = 0; i < n; i++)
		s += rows[i].v[AN_EE];
	return s;
}

static int has_row(const struct an_row *rows, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(rows[i].name, name) == 0)
			return 1;
	return 0;
}

/* Every table's exclusive column, the view's functions and modules, and the
 * tree's top level add up to the selection (the session's totals). */
static void check_selection_sums(const struct fmt_data *d, struct an_result *r, const struct an_filter *f)
{
	double tot = r->session.v[AN_EI];
	assert_float_equal(sum_excl(r->functions, r->nfunctions), tot, 1e-6);
	assert_float_equal(sum_excl(r->modules, r->nmodules), tot, 1e-6);
	assert_float_equal(sum_excl(r->thread_rows, r->nthread_rows), tot, 1e-6);
	assert_float_equal(sum_excl(r->processes, r->nprocesses), tot, 1e-6);
	if (r->sampling) {
		assert_float_equal(sum_excl(r->addresses, r->naddresses), tot, 1e-6);
		assert_float_equal(sum_excl(r->lines, r->nlines), tot, 1e-6);
	}
	struct an_view v;
	an_view_build(d, r, f, &v);
	assert_float_equal(v.total[AN_EI], tot, 1e-6);
	struct an_row *rows;
	uint32_t n;
	an_view_functions(&v, &rows, &n);
	assert_float_equal(sum_excl(rows, n), tot, 1e-6);
	free(rows);
	an_view_modules(&v, &rows, &n);
	assert_float_equal(sum_excl(rows, n), tot, 1e-6);
	free(rows);
	double top = 0;
	for (uint32_t c = v.n[0].child; c; c = v.n[c].next)
		top += v.n[c].v[AN_EI];
	if (!f->function && !f->module) /* (a function filter leaves out empty-stack time) */
		assert_float_equal(top, tot, 1e-6);
	an_view_release(&v);
}

static void run_filtered(struct fmt_data *d, const struct an_filter *f, struct an_result *r)
{
	struct an_opts o = {.filter = f};
	if (strcmp(d->method, "sampling") == 0)
		an_sample_run(d, &o, r);
	else
		an_instr_run(d, &o, r);
}

/*
 * Instrumentation, thread 100: main calls driver twice; the first driver
 * calls poly [10,20] and other [20,50], the second only other [60,90].
 * Thread 101: other [0,40], of which [0,10] off the CPU.
 */
static void instr_filter_data(struct fmt_data *d)
{
	static const char *const names[] = {"main", "driver", "poly", "other", "lib:memcpy"};
	struct evb b;
	evb_data(d, names, 5);
	evb_init(&b);
	evb_enter(&b, 0, 0x1000, 0);  /* main */
	evb_enter(&b, 5, 0x2000, 0);  /* driver */
	evb_enter(&b, 10, 0x3000, 0); /* poly */
	evb_enter(&b, 14, 0x84000, 0); /* memcpy, in poly */
	evb_exit(&b, 16, 0);
	evb_exit(&b, 20, 1); /* poly: [16,20] off the CPU */
	evb_enter(&b, 20, 0x4000, 0); /* other */
	evb_exit(&b, 50, 0);
	evb_exit(&b, 55, 0); /* driver */
	evb_enter(&b, 58, 0x2000, 0); /* driver again, without poly */
	evb_enter(&b, 60, 0x4000, 0);
	evb_exit(&b, 90, 0);
	evb_exit(&b, 92, 0);
	evb_exit(&b, 100, 0); /* main */
	evb_add_thread(d, &b, 100);
	evb_init(&b);
	evb_enter(&b, 0, 0x4000, 0);
	evb_exit(&b, 40, 0);
	evb_add_thread(d, &b, 101);
	d->threads[1].tid = 101;
}

static void test_filter_instr_function(void **state)
{
	(void)state;
	struct fmt_data d;
	instr_filter_data(&d);
	struct an_filter f = {.function = "poly"};
	struct an_result r;
	run_filtered(&d, &f, &r);
	/* the selection: the intervals with poly on the stack, [10,20] */
	assert_float_equal(r.session.v[AN_EI], 10000, 1e-6);
	assert_float_equal(r.session.v[AN_AI], 6000, 1e-6);
	assert_float_equal(r.whole[AN_EI], 140000, 1e-6);
	/* ancestors: only the intervals through poly, one call each */
	check(find(r.functions, r.nfunctions, "main"), 1, 10, 0, 6, 0);
	check(find(r.functions, r.nfunctions, "driver"), 1, 10, 0, 6, 0);
	check(find(r.functions, r.nfunctions, "poly"), 1, 10, 8, 6, 4);
	check(find(r.functions, r.nfunctions, "memcpy"), 1, 2, 2, 2, 2);
	const struct an_row *dr = find(r.functions, r.nfunctions, "driver");
	assert_float_equal(dr->vmax[AN_EI], 10000, 1e-6); /* per call: the selection's */
	assert_false(has_row(r.functions, r.nfunctions, "other"));
	/* threads: 101 never runs poly */
	assert_int_equal(r.nthread_rows, 1);
	assert_int_equal(r.thread_rows[0].tid, 100);
	check_selection_sums(&d, &r, &f);
	an_result_free(&r);

	/* a module: the intervals with a function of libx.so on the stack */
	struct an_filter m = {.module = "libx*"};
	run_filtered(&d, &m, &r);
	assert_float_equal(r.session.v[AN_EI], 2000, 1e-6);
	check(find(r.functions, r.nfunctions, "driver"), 1, 2, 0, 2, 0);
	check_selection_sums(&d, &r, &m);
	an_result_free(&r);

	/* just my code on top of a function filter: memcpy's time goes to poly */
	struct an_filter j = {.function = "poly", .just_my_code = 1};
	run_filtered(&d, &j, &r);
	check_selection_sums(&d, &r, &j);
	an_result_free(&r);
	fmt_data_free(&d);
}

static void test_filter_instr_thread(void **state)
{
	(void)state;
	struct fmt_data d;
	instr_filter_data(&d);
	struct an_filter f = {.tid = 101};
	struct an_result r;
	run_filtered(&d, &f, &r);
	assert_float_equal(r.session.v[AN_EI], 40000, 1e-6);
	check(find(r.functions, r.nfunctions, "other"), 1, 40, 40, 40, 40);
	assert_false(has_row(r.functions, r.nfunctions, "main"));
	assert_int_equal(r.nthread_rows, 1);
	check_selection_sums(&d, &r, &f);
	an_result_free(&r);
	/* the whole run, and a pid that holds both threads */
	struct an_filter all = {0}, pid = {.pid = 100};
	run_filtered(&d, &all, &r);
	assert_float_equal(r.session.v[AN_EI], 140000, 1e-6);
	check(find(r.functions, r.nfunctions, "driver"), 2, 84, 14, 80, 14);
	check_selection_sums(&d, &r, &all);
	an_result_free(&r);
	run_filtered(&d, &pid, &r);
	assert_float_equal(r.session.v[AN_EI], 140000, 1e-6);
	check_selection_sums(&d, &r, &pid);
	an_result_free(&r);
	fmt_data_free(&d);
}

/*
 * Sampling, thread 100: main>driver>poly x2, main>driver>other x6, main x2;
 * thread 101: main>other x5.  Each sampled address has a source line.
 */
static void sample_filter_data(struct fmt_data *d)
{
	static const char *const names[] = {"main", "driver", "poly", "other"};
	evb_data(d, names, 4);
	free(d->method);
	d->method = strdup("sampling");
	struct fmt_process *p = &d->procs[0];
	/* a line per address sampled (callers: one byte back), sorted */
	static const uint64_t at[] = {0x1010, 0x1020, 0x1030, 0x2010, 0x2020, 0x3010, 0x4010, 0x4020};
	static const uint32_t line[] = {10, 11, 12, 20, 21, 30, 40, 41};
	p->nlines = 8;
	p->lines = calloc(8, sizeof(*p->lines));
	for (uint32_t i = 0; i < 8; i++)
		p->lines[i] = (struct fmt_line){at[i], strdup("f.c"), line[i], NULL, 0};
	static const uint64_t poly[] = {0x3010, 0x2011, 0x1011}, other[] = {0x4010, 0x2021, 0x1011},
			      mainonly[] = {0x1020}, other2[] = {0x4020, 0x1031};
	d->nthreads = 2;
	d->threads = calloc(2, sizeof(*d->threads));
	for (uint32_t t = 0; t < 2; t++) {
		uint8_t *buf = malloc(4096), *e = buf;
		uint32_t n = 0;
		if (t == 0) {
			for (int i = 0; i < 2; i++, n++)
				e = fmt_put_sample(e, 1000, poly, 3, 0);
			for (int i = 0; i < 6; i++, n++)
				e = fmt_put_sample(e, 1000, other, 3, 0);
			for (int i = 0; i < 2; i++, n++)
				e = fmt_put_sample(e, 1000, mainonly, 1, 0);
		} else {
			for (int i = 0; i < 5; i++, n++)
				e = fmt_put_sample(e, 1000, other2, 2, 0);
		}
		d->threads[t] = (struct fmt_thread){.tid = 100 + t, .name = strdup("t"), .nevents = n, .ev = buf,
						    .ev_len = (size_t)(e - buf), .ev_owned = buf};
	}
}

static void test_filter_sampling(void **state)
{
	(void)state;
	struct fmt_data d;
	sample_filter_data(&d);
	struct an_result r;
	/* the whole run */
	struct an_filter all = {0};
	run_filtered(&d, &all, &r);
	assert_float_equal(r.session.v[AN_EI], 15, 1e-9);
	sample_row(find(r.functions, r.nfunctions, "driver"), 8, 0);
	check_selection_sums(&d, &r, &all);
	an_result_free(&r);

	/* --function poly: 2 samples; driver and main are on all of them */
	struct an_filter f = {.function = "poly"};
	run_filtered(&d, &f, &r);
	assert_int_equal(r.samples, 15);
	assert_float_equal(r.whole[AN_EI], 15, 1e-9);
	assert_float_equal(r.session.v[AN_EI], 2, 1e-9);
	sample_row(find(r.functions, r.nfunctions, "main"), 2, 0);
	sample_row(find(r.functions, r.nfunctions, "driver"), 2, 0);
	sample_row(find(r.functions, r.nfunctions, "poly"), 2, 2);
	assert_false(has_row(r.functions, r.nfunctions, "other"));
	sample_row(find(r.lines, r.nlines, "f.c:30"), 2, 2);
	sample_row(find(r.lines, r.nlines, "f.c:20"), 2, 0);
	assert_false(has_row(r.lines, r.nlines, "f.c:40"));
	assert_int_equal(r.naddresses, 3);
	check_selection_sums(&d, &r, &f);
	an_result_free(&r);

	/* --tid 101: lines and addresses of that thread only */
	struct an_filter t = {.tid = 101};
	run_filtered(&d, &t, &r);
	assert_float_equal(r.session.v[AN_EI], 5, 1e-9);
	sample_row(find(r.lines, r.nlines, "f.c:41"), 5, 5);
	sample_row(find(r.lines, r.nlines, "f.c:12"), 5, 0);
	assert_false(has_row(r.lines, r.nlines, "f.c:20"));
	assert_false(has_row(r.lines, r.nlines, "f.c:10"));
	assert_int_equal(r.naddresses, 2);
	assert_false(has_row(r.functions, r.nfunctions, "driver"));
	check_selection_sums(&d, &r, &t);
	an_result_free(&r);

	/* --pid 100 --function other: 11 samples of both threads */
	struct an_filter po = {.pid = 100, .function = "oth*"};
	run_filtered(&d, &po, &r);
	assert_float_equal(r.session.v[AN_EI], 11, 1e-9);
	sample_row(find(r.functions, r.nfunctions, "driver"), 6, 0);
	sample_row(find(r.functions, r.nfunctions, "main"), 11, 0);
	sample_row(find(r.lines, r.nlines, "f.c:40"), 6, 6);
	sample_row(find(r.lines, r.nlines, "f.c:41"), 5, 5);
	sample_row(find(r.lines, r.nlines, "f.c:21"), 6, 0);
	assert_false(has_row(r.lines, r.nlines, "f.c:11"));
	check_selection_sums(&d, &r, &po);
	an_result_free(&r);
	fmt_data_free(&d);
}

/* A hostile file's caller at address 0 (found by fuzz.run): its address row
 * is made like any other, not taken for an empty cache slot. */
/* just-my-code hides system libraries, not the programs installed beside
 * them (cc1's time had no user frame to go to) */
static void test_system_modules(void **state)
{
	(void)state;
	assert_true(an_is_system_module("/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_true(an_is_system_module("/lib64/ld-linux-x86-64.so.2"));
	assert_true(an_is_system_module("/usr/lib/python3/dist-packages/_foo.cpython-311-x86_64-linux-gnu.so"));
	assert_true(an_is_system_module("[vdso]"));
	assert_true(an_is_system_module(NULL));
	assert_false(an_is_system_module("/usr/lib/gcc/x86_64-linux-gnu/12/cc1"));
	assert_false(an_is_system_module("/usr/lib/jvm/java-17-openjdk-amd64/bin/java"));
	assert_false(an_is_system_module("/usr/libexec/git-core/git-remote-http"));
	assert_false(an_is_system_module("/home/me/build/libmine.so"));
	assert_false(an_is_system_module("/usr/lib/foo/notso.sock"));
}

static void test_sampling_caller_at_zero(void **state)
{
	(void)state;
	struct fmt_data d;
	sample_filter_data(&d);
	static const uint64_t zero[] = {0x1020, 0};
	uint8_t *buf = malloc(64), *e = fmt_put_sample(buf, 1000, zero, 2, 0);
	free(d.threads[1].ev_owned);
	d.threads[1].ev = d.threads[1].ev_owned = buf;
	d.threads[1].ev_len = (size_t)(e - buf);
	d.threads[1].nevents = 1;
	struct an_filter t = {.tid = 101};
	struct an_result r;
	run_filtered(&d, &t, &r);
	assert_float_equal(r.session.v[AN_EI], 1, 1e-9);
	assert_int_equal(r.naddresses, 2);
	check_selection_sums(&d, &r, &t);
	an_result_free(&r);
	fmt_data_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_labels),
		cmocka_unit_test(test_spec_example),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_open_frames_and_empty_stack),
		cmocka_unit_test(test_exit_skipping_frames),
		cmocka_unit_test(test_modules_and_percentages),
		cmocka_unit_test(test_compensation),
		cmocka_unit_test(test_compensation_two_processes),
		cmocka_unit_test(test_inherited_frames),
		cmocka_unit_test(test_sampling_inlined),
		cmocka_unit_test(test_filter_instr_function),
		cmocka_unit_test(test_filter_instr_thread),
		cmocka_unit_test(test_filter_sampling),
		cmocka_unit_test(test_sampling_caller_at_zero),
		cmocka_unit_test(test_system_modules),
		cmocka_unit_test(test_grow_zeroed),
		cmocka_unit_test(test_args_joined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
