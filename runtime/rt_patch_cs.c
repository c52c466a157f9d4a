/*
 * rt_patch_cs.c - probes at the entry of functions that have no patch site
 * (a program or library built without -finstrument-functions, -pg -mfentry
 * or -fpatchable-function-entry), with the Capstone disassembler.
 *
 * For each function of a module (its symbol table, else its dynamic one,
 * with sizes; a stripped module's also from .eh_frame, rt_cs_evidence)
 * the instructions covering the first 5 bytes after any endbr64
 * are moved to a trampoline in pages mapped within +-2 GiB of the module,
 * and replaced by "jmp trampoline".  The trampoline is
 *     .quad function          (rt_patch_enter reads it)
 *     call *entry(%rip)       (rt_patch_entry_tramp: entry probe, swaps the
 *                              return address exactly as rt_patch.c does)
 *     the moved instructions, relocated
 *     jmp back                (to the first instruction not moved)
 * Relocation: RIP-relative operands get a new displacement; jcc/jmp rel8 and
 * rel32 become rel32 forms to the same target; "call rel32" becomes "push
 * the original return address; jmp target", so the callee returns into the
 * function itself and unwinders and backtraces never see the trampoline.
 *
 * A function is refused (listed in the .patch file the recorder reads,
 * never patched half) when:
 *   short  - it ends before 5 bytes and what follows is not padding;
 *   jump   - a direct branch anywhere in the module's functions lands
 *            inside the bytes that would be moved;
 *   loop   - a jump inside the function goes back to its first
 *            instruction (a loop with no prologue before it: each turn
 *            would pass the entry probe, and count as a call);
 *   insn   - an instruction Capstone does not know, or one that cannot be
 *            moved (loop/jrcxz, xbegin, int3, a relative operand it cannot
 *            reach from the trampoline);
 *   nosize - its symbol has no size (the code to scan is not known);
 *   entry  - the program's entry point (no return address on its stack);
 *   go     - the whole module, Go code (rt_cs_own_walker);
 *   v8     - the whole module, V8 (node, Electron; rt_cs_own_walker);
 *   jvm    - the whole module, HotSpot (libjvm.so; rt_cs_own_walker).
 * A function that record-time selection leaves out (stint record
 * --function/--not-function/--module) is not patched at all: it runs its
 * own code, and is counted apart ("unselected"), not as refused.
 * Parts of functions the compiler split off (NAME.cold) are jumped to,
 * never called, and are not functions: neither patched nor counted; nor is
 * the start-up code of crt*.o (_start, _init, frame_dummy, ...).
 *
 * Capstone (libcapstone.so.4) is loaded with dlopen only when a module
 * needs it, and allocates from mmap'ed memory of ours (the program may
 * define its own malloc; the runtime never calls it).  Built without
 * Capstone's header (STINT_HAVE_CAPSTONE undefined), or where the library
 * is missing at run time, modules are left alone and the .patch file says
 * so: stint record checks this first and says so in one line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt_int.h"
#include "rt_patch.h"
#include "rt_select.h"

#ifdef STINT_HAVE_CAPSTONE
#include <capstone/capstone.h>

extern void rt_patch_entry_tramp(void);

/* ------------------------------------------------------------------------
 * Memory for Capstone and our tables: bump allocation from mmap, released
 * all at once after each module
 * --------------------------------------------------------------------- */

struct rt_arena {
	uint8_t *base;
	size_t used, size;
};
static struct rt_arena rt_cs_heap;

static void *rt_arena_alloc(struct rt_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (!a->base || a->used + n > a->size) {
		/* a new, larger block; the old one is dropped with the arena */
		size_t sz = a->size ? a->size * 2 : (1u << 20);
		while (sz < n + 16)
			sz *= 2;
		void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		/* chain the old block in the new one's first 16 bytes */
		memcpy(m, &a->base, sizeof(a->base));
		memcpy((uint8_t *)m + 8, &a->size, sizeof(a->size));
		a->base = m;
		a->size = sz;
		a->used = 16;
	}
	void *p = a->base + a->used;
	a->used += n;
	return p;
}

static void rt_arena_reset(struct rt_arena *a)
{
	while (a->base) {
		uint8_t *old;
		size_t oldsz;
		memcpy(&old, a->base, sizeof(old));
		memcpy(&oldsz, a->base + 8, sizeof(oldsz));
		munmap(a->base, a->size);
		a->base = old;
		a->size = oldsz;
	}
	a->used = a->size = 0;
}

static void *rt_cs_malloc(size_t n)
{
	size_t *p = rt_arena_alloc(&rt_cs_heap, n + 16);
	if (!p)
		return NULL;
	p[0] = n;
	return p + 2;
}

static void *rt_cs_calloc(size_t n, size_t m)
{
	void *p = rt_cs_malloc(n * m);
	if (p)
		memset(p, 0, n * m);
	return p;
}

static void *rt_cs_realloc(void *old, size_t n)
{
	void *p = rt_cs_malloc(n);
	if (p && old) {
		size_t was = ((size_t *)old)[-2];
		memcpy(p, old, was < n ? was : n);
	}
	return p;
}

static void rt_cs_free(void *p)
{
	(void)p; /* released with the arena */
}

/* ------------------------------------------------------------------------
 * Capstone, loaded on first use
 * --------------------------------------------------------------------- */

static struct {
	int tried, ok;
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_err (*close)(csh *);
	cs_insn *(*malloc_insn)(csh);
	void (*free_insn)(cs_insn *, size_t);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
} rt_cs;

static int rt_cs_load(void)
{
	if (rt_cs.tried)
		return rt_cs.ok;
	rt_cs.tried = 1;
	/* the dynamic linker's dlopen, not this library's interposer */
	void *(*real_dlopen)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	void *h = real_dlopen ? real_dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h)
		return 0;
	rt_cs.open = (cs_err(*)(cs_arch, cs_mode, csh *))dlsym(h, "cs_open");
	rt_cs.option = (cs_err(*)(csh, cs_opt_type, size_t))dlsym(h, "cs_option");
	rt_cs.close = (cs_err(*)(csh *))dlsym(h, "cs_close");
	rt_cs.malloc_insn = (cs_insn * (*)(csh)) dlsym(h, "cs_malloc");
	rt_cs.free_insn = (void (*)(cs_insn *, size_t))dlsym(h, "cs_free");
	rt_cs.disasm_iter = (bool (*)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *))dlsym(h, "cs_disasm_iter");
	if (!rt_cs.open || !rt_cs.option || !rt_cs.close || !rt_cs.malloc_insn || !rt_cs.free_insn ||
	    !rt_cs.disasm_iter)
		return 0;
	cs_opt_mem mem = {rt_cs_malloc, rt_cs_calloc, rt_cs_realloc, rt_cs_free, vsnprintf};
	if (rt_cs.option(0, CS_OPT_MEM, (size_t)&mem) != CS_ERR_OK)
		return 0;
	rt_cs.ok = 1;
	return 1;
}

/* ------------------------------------------------------------------------
 * The module's functions
 * --------------------------------------------------------------------- */

