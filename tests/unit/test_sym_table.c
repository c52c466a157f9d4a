/*
 * test_sym_table.c - the sorted symbol tables (symbol/sym_table.c) give
 * the names libdwfl's dwfl_module_addrinfo gives, on real binaries of this
 * machine: gcc's cc1 (tens of thousands of C++ functions), bash, python3,
 * libc, libstdc++ and this test's own libraries.  Every symbol is asked at
 * its first byte, its middle, its last byte and just past its end, and the
 * module at evenly spread addresses; the table must answer most of them
 * itself (else it would speed nothing up) and agree with libdwfl on every
 * answer checked (an evenly spread part of them: libdwfl's own lookup,
 * the slow one, would take minutes for all).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../symbol/sym_table.h"

struct tally {
	long asked, answered, disagreed;
	long verify_every; /* libdwfl's lookup reads the whole table: ask it of every n-th only */
	long verified;
};

static void check_addr(struct sym_table *t, Dwfl_Module *m, uint64_t addr, struct tally *ty, const char *file)
{
	const char *name;
	uint64_t start = 0, size = 0;
	int r = sym_table_find(t, m, addr, &name, &start, &size);
	ty->asked++;
	if (r == 0)
		return;
	ty->answered++;
	if (ty->answered % ty->verify_every != 0)
		return;
	ty->verified++;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	int same = r < 0 ? want == NULL
			 : want && strcmp(want, name) == 0 && addr - off == start && sym.st_size == size;
	if (!same) {
		if (ty->disagreed++ < 5)
			fprintf(stderr, "%s: %#lx: table says %s (%#lx, %lu), libdwfl %s (%#lx, %lu)\n", file,
				(unsigned long)addr, r < 0 ? "(none)" : name, (unsigned long)start,
				(unsigned long)size, want ? want : "(none)", (unsigned long)(addr - off),
				(unsigned long)sym.st_size);
	}
}

static void check_module(Dwfl_Module *m, const char *file, struct tally *ty)
{
	struct sym_table *t = sym_table_read(m);
	if (!t)
		return;
	int n = dwfl_module_getsymtab(m);
	ty->verify_every = n / 300 + 1; /* about 1200 addresses a module, 1 s for cc1 */
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		if (!dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		check_addr(t, m, addr, ty, file);
		if (sym.st_size > 1) {
			check_addr(t, m, addr + sym.st_size / 2, ty, file);
			check_addr(t, m, addr + sym.st_size - 1, ty, file);
		}
		check_addr(t, m, addr + sym.st_size, ty, file);
	}
	Dwarf_Addr low, high;
	dwfl_module_info(m, NULL, &low, &high, NULL, NULL, NULL, NULL);
	for (int k = 0; k < 4000 && high > low; k++)
		check_addr(t, m, low + (high - low) / 4000 * (uint64_t)k + (uint64_t)k % 7, ty, file);
	sym_table_free(t);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* One file, as libdwfl reads it offline (with its debug file when the
 * machine has one under /usr/lib/debug). */
static int check_file(const char *path, long *answered_total)
{
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	assert_non_null(dwfl);
	Dwfl_Module *m = dwfl_report_offline(dwfl, path, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!m) {
		dwfl_end(dwfl);
		return 0;
	}
	struct tally ty = {0};
	check_module(m, path, &ty);
	dwfl_end(dwfl);
	fprintf(stderr, "%-52s %7ld addresses, %5.1f%% answered by the table, %ld checked, %ld disagree\n", path,
		ty.asked, ty.asked ? 100.0 * (double)ty.answered / (double)ty.asked : 0.0, ty.verified, ty.disagreed);
	assert_int_equal(ty.disagreed, 0);
	/* a table that leaves most addresses to libdwfl would not be worth it */
	if (ty.asked > 20000)
		assert_true(ty.answered > ty.asked * 8 / 10);
	*answered_total += ty.answered;
	return 1;
}

static void test_real_binaries(void **state)
{
	(void)state;
	const char *patterns[] = {
		"/usr/lib/gcc/*-linux-gnu*/*/cc1",
		"/usr/lib/gcc/*-linux-gnu*/*/cc1plus",
		"/usr/bin/bash",
		"/usr/bin/python3.*[0-9]",
		"/usr/lib/*-linux-gnu/libc.so.6",
		"/usr/lib/*-linux-gnu/libstdc++.so.6",
		"/usr/lib/*-linux-gnu/libdw.so.1",
	};
	int files = 0;
	long answered = 0;
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		glob_t g;
		if (glob(patterns[i], 0, NULL, &g) != 0)
			continue;
		for (size_t k = 0; k < g.gl_pathc && k < 2; k++)
			files += check_file(g.gl_pathv[k], &answered);
		globfree(&g);
	}
	assert_true(files >= 1); /* libc at least: every machine that runs this has it */
	assert_true(answered > 0);
}

static int check_each(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)userdata;
	(void)start;
	check_module(m, name, arg);
	return DWARF_CB_OK;
}

/* The process's own modules as libdwfl sees a live process (the recorder's
 * view: modules at their run-time addresses). */
static void test_live_process(void **state)
{
	(void)state;
	static char *debuginfo_path;
	static const Dwfl_Callbacks proc_callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);
	assert_non_null(dwfl);
	assert_int_equal(dwfl_linux_proc_report(dwfl, getpid()), 0);
	dwfl_report_end(dwfl, NULL, NULL);
	struct tally ty = {0};
	ptrdiff_t off = 0;
	while ((off = dwfl_getmodules(dwfl, check_each, &ty, off)) > 0)
		;
	dwfl_end(dwfl);
	fprintf(stderr, "this process: %ld addresses, %ld answered by the table, %ld disagree\n", ty.asked,
		ty.answered, ty.disagreed);
	assert_int_equal(ty.disagreed, 0);
	assert_true(ty.answered > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_binaries),
		cmocka_unit_test(test_live_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
