/*
 * sym_table.h - a module's symbol table read once and sorted by address,
 * so that naming the function at an address takes a binary search instead
 * of libdwfl's dwfl_module_addrinfo, which reads every symbol of the table
 * for each address (34,000 functions of gcc's cc1: 3 s of the recorder).
 *
 * It answers only where its answer is the one dwfl_module_addrinfo gives:
 * one sized symbol holds the address, or none does and no sizeless symbol
 * (a label) lies between the end of the last sized one and the address.
 * Anything else (overlapping symbols, labels) is left to libdwfl, whose
 * rules then apply unchanged.
 * tests/unit/test_sym_table.c checks the two agree on real binaries.
 */
#ifndef STINT_SYM_TABLE_H
#define STINT_SYM_TABLE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct sym_table;

/*
 * The table of module m, with addresses kept relative to the module's low
 * address, so that it serves every process mapping the same file.  NULL
 * when out of memory or when m has no symbols.
 */
struct sym_table *sym_table_read(Dwfl_Module *m);

/*
 * The symbol holding addr, an address of module m (the one the table was
 * read from, or the same file in another process): 1 and its name (owned
 * by the table), first address and size; -1 when the module has no symbol
 * for it (libdwfl would find none); 0 when libdwfl must be asked.
 * (Aliases' names are asked of libdwfl on first use and kept in t.)
 */
int sym_table_find(struct sym_table *t, Dwfl_Module *m, uint64_t addr, const char **name, uint64_t *start,
		   uint64_t *size);

void sym_table_free(struct sym_table *t);

#endif