struct rt_cs_fn {
	uint64_t addr, size; /* in memory */
	const char *name;    /* NULL: a stripped module's, named by file offset once accepted */
	const char *why;     /* refused: the reason's keyword */
	int fde;             /* from .eh_frame only: a function once there is evidence */
};

static int rt_cs_cmp_fn(const void *a, const void *b)
{
	const struct rt_cs_fn *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int rt_cs_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int rt_cs_endbr(const uint8_t *p)
{
	return p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && (p[3] == 0xfa || p[3] == 0xfb);
}

/* Where the probe's jump goes in fn: its first instruction after any endbr64. */
static uint64_t rt_cs_first(const struct rt_cs_fn *fn)
{
	return fn->addr + (fn->size >= 4 && rt_cs_endbr((const uint8_t *)(uintptr_t)fn->addr) ? 4 : 0);
}

/* The start-up code the toolchain adds to every program (crt*.o): not the
 * program's functions, and not instrumented by -finstrument-functions
 * either; _start has no return address at all. */
static int rt_cs_is_crt(const char *nm)
{
	static const char *const crt[] = {"_start", "_init", "_fini", "deregister_tm_clones", "register_tm_clones",
					  "__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
					  "_dl_relocate_static_pie"};
	for (size_t i = 0; i < sizeof(crt) / sizeof(crt[0]); i++)
		if (strcmp(nm, crt[i]) == 0)
			return 1;
	return 0;
}

/* A name of a part the compiler split off a function (NAME.cold, NAME.cold.N). */
static int rt_cs_is_fragment(const char *nm)
{
	const char *c = strstr(nm, ".cold");
	return c && (c[5] == 0 || c[5] == '.');
}

struct rt_cs_mod {
	const struct dl_phdr_info *info;
	uintptr_t lo, hi;       /* the module's executable segments */
	struct rt_cs_fn *fns;
	size_t nfns;
	struct rt_cs_fn *frags; /* the split-off parts (NAME.cold): scanned only */
	size_t nfrags;
	uint64_t *targets;      /* direct branch targets, sorted */
	size_t ntargets, cap;
	int stripped;           /* no .symtab: functions from .eh_frame too */
	uint64_t entry;         /* the program's entry point (0: a library) */
	uint64_t *entries;      /* (stripped) call targets and addresses taken, sorted */
	size_t nentries, ecap;
	uint8_t *tramp;         /* trampoline block, and what is used of it */
	size_t tused, tsize;
	csh cs;
	cs_insn *insn;
};

/* Whether [a, a + len) lies in the file-backed bytes of one loaded segment
 * (an executable one if exec). */
static int rt_cs_file_bytes_at(const struct rt_cs_mod *m, uint64_t a, uint64_t len, int exec)
{
	const ElfW(Phdr) *ph = rt_patch_load_segment(m->info, a, exec);
	return ph && a + len <= m->info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
}

static int rt_cs_exec_at(const struct rt_cs_mod *m, uint64_t a, uint64_t len)
{
	return rt_cs_file_bytes_at(m, a, len, 1);
}

/* The end of the executable segment holding a. */
static uintptr_t rt_cs_segment_end(const struct rt_cs_mod *m, uint64_t a)
{
	const ElfW(Phdr) *ph = rt_patch_load_segment(m->info, a, 1);
	return ph ? m->info->dlpi_addr + ph->p_vaddr + ph->p_memsz : a + 1;
}

/* Whether [a, a + len) lies in a loaded segment's file-backed bytes. */
static int rt_cs_mapped_at(const struct rt_cs_mod *m, uint64_t a, uint64_t len)
{
	return rt_cs_file_bytes_at(m, a, len, 0);
}

/* The file offset of a (in memory): what the report names an unnamed
 * function by ("0x1a2b0", as every view names addresses without a symbol). */
static uint64_t rt_cs_file_offset(const struct rt_cs_mod *m, uint64_t a)
{
	const ElfW(Phdr) *ph = rt_patch_load_segment(m->info, a, 0);
	return ph ? a - (m->info->dlpi_addr + ph->p_vaddr) + ph->p_offset : a - m->info->dlpi_addr;
}

/*
 * The code ranges .eh_frame describes, from the sorted search table of
 * .eh_frame_hdr (PT_GNU_EH_FRAME, in memory): each entry gives an FDE's
 * start and the FDE, whose address range follows its start address.  Only
 * the usual encodings are read (table: 4-byte offsets from the header;
 * FDE: 4-byte PC-relative start), and an FDE whose start does not read
 * back as the table's is skipped: nothing is guessed.  fn(arg, start, end)
 * for each; the number of entries.
 */
static size_t rt_cs_fdes(const struct rt_cs_mod *m, void (*fn)(void *, uint64_t, uint64_t), void *arg)
{
	const struct dl_phdr_info *info = m->info;
	const uint8_t *hdr = NULL;
	size_t hdrsz = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
			hdrsz = info->dlpi_phdr[i].p_memsz;
		}
	if (!hdr || hdrsz < 12 || !rt_cs_mapped_at(m, (uintptr_t)hdr, hdrsz) || hdr[0] != 1)
		return 0;
	/* eh_frame_ptr: 4 bytes (any sdata4/udata4 form); fde_count: udata4;
	 * table: datarel sdata4 */
	if (((hdr[1] & 0x0f) != 0x03 && (hdr[1] & 0x0f) != 0x0b) || hdr[2] != 0x03 || hdr[3] != 0x3b)
		return 0;
	uint32_t count;
	memcpy(&count, hdr + 8, 4);
	if ((uint64_t)count * 8 > hdrsz - 12)
		return 0;
	size_t n = 0;
	for (uint32_t i = 0; i < count; i++) {
		int32_t rel[2];
		memcpy(rel, hdr + 12 + (size_t)i * 8, 8);
		uint64_t start = (uint64_t)(uintptr_t)(hdr + rel[0]);
		const uint8_t *fde = hdr + rel[1];
		uint32_t len;
		int32_t pcb;
		uint32_t range;
		if (!rt_cs_mapped_at(m, (uintptr_t)fde, 16))
			continue;
		memcpy(&len, fde, 4);
		memcpy(&pcb, fde + 8, 4);
		memcpy(&range, fde + 12, 4);
		if (len < 12 || len == 0xffffffffu || (uint64_t)(uintptr_t)(fde + 8 + pcb) != start ||
		    range == 0)
			continue;
		fn(arg, start, start + range);
		n++;
	}
	return n;
}

static void rt_cs_count_fde(void *arg, uint64_t start, uint64_t end)
{
	(void)start;
	(void)end;
	(*(size_t *)arg)++;
}

static void rt_cs_add_fde(void *arg, uint64_t start, uint64_t end)
{
	struct rt_cs_mod *m = arg;
	if (!rt_cs_exec_at(m, start, 1))
		return;
	struct rt_cs_fn *fn = &m->fns[m->nfns++];
	memset(fn, 0, sizeof(*fn));
	fn->addr = start;
	fn->size = end - start;
	fn->fde = 1;
	if (!rt_cs_exec_at(m, start, fn->size))
		fn->why = "nosize";
}

