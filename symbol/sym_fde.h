/*
 * sym_fde.h - the code range of an address from the call-frame
 * information of its ELF file (.eh_frame_hdr's sorted table, and the FDE's
 * own length): what delimits a function without a symbol.
 */
#ifndef STINT_SYM_FDE_H
#define STINT_SYM_FDE_H

#include <libelf.h>
#include <stdint.h>

/* For addr, an address of elf's image (its own virtual addresses): 0 and
 * the range [*start, *end) of the FDE holding it; -1 when there is no
 * table, no FDE holds it, or what the file says cannot be read. */
int sym_fde_range(Elf *elf, uint64_t addr, uint64_t *start, uint64_t *end);

#endif
