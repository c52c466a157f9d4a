/*
 * test_sym_plt.c - the PLT stubs of a module are named by symbol/sym.c,
 * each one its own function: NAME@plt for a stub whose relocation names
 * its function, "[plt]" for the slot none names (the first of .plt, the
 * jump into the dynamic linker that binds a lazy stub's function).  Asked
 * of this test's own executable, described by its /proc/self/maps.
 *
 * The first slot had no name, and the recorder then named the code by its
 * call-frame information, whose range covers the whole .plt: a sample there
 * (a program's first calls, or every call under LD_BIND_NOT) made every
 * stub after it one nameless function (Python's libpython: 3 % of the
 * samples in "0xf5020", 1391 stubs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../symbol/symbol.h"

/* This executable's section name's address in memory and size; 0 if none. */
static uint64_t section_of_self(const char *want, uint64_t *size)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	uint64_t addr = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && strcmp(elf_strptr(e, shstrndx, sh.sh_name), want) == 0) {
			addr = sh.sh_addr;
			*size = sh.sh_size;
		}
	GElf_Ehdr eh;
	int pie = gelf_getehdr(e, &eh) && eh.e_type == ET_DYN;
	elf_end(e);
	close(fd);
	/* the executable is the first module of the dynamic linker's list */
	return addr ? addr + (pie ? (uint64_t)(uintptr_t)_r_debug.r_map->l_addr : 0) : 0;
}

static void plt_slots_named(void **state)
{
	(void)state;
	uint64_t size = 0, plt = section_of_self(".plt", &size);
	if (!plt || size < 32) {
		print_message("no .plt with stubs in this executable: nothing to ask\n");
		skip();
	}
	size_t len;
	char *maps = util_read_file("/proc/self/maps", &len);
	assert_non_null(maps);
	struct sym_proc *sp = sym_proc_open(maps, len);
	assert_non_null(sp);
	/* the lowest address first, as the recorder asks them */
	struct sym_info first, stub;
	assert_int_equal(sym_proc_lookup(sp, plt, &first), 0);
	assert_non_null(first.name);
	assert_string_equal(first.name, "[plt]");
	assert_int_equal(first.start, plt);
	assert_int_equal(first.size, 16);
	unsigned named = 0;
	for (uint64_t a = plt + 16; a + 16 <= plt + size; a += 16) {
		assert_int_equal(sym_proc_lookup(sp, a + 6, &stub), 0);
		assert_non_null(stub.name);
		assert_int_equal(stub.start, a);
		assert_int_equal(stub.size, 16);
		named += strstr(stub.name, "@plt") != NULL;
		sym_info_free(&stub);
	}
	assert_true(named >= 1);
	sym_info_free(&first);
	sym_proc_close(sp);
	free(maps);
}

int main(void)
{
	/* calls through the PLT, so that the executable has stubs */
	if (getenv("STINT_TEST_NEVER_SET"))
		puts(strerror(0));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plt_slots_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