/*
 * Whether the file holds code whose runtime walks its stacks by tables of
 * its own, and stops (or crashes) at a return address it does not know,
 * which a patched function's is while it runs: "go", "v8", "jvm" or NULL.
 *   - Go (a .gopclntab or .go.buildinfo section): its runtime walks its
 *     goroutines' stacks to grow and move them and to collect garbage
 *     ("unknown pc").
 *   - V8, the JavaScript engine of node, Electron and Chromium (its string
 *     tables name the embedded builtins' blob): its code calls the
 *     module's C++ functions, and its garbage collector looks up each exit
 *     frame's return address in its own code tables ("Check failed:
 *     maybe_code.has_value()"); its JIT code also returns through patched
 *     functions the shadow stack does not follow (node aborted at once).
 *   - HotSpot, the Java virtual machine (libjvm.so: its dynamic symbols
 *     name JVM_handle_linux_signal, its signal handler, which only the VM
 *     itself defines): it walks its own native frames by their frame
 *     pointers and return addresses (frame::sender), and crashed at the
 *     first patched one (SIGSEGV, then abort).
 */
static const char *rt_cs_own_walker(const uint8_t *f, size_t fsz)
{
	static const char v8_mark[] = "_ZNK2v88internal7Isolate18embedded_blob_code";
	static const char jvm_mark[] = "JVM_handle_linux_signal";
	const ElfW(Ehdr) *eh = (const void *)f;
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsz)
		return NULL;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff), *names = &sh[eh->e_shstrndx];
	if (names->sh_offset > fsz || names->sh_size > fsz - names->sh_offset)
		return NULL;
	int v8 = 0, jvm = 0;
	for (unsigned s = 0; s < eh->e_shnum; s++) {
		if (sh[s].sh_type == SHT_STRTAB && sh[s].sh_offset <= fsz && sh[s].sh_size <= fsz - sh[s].sh_offset) {
			const uint8_t *t = f + sh[s].sh_offset;
			v8 = v8 || memmem(t, sh[s].sh_size, v8_mark, sizeof(v8_mark) - 1) != NULL;
			jvm = jvm || memmem(t, sh[s].sh_size, jvm_mark, sizeof(jvm_mark) - 1) != NULL;
		}
		if (sh[s].sh_name >= names->sh_size)
			continue;
		const char *nm = (const char *)f + names->sh_offset + sh[s].sh_name;
		size_t room = names->sh_size - sh[s].sh_name;
		if (strnlen(nm, room) < room && (strcmp(nm, ".gopclntab") == 0 || strcmp(nm, ".go.buildinfo") == 0))
			return "go";
	}
	return v8 ? "v8" : jvm ? "jvm" : NULL;
}

/*
 * Read the functions from the file's .symtab, else its .dynsym; a module
 * without .symtab (stripped) also gets, as candidates, the code ranges its
 * .eh_frame describes (rt_cs_evidence keeps those that are functions).
 */
static int rt_cs_functions(struct rt_cs_mod *m, const uint8_t *f, size_t fsz)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsz)
		return -1;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	const ElfW(Shdr) *sym = NULL;
	for (unsigned s = 0; s < eh->e_shnum; s++)
		if (sh[s].sh_type == SHT_SYMTAB || (sh[s].sh_type == SHT_DYNSYM && !sym))
			sym = &sh[s];
	m->stripped = !sym || sym->sh_type != SHT_SYMTAB;
	if (sym && (sym->sh_link >= eh->e_shnum || sym->sh_entsize != sizeof(ElfW(Sym)) ||
		    sym->sh_offset + sym->sh_size > fsz || sh[sym->sh_link].sh_offset + sh[sym->sh_link].sh_size > fsz))
		sym = NULL;
	const ElfW(Shdr) *str = sym ? &sh[sym->sh_link] : NULL;
	const ElfW(Sym) *syms = sym ? (const void *)(f + sym->sh_offset) : NULL;
	size_t n = sym ? sym->sh_size / sizeof(ElfW(Sym)) : 0, nfde = 0;
	if (m->stripped)
		rt_cs_fdes(m, rt_cs_count_fde, &nfde);
	m->fns = rt_arena_alloc(&rt_cs_heap, (n + nfde + 1) * sizeof(*m->fns));
	m->frags = rt_arena_alloc(&rt_cs_heap, (n + 1) * sizeof(*m->frags));
	if (!m->fns || !m->frags)
		return -1;
	uintptr_t entry = eh->e_type == ET_EXEC ? eh->e_entry : m->info->dlpi_addr + eh->e_entry;
	int is_exe = !m->info->dlpi_name || !*m->info->dlpi_name;
	for (size_t i = 0; i < n; i++) {
		const ElfW(Sym) *s = &syms[i];
		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || s->st_value == 0 ||
		    s->st_name >= str->sh_size)
			continue;
		const char *nm = (const char *)f + str->sh_offset + s->st_name;
		uint64_t a = (eh->e_type == ET_EXEC ? 0 : m->info->dlpi_addr) + s->st_value;
		if (rt_cs_is_fragment(nm)) {
			/* its branches back into its function (a loop's next
			 * turn, often to just past the entry) count as any */
			if (s->st_size && rt_cs_exec_at(m, a, s->st_size))
				m->frags[m->nfrags++] = (struct rt_cs_fn){.addr = a, .size = s->st_size, .name = nm};
			continue;
		}
		if (rt_cs_is_crt(nm))
			continue;
		if (!rt_cs_exec_at(m, a, 1))
			continue;
		struct rt_cs_fn *fn = &m->fns[m->nfns++];
		memset(fn, 0, sizeof(*fn));
		fn->addr = a;
		fn->size = s->st_size;
		fn->name = nm;
		fn->why = s->st_size == 0 ? "nosize" : !rt_cs_exec_at(m, a, s->st_size) ? "nosize" : NULL;
		if (is_exe && a == entry)
			fn->why = "entry";
	}
	if (nfde)
		rt_cs_fdes(m, rt_cs_add_fde, m);
	qsort(m->fns, m->nfns, sizeof(*m->fns), rt_cs_cmp_fn);
	/* aliases: one function per address (a symbol before an FDE, the
	 * sized one, the first name); an FDE gives a sizeless symbol its size */
	size_t w = 0;
	for (size_t i = 0; i < m->nfns; i++) {
		if (w && m->fns[w - 1].addr == m->fns[i].addr) {
			struct rt_cs_fn *k = &m->fns[w - 1], o = m->fns[i], fde = {0};
			if (k->fde != o.fde) { /* a symbol and an FDE */
				fde = k->fde ? *k : o;
				*k = k->fde ? o : *k;
				if (k->size == 0 && fde.size && !fde.why) {
					k->size = fde.size;
					if (k->why && strcmp(k->why, "nosize") == 0)
						k->why = NULL;
				}
			} else if (k->size == 0 && o.size) {
				*k = o;
			}
			continue;
		}
		m->fns[w++] = m->fns[i];
	}
	m->nfns = w;
	/* the program's entry (_start) is no function (no return address),
	 * and not counted, as with symbols; its code is scanned (it takes
	 * main's address) and it is dropped with the candidates */
	m->entry = is_exe ? entry : 0;
	return 0;
}

