/*
 * test_demangle.c - function names as the reports show them
 * (symbol/sym.c, sym_demangle): C++ by libstdc++'s demangler, Rust's two
 * manglings (v0, _R...; legacy, _ZN...17h<hash>E, which reads as C++ with
 * the hash and $-escapes kept) by libiberty's when stint was built with it,
 * and anything else as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../symbol/symbol.h"

static void expect(const char *raw, const char *shown)
{
	char *d = sym_demangle(raw);
	assert_non_null(d);
	assert_string_equal(d, shown);
	free(d);
}

static void test_cxx_and_c(void **state)
{
	(void)state;
	expect("_ZN3Foo3barEi", "Foo::bar(int)");
	expect("_Z5twiceIiET_S0_", "int twice<int>(int)");
	expect("main", "main");
	expect("_Z", "_Z"); /* not a whole mangled name */
	expect("_R", "_R");
}

static void test_rust(void **state)
{
	(void)state;
	expect("_RNvNtNtCsfEOYDRpO4Ta_11miniz_oxide7inflate4core11apply_match", "miniz_oxide::inflate::core::apply_match");
	expect("_ZN3std3sys9backtrace28__rust_begin_short_backtrace17hb0e8f5e57807b538E",
	       "std::sys::backtrace::__rust_begin_short_backtrace");
	expect("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$"
	       "17h5e2b4b8fb9c3eec5E",
	       "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

/* "cxx", or "rust": exits 77 (skipped) where stint was built without libiberty */
int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "rust") == 0) {
#ifndef STINT_HAVE_IBERTY
		printf("skipped: built without libiberty (Debian libiberty-dev): Rust's names stay mangled\n");
		return 77;
#else
		const struct CMUnitTest tests[] = {cmocka_unit_test(test_rust)};
		return cmocka_run_group_tests(tests, NULL, NULL);
#endif
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_cxx_and_c)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
