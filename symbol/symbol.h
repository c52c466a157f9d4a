/*
 * symbol.h - address to function, module and source line, with elfutils'
 * libdwfl, for one process described by a copy of its /proc/PID/maps.
 * Used by the recorder, which stores the answers in the data file so that
 * reports need neither the binaries nor their debug information.
 */
#ifndef STINT_SYMBOL_H
#define STINT_SYMBOL_H

#include <stddef.h>
#include <stdint.h>
#include "../arch/arch.h"
#include "../format/format.h"

struct sym_proc;

struct sym_info {
	char *name;      /* demangled function name, malloc'd; NULL if unknown */
	uint64_t start;  /* address of the function's first byte */
	uint64_t size;
	int module;      /* index into the modules of sym_proc_modules(), or -1 */
	char *file;      /* source file, malloc'd; NULL if unknown */
	uint32_t line;
};

/*
 * Describe a process from the text of its maps file.  Never fails for a
 * well-formed maps text; returns NULL only when out of memory.
 */
struct sym_proc *sym_proc_open(const char *maps, size_t len);

/* Modules (ELF files mapped executable), with build-ids; owned by sp. */
const struct fmt_module *sym_proc_modules(struct sym_proc *sp, uint32_t *n);

/* Index of the module (sym_proc_modules) holding addr, or -1. */
int sym_proc_module_of(const struct sym_proc *sp, uint64_t addr);

/* Look addr up; returns 0 and fills out (free with sym_info_free), or -1. */
int sym_proc_lookup(struct sym_proc *sp, uint64_t addr, struct sym_info *out);

/*
 * The code range holding addr, from the call-frame information of its
 * module (.eh_frame_hdr and .eh_frame): what delimits a function that has
 * no symbol, in a stripped program.  0 and [*start, *end) when found.  (A
 * range is not always a whole function: a part the compiler split off,
 * NAME.cold, has one of its own.)
 */
int sym_proc_code_range(struct sym_proc *sp, uint64_t addr, uint64_t *start, uint64_t *end);

/* Source file and line of one instruction address; 0 when found.  The
 * file is absolute where the unit's compilation directory makes it so; the
 * string lasts until the next call. */
int sym_proc_line(struct sym_proc *sp, uint64_t addr, const char **file, uint32_t *line);

/* One function inlined at an address (symbol.h's view of fmt_inline). */
struct sym_inline {
	char *name;           /* demangled, malloc'd */
	char *file;           /* declaration file, malloc'd, "" if unknown */
	uint32_t line;
	char *call_file;      /* the call site in the enclosing function */
	uint32_t call_line;
};

/*
 * The functions inlined at addr (from the DWARF of its module), outermost
 * first: each was inlined into the previous one, the first into the
 * function holding the code.  Returns how many (0: none, or no DWARF) and
 * sets *out (free with sym_inline_free).
 */
uint32_t sym_proc_inlines(struct sym_proc *sp, uint64_t addr, struct sym_inline **out);
void sym_inline_free(struct sym_inline *v, uint32_t n);

/*
 * Unwind one sampled user stack with the DWARF CFI of the process's modules
 * (libdwfl), from perf's user registers (ARCH_PERF_REGS_MASK, in the
 * order of arch/arch.h) and a copy of the stack starting at SP.
 * Stores up to max program counters, innermost first (callers are return
 * addresses); returns how many, and sets *truncated when the unwinder gave
 * up before the outermost frame: bit 0 when it stopped on an error, bit 1
 * when it needed stack memory past the end of the copy (the caller knows
 * whether the copy was cut, or reached the top of the stack), bit 2 with
 * bit 0 when the last frame it reached is code without call-frame
 * information (hand-written assembly, usually).  A return address outside
 * every executable mapping ends the stack before it, as an error.
 */
int sym_proc_unwind(struct sym_proc *sp, int tid, const uint64_t regs[ARCH_PERF_NREGS], const uint8_t *stack,
		    size_t stack_len, uint64_t *pcs, int max, int *truncated);

void sym_info_free(struct sym_info *si);
void sym_proc_close(struct sym_proc *sp);

/* A demangled copy of a C++ symbol name, or a copy of name itself. */
char *sym_demangle(const char *name);

#endif