static void rt_cs_add(uint64_t **vec, size_t *n, size_t *capp, uint64_t t)
{
	if (*n == *capp) {
		size_t cap = *capp ? *capp * 2 : 4096;
		uint64_t *v = rt_arena_alloc(&rt_cs_heap, cap * sizeof(*v));
		if (!v)
			return;
		if (*n)
			memcpy(v, *vec, *n * sizeof(*v));
		*vec = v;
		*capp = cap;
	}
	(*vec)[(*n)++] = t;
}

static void rt_cs_add_target(struct rt_cs_mod *m, uint64_t t)
{
	rt_cs_add(&m->targets, &m->ntargets, &m->cap, t);
}

/* The immediate target of a direct jump or call, or 0. */
static uint64_t rt_cs_branch_target(const cs_insn *in)
{
	const cs_detail *d = in->detail;
	int branch = 0;
	for (int g = 0; g < d->groups_count; g++)
		if (d->groups[g] == CS_GRP_JUMP || d->groups[g] == CS_GRP_CALL ||
		    d->groups[g] == CS_GRP_BRANCH_RELATIVE)
			branch = 1;
	if (in->id == X86_INS_XBEGIN)
		branch = 1;
	if (!branch || d->x86.op_count != 1 || d->x86.operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)d->x86.operands[0].imm;
}

/* The function (of the sorted, one-per-address list) holding address a, or NULL. */
static struct rt_cs_fn *rt_cs_fn_at(struct rt_cs_mod *m, uint64_t a)
{
	size_t lo = 0, hi = m->nfns;
	while (lo < hi) {
		size_t c = lo + (hi - lo) / 2;
		if (m->fns[c].addr <= a)
			lo = c + 1;
		else
			hi = c;
	}
	struct rt_cs_fn *fn = lo ? &m->fns[lo - 1] : NULL;
	return fn && a - fn->addr < (fn->size ? fn->size : 1) ? fn : NULL;
}

/* Disassemble fn whole, adding its branch targets (a part split off a
 * function, if frag).  A function that does not decode to its end is
 * refused (what it jumps to is not known, nor whether it could be moved). */
static void rt_cs_scan_one(struct rt_cs_mod *m, struct rt_cs_fn *fn, int frag)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)fn->addr;
	size_t left = fn->size;
	uint64_t pc = fn->addr;
	uint64_t first = rt_cs_first(fn);
	while (left > 0) {
		if (!rt_cs.disasm_iter(m->cs, &code, &left, &pc, m->insn)) {
			if (left >= 4 && rt_cs_endbr(code)) {
				code += 4, left -= 4, pc += 4;
				continue;
			}
			if (!fn->why && !frag)
				fn->why = "insn";
			/* go on after one byte: branches further on
			 * still count for the other functions */
			code++;
			left--;
			pc++;
			continue;
		}
		uint64_t t = rt_cs_branch_target(m->insn);
		if (t)
			rt_cs_add_target(m, t);
		if (frag && t && m->insn->id != X86_INS_CALL) {
			/* a jump from the split-off part back to its function's
			 * entry (the next turn of a loop) */
			struct rt_cs_fn *to = rt_cs_fn_at(m, t);
			if (to && t <= rt_cs_first(to) && !to->why)
				to->why = "loop";
		}
		if (frag)
			continue;
		if (t >= fn->addr && t <= first && m->insn->id != X86_INS_CALL && !fn->why)
			fn->why = "loop";
		if (!m->stripped)
			continue;
		/* a stripped module's function entries: what a call
		 * reaches, and addresses taken (lea fn(%rip)) */
		if (t && m->insn->id == X86_INS_CALL) {
			rt_cs_add(&m->entries, &m->nentries, &m->ecap, t);
		} else if (m->insn->id == X86_INS_LEA) {
			const cs_x86 *x = &m->insn->detail->x86;
			if (x->op_count == 2 && x->operands[1].type == X86_OP_MEM &&
			    x->operands[1].mem.base == X86_REG_RIP && x->operands[1].mem.index == X86_REG_INVALID)
				rt_cs_add(&m->entries, &m->nentries, &m->ecap, pc + (uint64_t)x->operands[1].mem.disp);
		}
	}
}

/* Every function and split-off part whole: the branch targets of the module. */
static void rt_cs_scan(struct rt_cs_mod *m)
{
	for (size_t i = 0; i < m->nfns; i++)
		if (m->fns[i].size && rt_cs_exec_at(m, m->fns[i].addr, m->fns[i].size))
			rt_cs_scan_one(m, &m->fns[i], 0);
	for (size_t i = 0; i < m->nfrags; i++)
		rt_cs_scan_one(m, &m->frags[i], 1);
	if (m->ntargets)
		qsort(m->targets, m->ntargets, sizeof(*m->targets), rt_cs_cmp_u64);
	if (m->nentries) /* (kept sorted: rt_cs_evidence merges the relocations' in) */
		qsort(m->entries, m->nentries, sizeof(*m->entries), rt_cs_cmp_u64);
}

/*
 * What the scan found, kept for the recording's later processes of the same
 * code (rt_kept.c; bash: 120 of the 145 ms each start of it took): the
 * direct branch targets, a stripped module's entries and the functions that
 * do not decode, as offsets from the load address, after the counts.  The
 * hash is of all the scan reads: the functions' bounds and their bytes in
 * memory.
 */
struct rt_cs_kept {
	uint64_t nfns, stripped;
	uint64_t ntargets, nentries, ninsn, nloop; /* the four arrays of offsets follow */
};

static int rt_cs_scanned(const struct rt_cs_mod *m, const struct rt_cs_fn *fn)
{
	return fn->size && rt_cs_exec_at(m, fn->addr, fn->size);
}

static uint64_t rt_cs_hash(const struct rt_cs_mod *m)
{
	/* the decoder's own version too: another may decode otherwise */
	static uint64_t capstone;
	if (!capstone)
		capstone = rt_kept_identity((const void *)rt_cs.disasm_iter) | 1;
	uint64_t h = rt_kept_mix(0x243f6a8885a308d3ull ^ capstone, m->nfns);
	h = rt_kept_mix(h, (uint64_t)(m->stripped != 0));
	for (size_t i = 0; i < m->nfns; i++) {
		const struct rt_cs_fn *fn = &m->fns[i];
		h = rt_kept_mix(h, fn->addr - m->info->dlpi_addr);
		h = rt_kept_mix(h, fn->size);
		if (rt_cs_scanned(m, fn))
			h = rt_kept_hash(h, (const void *)(uintptr_t)fn->addr, fn->size);
	}
	h = rt_kept_mix(h, m->nfrags);
	for (size_t i = 0; i < m->nfrags; i++) {
		h = rt_kept_mix(h, m->frags[i].addr - m->info->dlpi_addr);
		h = rt_kept_hash(h, (const void *)(uintptr_t)m->frags[i].addr, m->frags[i].size);
	}
	return h;
}

static void rt_cs_keep(const struct rt_cs_mod *m, uint64_t hash)
{
	size_t ninsn = 0, nloop = 0;
	for (size_t i = 0; i < m->nfns; i++) {
		ninsn += m->fns[i].why && strcmp(m->fns[i].why, "insn") == 0;
		nloop += m->fns[i].why && strcmp(m->fns[i].why, "loop") == 0;
	}
	size_t n = m->ntargets + m->nentries + ninsn + nloop;
	struct rt_cs_kept *k = rt_arena_alloc(&rt_cs_heap, sizeof(*k) + n * 8);
	if (!k)
		return;
	k->nfns = m->nfns;
	k->stripped = m->stripped != 0;
	k->ntargets = m->ntargets;
	k->nentries = m->nentries;
	k->ninsn = ninsn;
	k->nloop = nloop;
	uint64_t *o = (uint64_t *)(k + 1);
	for (size_t i = 0; i < m->ntargets; i++)
		*o++ = m->targets[i] - m->info->dlpi_addr;
	for (size_t i = 0; i < m->nentries; i++)
		*o++ = m->entries[i] - m->info->dlpi_addr;
	for (size_t i = 0; i < m->nfns; i++)
		if (m->fns[i].why && strcmp(m->fns[i].why, "insn") == 0)
			*o++ = m->fns[i].addr - m->info->dlpi_addr;
	for (size_t i = 0; i < m->nfns; i++)
		if (m->fns[i].why && strcmp(m->fns[i].why, "loop") == 0)
			*o++ = m->fns[i].addr - m->info->dlpi_addr;
	rt_kept_write("cs", hash, k, sizeof(*k) + n * 8);
}

/* The n offsets o as addresses of m's module, into v; 0 if they are not
 * in ascending order. */
static int rt_cs_addresses(const struct rt_cs_mod *m, uint64_t *v, const uint64_t *o, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		v[i] = m->info->dlpi_addr + o[i];
		if (i && v[i] < v[i - 1])
			return 0;
	}
	return 1;
}

/* What an earlier process's scan of the same code found, into m (1), or 0. */
static int rt_cs_take_kept(struct rt_cs_mod *m, uint64_t hash)
{
	size_t len;
	const struct rt_cs_kept *k = rt_kept_read("cs", hash, &len);
	if (!k)
		return 0;
	int ok = len >= sizeof(*k) && k->nfns == m->nfns && k->stripped == (uint64_t)(m->stripped != 0) &&
		 k->ntargets <= len / 8 && k->nentries <= len / 8 && k->ninsn <= len / 8 && k->nloop <= len / 8 &&
		 sizeof(*k) + 8 * (k->ntargets + k->nentries + k->ninsn + k->nloop) == len;
	const uint64_t *o = (const uint64_t *)(k + 1);
	if (ok) {
		m->targets = rt_arena_alloc(&rt_cs_heap, (k->ntargets + 1) * 8);
		m->entries = rt_arena_alloc(&rt_cs_heap, (k->nentries + 1) * 8);
		/* both in order: rt_cs_target_inside searches the targets,
		 * rt_cs_evidence merges into the entries */
		ok = m->targets && m->entries && rt_cs_addresses(m, m->targets, o, k->ntargets) &&
		     rt_cs_addresses(m, m->entries, o + k->ntargets, k->nentries);
	}
	if (!ok) {
		rt_kept_free((void *)k, len);
		return 0;
	}
	m->ntargets = m->cap = k->ntargets;
	m->nentries = m->ecap = k->nentries;
	o += k->ntargets + k->nentries;
	for (size_t i = 0; i < k->ninsn + k->nloop; i++) {
		uint64_t a = m->info->dlpi_addr + o[i];
		size_t lo = 0, hi = m->nfns;
		while (lo < hi) {
			size_t c = (lo + hi) / 2;
			if (m->fns[c].addr < a)
				lo = c + 1;
			else
				hi = c;
		}
		for (; lo < m->nfns && m->fns[lo].addr == a; lo++)
			if (!m->fns[lo].why && rt_cs_scanned(m, &m->fns[lo]))
				m->fns[lo].why = i < k->ninsn ? "insn" : "loop";
	}
	rt_kept_free((void *)k, len);
	return 1;
}

static int rt_cs_has(const uint64_t *v, size_t n, uint64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t c = (a + b) / 2;
		if (v[c] < x)
			a = c + 1;
		else
			b = c;
	}
	return a < n && v[a] == x;
}

/*
 * A stripped module's candidates from .eh_frame: an FDE also starts each
 * part the compiler split off a function (NAME.cold), which is jumped to,
 * never called; patching its first bytes would take a return address that
 * is not one.  So an FDE start is a function only with evidence: a direct
 * call reaches it, its address is taken in the code (lea) or in the data
 * (an R_X86_64_RELATIVE relocation's addend).  The others are dropped (not
 * counted: as NAME.cold with symbols).  The kept ones are named by their
 * file offset.
 */
static void rt_cs_evidence(struct rt_cs_mod *m, const uint8_t *f, size_t fsz)
{
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	uintptr_t base = eh->e_type == ET_EXEC ? 0 : m->info->dlpi_addr;
	size_t from_code = m->nentries; /* sorted by the scan (or as kept) */
	for (unsigned s = 0; s < eh->e_shnum; s++) {
		if (sh[s].sh_type != SHT_RELA || sh[s].sh_entsize != sizeof(ElfW(Rela)) ||
		    sh[s].sh_offset + sh[s].sh_size > fsz)
			continue;
		const ElfW(Rela) *r = (const void *)(f + sh[s].sh_offset);
		for (size_t i = 0; i < sh[s].sh_size / sizeof(*r); i++)
			if (ELF64_R_TYPE(r[i].r_info) == R_X86_64_RELATIVE)
				rt_cs_add(&m->entries, &m->nentries, &m->ecap, base + (uint64_t)r[i].r_addend);
	}
	/* the relocations' sorted apart, then merged: sorting all of them again
	 * in every process took 2 ms of each start of bash */
	size_t nrel = m->nentries - from_code;
	uint64_t *merged = nrel && from_code ? rt_arena_alloc(&rt_cs_heap, m->nentries * sizeof(*merged)) : NULL;
	if (nrel)
		qsort(m->entries + from_code, nrel, sizeof(*m->entries), rt_cs_cmp_u64);
	if (merged) {
		size_t a = 0, b = from_code, w = 0;
		while (a < from_code || b < m->nentries)
			merged[w++] = b == m->nentries || (a < from_code && m->entries[a] <= m->entries[b])
					      ? m->entries[a++] : m->entries[b++];
		m->entries = merged;
		m->ecap = m->nentries;
	} else if (nrel && from_code) {
		qsort(m->entries, m->nentries, sizeof(*m->entries), rt_cs_cmp_u64);
	}
	/* the linker's PLT stubs have FDEs too, and are called: never functions */
	uint64_t plt_lo[8], plt_hi[8];
	unsigned nplt = 0;
	const ElfW(Shdr) *strs = eh->e_shstrndx < eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
	for (unsigned s = 0; strs && strs->sh_offset + strs->sh_size <= fsz && s < eh->e_shnum && nplt < 8; s++)
		if (sh[s].sh_name + 4 < strs->sh_size && (sh[s].sh_flags & SHF_EXECINSTR) &&
		    strncmp((const char *)f + strs->sh_offset + sh[s].sh_name, ".plt", 4) == 0) {
			plt_lo[nplt] = base + sh[s].sh_addr;
			plt_hi[nplt++] = base + sh[s].sh_addr + sh[s].sh_size;
		}
	size_t w = 0;
	for (size_t i = 0; i < m->nfns; i++) {
		struct rt_cs_fn *fn = &m->fns[i];
		if (fn->fde) {
			int plt = 0;
			for (unsigned k = 0; k < nplt; k++)
				plt |= fn->addr >= plt_lo[k] && fn->addr < plt_hi[k];
			if (plt || fn->addr == m->entry || !rt_cs_has(m->entries, m->nentries, fn->addr))
				continue;
			char *nm = rt_arena_alloc(&rt_cs_heap, 24);
			if (!nm)
				continue;
			snprintf(nm, 24, "0x%llx", (unsigned long long)rt_cs_file_offset(m, fn->addr));
			fn->name = nm;
		}
		m->fns[w++] = *fn;
	}
	m->nfns = w;
}

/* A direct branch lands in (lo, hi). */
static int rt_cs_target_inside(const struct rt_cs_mod *m, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = m->ntargets;
	while (a < b) { /* first target > lo */
		size_t c = (a + b) / 2;
		if (m->targets[c] <= lo)
			a = c + 1;
		else
			b = c;
	}
	return a < m->ntargets && m->targets[a] < hi;
}

/* Whether [pc, end) is padding after a function: whole NOPs and int3s. */
static int rt_cs_padding(struct rt_cs_mod *m, uint64_t pc, uint64_t end)
{
	while (pc < end) {
		if (!rt_cs_exec_at(m, pc, 1))
			return 0;
		const uint8_t *code = (const uint8_t *)(uintptr_t)pc;
		if (*code == 0xcc) {
			pc++;
			continue;
		}
		size_t left = 16;
		uint64_t ipc = pc;
		if (!rt_cs_exec_at(m, pc, left) || !rt_cs.disasm_iter(m->cs, &code, &left, &ipc, m->insn) ||
		    (m->insn->id != X86_INS_NOP && m->insn->id != X86_INS_INT3))
			return 0;
		pc += m->insn->size;
	}
	return 1;
}

/* ------------------------------------------------------------------------
 * Trampolines
 * --------------------------------------------------------------------- */

#define RT_CS_TRAMP_MAX 128 /* bytes one trampoline may take */

static int rt_cs_fits32(int64_t v)
{
	return v == (int32_t)v;
}

static void rt_cs_put32(uint8_t *p, int64_t v);

/* A moved call's return address, the function's own: pushed at o without a
 * register (lea -8(%rsp),%rsp; movl $lo,(%rsp); movl $hi,4(%rsp)).  Returns
 * the end of the 20 bytes. */
static uint8_t *rt_cs_push_return(uint8_t *o, uint64_t ret)
{
	static const uint8_t lea[5] = {0x48, 0x8d, 0x64, 0x24, 0xf8};
	memcpy(o, lea, 5);
	o[5] = 0xc7, o[6] = 0x04, o[7] = 0x24;
	rt_cs_put32(o + 8, (int64_t)(uint32_t)ret);
	o[12] = 0xc7, o[13] = 0x44, o[14] = 0x24, o[15] = 0x04;
	rt_cs_put32(o + 16, (int64_t)(uint32_t)(ret >> 32));
	return o + 20;
}

static void rt_cs_put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;
	memcpy(p, &x, 4);
}

/*
 * Build fn's trampoline at out (its address in memory: out too) and say how
 * many bytes at fn's patch point it replaces (*moved).  Returns the
 * trampoline's length, or 0 with fn->why set.
 */
static size_t rt_cs_build(struct rt_cs_mod *m, struct rt_cs_fn *fn, uint64_t at, uint8_t *out,
			  size_t *moved)
{
	uint64_t fnend = fn->addr + fn->size;
	uint8_t *o = out;
	uint64_t fnaddr = fn->addr;
	memcpy(o, &fnaddr, 8);
	o += 8;
	/* call *entry(%rip): the entry's address is the block's first qword */
	o[0] = 0xff;
	o[1] = 0x15;
	int64_t d = (int64_t)((uintptr_t)m->tramp - ((uintptr_t)o + 6));
	if (!rt_cs_fits32(d)) {
		fn->why = "insn";
		return 0;
	}
	rt_cs_put32(o + 2, d);
	o += 6;
	uint64_t pc = at;
	int ended = 0; /* an unconditional jump or return was moved */
	while (pc < at + 5) {
		if (pc >= fnend) {
			/* the function ended: what follows up to 5 bytes must be
			 * padding no other function starts in, and the code must
			 * not fall through into it */
			if (!ended || !rt_cs_padding(m, pc, at + 5)) {
				fn->why = "short";
				return 0;
			}
			pc = at + 5;
			break;
		}
		const uint8_t *code = (const uint8_t *)(uintptr_t)pc;
		size_t left = (size_t)(fnend - pc);
		uint64_t ipc = pc;
		if (!rt_cs.disasm_iter(m->cs, &code, &left, &ipc, m->insn)) {
			fn->why = "insn";
			return 0;
		}
		const cs_insn *in = m->insn;
		const cs_x86 *x = &in->detail->x86;
		uint64_t next = pc + in->size;
		if (ended) {
			/* after a return inside the moved bytes: code reached
			 * only by a branch, and none lands here */
			pc = next;
			continue;
		}
		switch (in->id) {
		case X86_INS_LOOP:
		case X86_INS_LOOPE:
		case X86_INS_LOOPNE:
		case X86_INS_JRCXZ:
		case X86_INS_JECXZ:
		case X86_INS_JCXZ:
		case X86_INS_XBEGIN:
		case X86_INS_INT3:
		case X86_INS_SYSCALL: /* the kernel may restart it at its address */
			fn->why = "insn";
			return 0;
		default:
			break;
		}
		uint64_t target = rt_cs_branch_target(in);
		if (target) {
			/* the opcode after any prefixes */
			size_t k = 0;
			while (k < in->size && (in->bytes[k] == 0xf2 || in->bytes[k] == 0x2e || in->bytes[k] == 0x3e))
				k++;
			uint8_t op = in->bytes[k];
			int64_t rel;
			if (op == 0xe8) { /* call: push the original return address, jmp */
				o = rt_cs_push_return(o, next);
				o[0] = 0xe9;
				rel = (int64_t)(target - ((uintptr_t)o + 5));
				if (!rt_cs_fits32(rel)) {
					fn->why = "insn";
					return 0;
				}
				rt_cs_put32(o + 1, rel);
				o += 5;
			} else if (op == 0xe9 || op == 0xeb) { /* jmp */
				o[0] = 0xe9;
				rel = (int64_t)(target - ((uintptr_t)o + 5));
				if (!rt_cs_fits32(rel)) {
					fn->why = "insn";
					return 0;
				}
				rt_cs_put32(o + 1, rel);
				o += 5;
				ended = 1;
			} else if ((op & 0xf0) == 0x70 || (op == 0x0f && k + 1 < in->size && (in->bytes[k + 1] & 0xf0) == 0x80)) {
				uint8_t cc = (op == 0x0f ? in->bytes[k + 1] : op) & 0x0f;
				o[0] = 0x0f;
				o[1] = (uint8_t)(0x80 | cc);
				rel = (int64_t)(target - ((uintptr_t)o + 6));
				if (!rt_cs_fits32(rel)) {
					fn->why = "insn";
					return 0;
				}
				rt_cs_put32(o + 2, rel);
				o += 6;
			} else {
				fn->why = "insn";
				return 0;
			}
		} else {
			int riprel = 0, on_stack = 0;
			for (int i = 0; i < x->op_count; i++)
				if (x->operands[i].type == X86_OP_MEM) {
					riprel |= x->operands[i].mem.base == X86_REG_RIP;
					on_stack |= x->operands[i].mem.base == X86_REG_RSP ||
						    x->operands[i].mem.index == X86_REG_RSP;
				}
			/* an indirect call, as the direct ones: the callee must
			 * return into the function itself (unwinders and backtraces
			 * know no trampoline), so past the moved bytes: "push the
			 * return address; jmp *operand" (ff /2 made ff /4); one that
			 * would return inside them (push %rax; call *%rdi; pop %rax;
			 * ret, Rust's closures' shims) cannot be moved */
			int icall = in->id == X86_INS_CALL;
			if (in->id == X86_INS_LCALL ||
			    (icall && (next < at + 5 || on_stack || x->encoding.modrm_offset == 0 ||
				       x->encoding.modrm_offset >= in->size || in->bytes[x->encoding.modrm_offset - 1] != 0xff ||
				       ((in->bytes[x->encoding.modrm_offset] >> 3) & 7) != 2))) {
				fn->why = "insn";
				return 0;
			}
			if (icall) {
				o = rt_cs_push_return(o, next);
				ended = 1; /* the callee returns to the function, not here */
			}
			memcpy(o, in->bytes, in->size);
			if (icall)
				o[x->encoding.modrm_offset] = (uint8_t)((o[x->encoding.modrm_offset] & ~0x38) | 0x20);
			if (riprel) {
				/* a RIP-relative displacement is always 32 bits; Capstone 4
				 * says 2 after a 0x66 prefix (movdqa, comisd, ...), so the
				 * bytes at its offset are checked instead of its size */
				int32_t d32;
				if (x->encoding.disp_offset == 0 || x->encoding.disp_offset + 4u > in->size ||
				    (memcpy(&d32, in->bytes + x->encoding.disp_offset, 4), d32 != x->disp)) {
					fn->why = "insn";
					return 0;
				}
				uint64_t ref = next + (uint64_t)x->disp;
				int64_t nd = (int64_t)(ref - ((uintptr_t)o + in->size));
				if (!rt_cs_fits32(nd)) {
					fn->why = "insn";
					return 0;
				}
				rt_cs_put32(o + x->encoding.disp_offset, nd);
			} else {
				/* anything else that reads RIP cannot be moved */
				for (int r = 0; r < in->detail->regs_read_count; r++)
					if (in->detail->regs_read[r] == X86_REG_RIP) {
						fn->why = "insn";
						return 0;
					}
			}
			o += in->size;
			if (in->id == X86_INS_RET || in->id == X86_INS_RETF || in->id == X86_INS_UD2 ||
			    in->id == X86_INS_HLT || (in->id == X86_INS_JMP && !target))
				ended = 1;
		}
		pc = next;
		if ((size_t)(o - out) > RT_CS_TRAMP_MAX - 8) {
			fn->why = "insn";
			return 0;
		}
	}
	if (!ended) { /* jmp back */
		o[0] = 0xe9;
		int64_t rel = (int64_t)(pc - ((uintptr_t)o + 5));
		if (!rt_cs_fits32(rel)) {
			fn->why = "insn";
			return 0;
		}
		rt_cs_put32(o + 1, rel);
		o += 5;
	}
	*moved = (size_t)(pc - at);
	return (size_t)(o - out);
}

/* ------------------------------------------------------------------------
 * The .patch file: what was done to each module, for the report
 * --------------------------------------------------------------------- */

static unsigned rt_cs_seq;

/* The reason of a function record-time selection leaves out: counted in
 * the module line's fifth field, not listed one by one. */
static const char rt_cs_unselected[] = "unselected";

static void rt_cs_report(const char *path, const struct rt_cs_mod *m, size_t npatched, size_t ncounted,
			 const char *all_why)
{
	size_t cap = 256 + strlen(path), nunsel = 0;
	for (size_t i = 0; i < m->nfns; i++) {
		if (m->fns[i].why || all_why)
			cap += strlen(m->fns[i].name) + 16;
		nunsel += !all_why && m->fns[i].why == rt_cs_unselected;
	}
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return;
	size_t n = (size_t)snprintf(buf, cap, "module\t%s\t%zu\t%zu\t%zu\n", path, npatched, ncounted, nunsel);
	for (size_t i = 0; i < m->nfns && n < cap; i++) {
		const char *why = all_why ? all_why : m->fns[i].why;
		if (why && why != rt_cs_unselected)
			n += (size_t)snprintf(buf + n, cap - n, "%s\t%s\n", m->fns[i].name, why);
	}
	char suffix[32];
	snprintf(suffix, sizeof(suffix), ".patch.%u", __atomic_add_fetch(&rt_cs_seq, 1, __ATOMIC_RELAXED));
	rt_write_file(suffix, buf, n < cap ? n : cap);
	munmap(buf, cap);
}

/* Patch the functions of one module; file is its ELF file, mapped. */
void rt_patch_cs_module(const struct dl_phdr_info *info, const uint8_t *file, size_t fsz, const char *path)
{
	struct rt_cs_mod m;
	memset(&m, 0, sizeof(m));
	m.info = info;
	m.lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < m.lo)
			m.lo = a;
		if (a + ph->p_memsz > m.hi)
			m.hi = a + ph->p_memsz;
	}
	if (m.hi <= m.lo || rt_cs_functions(&m, file, fsz) < 0) {
		rt_arena_reset(&rt_cs_heap);
		return;
	}
	const char *own_walker = rt_cs_own_walker(file, fsz);
	if (own_walker) {
		rt_cs_report(path, &m, 0, m.nfns, own_walker);
		rt_arena_reset(&rt_cs_heap);
		return;
	}
	if (!rt_cs_load()) {
		/* a stripped module's candidates need Capstone to be told apart */
		size_t w = 0;
		for (size_t i = 0; i < m.nfns; i++)
			if (!m.fns[i].fde)
				m.fns[w++] = m.fns[i];
		m.nfns = w;
		rt_cs_report(path, &m, 0, m.nfns, "nocapstone");
		rt_arena_reset(&rt_cs_heap);
		return;
	}
	if (rt_cs.open(CS_ARCH_X86, CS_MODE_64, &m.cs) != CS_ERR_OK) {
		size_t w = 0;
		for (size_t i = 0; i < m.nfns; i++)
			if (!m.fns[i].fde)
				m.fns[w++] = m.fns[i];
		m.nfns = w;
		rt_cs_report(path, &m, 0, m.nfns, "nocapstone");
		rt_arena_reset(&rt_cs_heap);
		return;
	}
	rt_cs.option(m.cs, CS_OPT_DETAIL, CS_OPT_ON);
	m.insn = rt_cs.malloc_insn(m.cs);
	if (!m.insn)
		goto out;
	uint64_t hash = rt_cs_hash(&m);
	if (!rt_cs_take_kept(&m, hash)) {
		m.targets = m.entries = NULL;
		m.ntargets = m.nentries = m.cap = m.ecap = 0; /* (a file refused halfway) */
		rt_cs_scan(&m);
		rt_cs_keep(&m, hash);
	}
	if (m.stripped)
		rt_cs_evidence(&m, file, fsz);
	/* what the selection leaves out keeps its code (the scan above still
	 * read it: its branches may land in a selected function) */
	if (rt_sel_on)
		for (size_t i = 0; i < m.nfns; i++)
			if (!rt_sel_want(m.fns[i].addr))
				m.fns[i].why = rt_cs_unselected;

	size_t ncand = 0;
	for (size_t i = 0; i < m.nfns; i++)
		ncand += !m.fns[i].why;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	m.tsize = (16 + ncand * RT_CS_TRAMP_MAX + page - 1) & ~(page - 1);
	if (ncand) {
		m.tramp = rt_patch_near(m.lo, m.hi, m.tsize);
		if (m.tramp)
			rt_patch_own(info->dlpi_addr, m.tramp, m.tsize);
		if (!m.tramp)
			for (size_t i = 0; i < m.nfns; i++)
				if (!m.fns[i].why)
					m.fns[i].why = "far";
	}
	if (m.tramp) {
		uint64_t entry = (uint64_t)(uintptr_t)rt_patch_entry_tramp;
		memcpy(m.tramp, &entry, 8);
		memset(m.tramp + 8, 0xcc, m.tsize - 8);
		m.tused = 16;
	}
	/* First every trampoline (the code is not changed yet), then the
	 * jumps to them, one page's write permission at a time. */
	struct rt_cs_site {
		uint64_t at;
		size_t moved;
		uint8_t *tramp;
		struct rt_cs_fn *fn;
	} *sites = rt_arena_alloc(&rt_cs_heap, (ncand + 1) * sizeof(*sites));
	size_t nsites = 0;
	for (size_t i = 0; m.tramp && sites && i < m.nfns; i++) {
		struct rt_cs_fn *fn = &m.fns[i];
		if (fn->why)
			continue;
		uint64_t at = rt_cs_first(fn);
		/* the next function's start bounds the moved bytes */
		uint64_t next = i + 1 < m.nfns ? m.fns[i + 1].addr : UINT64_MAX;
		size_t moved = 0;
		uint8_t *t = m.tramp + m.tused;
		size_t len = rt_cs_build(&m, fn, at, t, &moved);
		if (!len)
			continue;
		if (at + moved > next) {
			fn->why = "short";
			continue;
		}
		if (rt_cs_target_inside(&m, at, at + moved)) {
			fn->why = "jump";
			continue;
		}
		m.tused += (len + 7) & ~(size_t)7;
		sites[nsites].at = at;
		sites[nsites].moved = moved;
		sites[nsites].tramp = t + 8; /* the code after the function's address */
		sites[nsites].fn = fn;
		nsites++;
	}
	if (m.tramp) {
		/* refused functions' leftovers stay int3, never reached */
		mprotect(m.tramp, m.tsize, PROT_READ | PROT_EXEC);
	}
	size_t npatched = 0;
	uintptr_t open_lo = 0, open_hi = 0; /* pages made writable */
	for (size_t s = 0; s < nsites; s++) {
		uintptr_t pg = sites[s].at & ~(page - 1);
		uintptr_t end = (sites[s].at + sites[s].moved + page - 1) & ~(page - 1);
		if (pg < open_lo || end > open_hi) {
			if (open_hi)
				mprotect((void *)open_lo, open_hi - open_lo, PROT_READ | PROT_EXEC);
			/* a run of pages at once: the sites are in address order */
			open_lo = pg;
			open_hi = end + 64 * page;
			uintptr_t seg = rt_cs_segment_end(&m, sites[s].at); /* never past it */
			seg = (seg + page - 1) & ~(page - 1);
			if (open_hi > seg)
				open_hi = end > seg ? end : seg;
			if (mprotect((void *)open_lo, open_hi - open_lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0 &&
			    mprotect((void *)open_lo, open_hi - open_lo, PROT_READ | PROT_WRITE) < 0) {
				open_lo = open_hi = 0;
				sites[s].fn->why = "write";
				continue;
			}
		}
		uint8_t jmp[16];
		memset(jmp, 0xcc, sizeof(jmp));
		jmp[0] = 0xe9;
		rt_cs_put32(jmp + 1, (int64_t)((uintptr_t)sites[s].tramp - (sites[s].at + 5)));
		memcpy((void *)(uintptr_t)sites[s].at, jmp, sites[s].moved);
		npatched++;
	}
	if (open_hi)
		mprotect((void *)open_lo, open_hi - open_lo, PROT_READ | PROT_EXEC);
	rt_cs_report(path, &m, npatched, m.nfns, NULL);
	rt_cs.free_insn(m.insn, 1);
out:
	rt_cs.close(&m.cs);
	rt_arena_reset(&rt_cs_heap);
}

int rt_patch_cs_available(void)
{
	return 1;
}

int rt_patch_cs_loaded(void)
{
	return rt_cs.ok;
}

#else /* built without Capstone */

void rt_patch_cs_module(const struct dl_phdr_info *info, const uint8_t *file, size_t fsz, const char *path)
{
	(void)info;
	(void)file;
	(void)fsz;
	char buf[4200];
	int n = snprintf(buf, sizeof(buf), "module\t%s\t0\t0\n*\tnocapstone\n", path);
	static unsigned seq;
	char suffix[32];
	snprintf(suffix, sizeof(suffix), ".patch.%u", __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	rt_write_file(suffix, buf, (size_t)n);
}

int rt_patch_cs_available(void)
{
	return 0;
}

int rt_patch_cs_loaded(void)
{
	return 0;
}

#endif
