/*
 * rt_plt_got.c - which GOT entries of which modules the library-call probes
 * rewrite, and to what (rt_plt.c says what a rewritten call then does).
 *
 * The GOT entries of the modules built with -finstrument-functions are
 * rewritten once, at start-up and after each dlopen, to point to a
 * per-entry stub (`mov $slot, %r11d; jmp *rt_plt_entry`).  Only entries
 * that lead into modules NOT built with -finstrument-functions are
 * rewritten: an instrumented library has probes of its own (doc/numbers.md).
 *
 * Which entries: every R_X86_64_JUMP_SLOT (calls through the PLT), and the
 * R_X86_64_GLOB_DAT entries of functions that the module's code uses only
 * to call or jump through (-fno-plt: `call *foo@GOTPCREL(%rip)`).  A
 * GLOB_DAT entry also serves to take a function's address; rewriting it
 * would change &foo, so an entry that any instruction reads other than as
 * a call or jump target is left alone (rt_plt_mark_non_calls).  Calls of
 * such a function usually go through a stub of the linker's .plt.got
 * section (`jmp *foo@GOT(%rip)`: GNU ld's way for a function whose address
 * is also taken): that jmp is rewritten instead, to a `jmp rel32` to the
 * function's probe stub, and &foo stays what it was.  A call elsewhere
 * through such an entry (-fno-plt code that also takes &foo, LLVM's
 * `mov foo@GOTPCREL(%rip), %reg; call *%reg`) is not probed: the recorder
 * names the function (rt_plt_note_unprobed).
 *
 * Binding: the program's own binding is kept (no LD_BIND_NOW).  An entry
 * still lazy, i.e. pointing back into its module's PLT, is bound here the
 * way the dynamic linker would (global scope, then the module's own scope,
 * with the symbol's version); a symbol that cannot be found now stays lazy
 * and unprobed, so a program that relies on lazy binding to never need it
 * behaves as it always did.
 *
 * A module loaded after a dlclose at the address of one already handled
 * is told apart by its GOT (the stub written there is gone) and handled.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt_elf.h"
#include "rt_int.h"
#include "rt_plt.h"
#include "rt_select.h"
#include "rt_patch.h"

#define RT_PLT_STUB 32

struct rt_plt_slot *rt_plt_slots;
uint32_t rt_plt_nslots;
static pthread_mutex_t rt_plt_lock = PTHREAD_MUTEX_INITIALIZER;
/* The modules already handled: load base, and one GOT entry with the stub
 * written there, by which a module loaded at the same base after a
 * dlclose (whose GOT is new) is told from the one handled. */
struct rt_plt_done {
	uintptr_t base;
	uint64_t *got;
	uint64_t stub;
};
static struct rt_plt_done rt_plt_done[1024];
static unsigned rt_plt_ndone;
/* text for the recorder, grown in pages of our own (the runtime never calls
 * the program's malloc) */
struct rt_plt_text {
	char *p;
	size_t len, cap;
};
static struct rt_plt_text rt_plt_names;    /* "address name" lines of the hooked functions */
static struct rt_plt_text rt_plt_unprobed; /* "module<TAB>name" lines of those left alone */

/*
 * The function address a library call is recorded with: where it lands,
 * unless another name the program calls lands there too.  glibc's memcpy
 * and memmove are one function once their IFUNCs chose (the program's
 * memmove calls were all reported as memcpy); the second name gets the
 * address after, the next one the one after that (inside the function:
 * its module is right and no other function starts there), written in the
 * .plt file with its name.  Keyed by the landing address and a hash of the
 * name, in pages of our own; under rt_plt_lock.
 */
#define RT_PLT_FN_SLOTS (1u << 16) /* a power of 2 */
#define RT_PLT_FN_ALIASES 8        /* names at one address told apart */
static struct rt_plt_fn {
	uint64_t target, name_hash, fn;
} *rt_plt_fns;
static uint32_t rt_plt_nfns;

static struct rt_plt_fn *rt_plt_fn_slot(uint64_t target, uint64_t name_hash)
{
	uint32_t i = (uint32_t)(((target ^ name_hash) * 0x9E3779B97F4A7C15ull) >> 40) & (RT_PLT_FN_SLOTS - 1);
	for (uint32_t n = 0; n < RT_PLT_FN_SLOTS; n++, i = (i + 1) & (RT_PLT_FN_SLOTS - 1))
		if (!rt_plt_fns[i].target || (rt_plt_fns[i].target == target && rt_plt_fns[i].name_hash == name_hash))
			return &rt_plt_fns[i];
	return NULL;
}

/* The addresses in use, landing addresses and those given to second
 * names: the set a new name's address must not be in. */
static uint64_t *rt_plt_used;

static uint64_t *rt_plt_used_slot(uint64_t a)
{
	uint32_t i = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 40) & (RT_PLT_FN_SLOTS - 1);
	for (uint32_t n = 0; n < RT_PLT_FN_SLOTS; n++, i = (i + 1) & (RT_PLT_FN_SLOTS - 1))
		if (!rt_plt_used[i] || rt_plt_used[i] == a)
			return &rt_plt_used[i];
	return NULL;
}

static int rt_plt_fn_taken(uint64_t a)
{
	uint64_t *u = rt_plt_used_slot(a);
	return u && *u == a;
}

static void rt_plt_fn_take(uint64_t a)
{
	uint64_t *u = rt_plt_used_slot(a);
	if (u)
		*u = a;
}

static uint64_t rt_plt_fn_of(uint64_t target, const char *name)
{
	if (!rt_plt_fns) {
		size_t size = RT_PLT_FN_SLOTS * (sizeof(*rt_plt_fns) + sizeof(*rt_plt_used));
		void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return target;
		rt_plt_fns = m;
		rt_plt_used = (uint64_t *)(rt_plt_fns + RT_PLT_FN_SLOTS);
	}
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const char *c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	h |= 1;
	struct rt_plt_fn *e = rt_plt_fn_slot(target, h);
	if (!e || rt_plt_nfns >= RT_PLT_FN_SLOTS / 2)
		return target;
	if (e->target)
		return e->fn;
	/* the first name at target keeps it; later ones the next free address */
	uint64_t fn = target;
	for (uint32_t k = 0; k < RT_PLT_FN_ALIASES && rt_plt_fn_taken(fn); k++)
		fn = target + k + 1;
	if (rt_plt_fn_taken(fn))
		fn = target;
	*e = (struct rt_plt_fn){target, h, fn};
	rt_plt_fn_take(target);
	rt_plt_fn_take(fn);
	rt_plt_nfns++;
	return fn;
}

/* ------------------------------------------------------------------------
 * Which functions need care
 * --------------------------------------------------------------------- */

static int rt_plt_in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}
#define RT_IN(name, list) rt_plt_in_list(name, list, sizeof(list) / sizeof(list[0]))

/* -1: never hooked; else an enum rt_plt_kind. */
int rt_plt_kind_of(const char *name)
{
	/* the runtime's own hooks, the start of the program, the TLS helper,
	 * the unwinder's internals and clone (whose child would share this
	 * thread's recording) are not calls of the program's to count */
	static const char *const never[] = {
		"__cyg_profile_func_enter", "__cyg_profile_func_exit", "__fentry__", "mcount", "_mcount",
		"__libc_start_main", "__tls_get_addr", "__gxx_personality_v0", "clone", "__clone",
	};
	static const char *const noreturn[] = {
		"exit", "_exit", "_Exit", "quick_exit", "abort", "__stack_chk_fail",
		"__assert_fail", "__assert_perror_fail", "__fortify_fail", "__chk_fail", "__cxa_throw",
		"__cxa_rethrow", "__cxa_call_unexpected", "__cxa_bad_cast", "__cxa_bad_typeid",
		"__cxa_throw_bad_array_new_length", "__cxa_pure_virtual", "__cxa_deleted_virtual",
		"_Unwind_Resume", /* a cleanup block's, unwinding on to the next handler */
	};
	static const char *const jump[] = {
		"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
	};
	/* (__cxa_begin_catch: the catch block's first call, after the unwinder
	 * has put the real return addresses back; the runtime's interposer
	 * then re-arms them: counted, as a call of no length) */
	static const char *const once[] = {
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx", "getcontext",
		"swapcontext", "dlsym", "dlvsym", "dlmopen", "dlopen", "__cxa_begin_catch",
	};
	if (RT_IN(name, never) || (strncmp(name, "_Unwind_", 8) == 0 && strcmp(name, "_Unwind_Resume") != 0))
		return -1;
	if (RT_IN(name, noreturn) || strstr(name, "__throw_") != NULL ||
	    strstr(name, "rethrow_exception") != NULL)
		return RT_PLT_NORETURN;
	if (RT_IN(name, jump))
		return RT_PLT_JUMP;
	if (strcmp(name, "setcontext") == 0)
		return RT_PLT_SETCONTEXT;
	if (RT_IN(name, once))
		return RT_PLT_ONCE;
	if (strcmp(name, "vfork") == 0 || strcmp(name, "__vfork") == 0)
		return RT_PLT_VFORK;
	if (strcmp(name, "pthread_exit") == 0)
		return RT_PLT_THREAD_EXIT;
	return RT_PLT_CALL;
}

static void rt_plt_text_add(struct rt_plt_text *t, const char *line, size_t n)
{
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16384;
		while (cap < t->len + n)
			cap *= 2;
		char *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		if (t->p) {
			memcpy(p, t->p, t->len);
			munmap(t->p, t->cap);
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, line, n);
	t->len += n;
}

static void rt_plt_note_name(uint64_t addr, const char *name)
{
	char line[600];
	int n = snprintf(line, sizeof(line), "%llx %s\n", (unsigned long long)addr, name);
	if (n > 0 && (size_t)n < sizeof(line))
		rt_plt_text_add(&rt_plt_names, line, (size_t)n);
}

/*
 * A library function the module calls through its GOT entry that is left
 * alone: the code also reads the entry as data (mov GOT(%rip), %reg; call
 * *%reg, LLVM's way with hot calls, or the function's address taken), and
 * a stub's address there could change what the program computes (pointer
 * comparisons).  Its calls are not recorded: the recorder says which.
 */
static void rt_plt_note_unprobed(const char *module, const char *name)
{
	/* the start-up code's weak references (crt's __do_global_dtors_aux
	 * tests __cxa_finalize's entry): in every program, no call of its own */
	static const char *const crt[] = {"__cxa_finalize", "__gmon_start__", "_ITM_deregisterTMCloneTable",
					  "_ITM_registerTMCloneTable"};
	for (size_t i = 0; i < sizeof(crt) / sizeof(crt[0]); i++)
		if (strcmp(name, crt[i]) == 0)
			return;
	const char *base = strrchr(module, '/');
	base = base ? base + 1 : module;
	char line[600];
	int n = snprintf(line, sizeof(line), "%s\t%s\n", base, name); /* ("": the program) */
	if (n > 0 && (size_t)n < sizeof(line))
		rt_plt_text_add(&rt_plt_unprobed, line, (size_t)n);
}

/* Write one stub: mov $idx, %r11d; jmp *rt_plt_entry */
static void rt_plt_write_stub(uint8_t *p, uint32_t idx)
{
	uint64_t entry = (uint64_t)(uintptr_t)rt_plt_entry;
	memset(p, 0xcc, RT_PLT_STUB);
	p[0] = 0x41;
	p[1] = 0xbb;
	memcpy(p + 2, &idx, 4);
	p[6] = 0xff;
	p[7] = 0x25;
	memset(p + 8, 0, 4);
	memcpy(p + 12, &entry, 8);
}

/* ------------------------------------------------------------------------
 * Reading a module's dynamic section
 * --------------------------------------------------------------------- */

struct rt_dyn {
	uintptr_t base;
	const ElfW(Rela) *jmprel, *rela;
	size_t njmprel, nrela;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	size_t nverneed;
};

/* glibc relocates some d_ptr entries in place and not others (DT_VERNEED):
 * an address below the load base is still a link-time one. */
static const void *rt_plt_dptr(uintptr_t base, ElfW(Addr) p)
{
	return (const void *)(p < base ? base + p : p);
}

static int rt_plt_read_dynamic(const struct dl_phdr_info *info, struct rt_dyn *d)
{
	memset(d, 0, sizeof(*d));
	d->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		size_t relsz = 0, relasz = 0;
		int rela = 1;
		for (; dyn->d_tag != DT_NULL; dyn++) {
			switch (dyn->d_tag) {
			case DT_JMPREL: d->jmprel = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_PLTRELSZ: relsz = dyn->d_un.d_val; break;
			case DT_RELA: d->rela = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_RELASZ: relasz = dyn->d_un.d_val; break;
			case DT_SYMTAB: d->symtab = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_STRTAB: d->strtab = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_PLTREL: rela = dyn->d_un.d_val == DT_RELA; break;
			case DT_VERSYM: d->versym = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_VERNEED: d->verneed = rt_plt_dptr(d->base, dyn->d_un.d_ptr); break;
			case DT_VERNEEDNUM: d->nverneed = dyn->d_un.d_val; break;
			}
		}
		if (!rela || !d->symtab || !d->strtab)
			return -1;
		d->njmprel = d->jmprel ? relsz / sizeof(ElfW(Rela)) : 0;
		d->nrela = d->rela ? relasz / sizeof(ElfW(Rela)) : 0;
		return 0;
	}
	return -1;
}

/* The version a module asks of dynamic symbol i ("GLIBC_2.14"), or NULL. */
static const char *rt_plt_version(const struct rt_dyn *d, size_t i)
{
	if (!d->versym || !d->verneed)
		return NULL;
	ElfW(Half) want = d->versym[i] & 0x7fff;
	if (want < 2)
		return NULL;
	const ElfW(Verneed) *vn = d->verneed;
	for (size_t n = 0; n < d->nverneed; n++) {
		const ElfW(Vernaux) *va = (const void *)((const char *)vn + vn->vn_aux);
		for (unsigned a = 0; a < vn->vn_cnt; a++) {
			if (va->vna_other == want)
				return d->strtab + va->vna_name;
			va = (const void *)((const char *)va + va->vna_next);
		}
		if (!vn->vn_next)
			break;
		vn = (const void *)((const char *)vn + vn->vn_next);
	}
	return NULL;
}

static int rt_plt_module_instrumented(const struct rt_dyn *d)
{
	const ElfW(Rela) *lists[2] = {d->jmprel, d->rela};
	size_t counts[2] = {d->njmprel, d->nrela};
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; i < counts[l]; i++) {
			uint32_t s = (uint32_t)ELF64_R_SYM(lists[l][i].r_info);
			if (s && (strcmp(d->strtab + d->symtab[s].st_name, "__cyg_profile_func_enter") == 0 ||
				  strcmp(d->strtab + d->symtab[s].st_name, "__fentry__") == 0))
				return 1;
		}
	return 0;
}

/* Instrumented, or patched at load (rt_patch.c: the program not built for
 * instrumentation and the libraries it selects): its calls into libraries
 * are probed. */
static int rt_plt_probes_calls(const struct dl_phdr_info *info, const struct rt_dyn *d)
{
	return rt_plt_module_instrumented(d) || (rt_patch_wanted() && rt_patch_module_selected(info->dlpi_name));
}

/* ------------------------------------------------------------------------
 * The modules of the process: which are instrumented
 * --------------------------------------------------------------------- */

struct rt_plt_mod {
	uintptr_t lo, hi; /* the module's mapped range */
	uintptr_t xlo[4], xhi[4]; /* its executable segments */
	int nx;
	int instrumented;
};
static struct rt_plt_mod rt_plt_mods[1024];
static unsigned rt_plt_nmods;

static int rt_plt_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (rt_plt_nmods >= sizeof(rt_plt_mods) / sizeof(rt_plt_mods[0]))
		return 0;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	struct rt_plt_mod *m = &rt_plt_mods[rt_plt_nmods];
	m->nx = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			if (a < lo)
				lo = a;
			if (a + info->dlpi_phdr[i].p_memsz > hi)
				hi = a + info->dlpi_phdr[i].p_memsz;
			if ((info->dlpi_phdr[i].p_flags & PF_X) && m->nx < 4) {
				m->xlo[m->nx] = a;
				m->xhi[m->nx++] = a + info->dlpi_phdr[i].p_memsz;
			}
		}
	if (hi <= lo)
		return 0;
	struct rt_dyn d;
	rt_plt_nmods++;
	m->lo = lo;
	m->hi = hi;
	/* this runtime has probes in its calibration yardstick (rt_calib.c),
	 * but its interposers are library functions to probe */
	Dl_info self;
	int is_self = dladdr((void *)rt_plt_collect, &self) && (uintptr_t)self.dli_fbase == info->dlpi_addr;
	m->instrumented = !is_self && rt_plt_read_dynamic(info, &d) == 0 && rt_plt_probes_calls(info, &d);
	return 0;
}

static const struct rt_plt_mod *rt_plt_mod_of(uint64_t addr)
{
	for (unsigned i = 0; i < rt_plt_nmods; i++)
		if (addr >= rt_plt_mods[i].lo && addr < rt_plt_mods[i].hi)
			return &rt_plt_mods[i];
	return NULL;
}

/* Whether addr lies in a module's code: a symbol of no type (a Python
 * extension's PyExc_ValueError, linked without the library defining it)
 * is a function only if it does. */
static int rt_plt_is_code(uint64_t addr)
{
	const struct rt_plt_mod *m = rt_plt_mod_of(addr);
	for (int i = 0; m && i < m->nx; i++)
		if (addr >= m->xlo[i] && addr < m->xhi[i])
			return 1;
	return 0;
}

/* ------------------------------------------------------------------------
 * Resolving a lazy entry as the dynamic linker would
 * --------------------------------------------------------------------- */

/*
 * A handle of the module loaded at base, for a lookup in that module's own
 * scope (dlclose it after).  Taken with dlopen(RTLD_NOLOAD), not the
 * link_map itself: glibc's dlsym searches a handle's own list, which only a
 * dlopen builds, and a module loaded at start-up or as another's
 * dependency has none (a lookup through its link_map crashed: libstdc++'s
 * weak _ITM_addUserCommitAction, found nowhere, with libstdc++ patched).
 * The real dlopen and dlclose: this runtime's own would take its locks.
 */
static void *rt_plt_handle_of(uintptr_t base)
{
	static void *(*real_open)(const char *, int);
	if (!real_open)
		real_open = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	for (struct link_map *l = _r_debug.r_map; l; l = l->l_next)
		if (l->l_addr == base)
			return real_open && l->l_name && *l->l_name ? real_open(l->l_name, RTLD_LAZY | RTLD_NOLOAD)
								   : NULL;
	return NULL;
}

static void rt_plt_handle_done(void *h)
{
	static int (*real_close)(void *);
	if (!real_close)
		real_close = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (real_close)
		real_close(h);
}

/*
 * Look a symbol up as the dynamic linker binds it: the first module of the
 * global scope that defines it (an unversioned definition, as an
 * interposer's, satisfies any version), with the version asked for when
 * that module has several; then the module's own scope (RTLD_LOCAL).
 */
static uint64_t rt_plt_lookup(uintptr_t base, const char *name, const char *version)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p && version) {
		void *v = dlvsym(RTLD_DEFAULT, name, version);
		if (v && rt_plt_mod_of((uint64_t)(uintptr_t)v) == rt_plt_mod_of((uint64_t)(uintptr_t)p))
			p = v;
	}
	if (!p) {
		void *h = rt_plt_handle_of(base);
		if (h) {
			p = version ? dlvsym(h, name, version) : dlsym(h, name);
			rt_plt_handle_done(h);
		}
	}
	return (uint64_t)(uintptr_t)p;
}

/* ------------------------------------------------------------------------
 * GLOB_DAT entries used only as call or jump targets
 * --------------------------------------------------------------------- */

/* Shell sort: libc's qsort may call malloc, perhaps the program's own. */
static void rt_plt_sort_u64(uint64_t *a, size_t n)
{
	for (size_t gap = n / 2; gap > 0; gap /= 2)
		for (size_t i = gap; i < n; i++) {
			uint64_t v = a[i];
			size_t j = i;
			for (; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
}

/* The low bits of a GOT entry's address in the scan's list (entries are
 * 8-byte aligned): what refers to it besides the .plt.got stub's jmp. */
#define RT_PLT_READ 1ull    /* an instruction reads it otherwise than to call */
#define RT_PLT_CALLED 2ull  /* a call or jmp through it outside .plt.got */
#define RT_PLT_BITS 7ull

/* The slot at got in the sorted list, whatever its bits, or NULL. */
static uint64_t *rt_plt_glob_find(uint64_t *slots, size_t n, uint64_t got)
{
	size_t a = 0, z = n;
	while (a < z) {
		size_t mid = (a + z) / 2;
		if ((slots[mid] & ~RT_PLT_BITS) < got)
			a = mid + 1;
		else
			z = mid;
	}
	return a < n && (slots[a] & ~RT_PLT_BITS) == got ? &slots[a] : NULL;
}

/* A module's .plt.got section: [lo, hi), entries of ent bytes; lo 0 if
 * none. */
struct rt_plt_pltgot {
	uintptr_t lo, hi;
	size_t ent;
};

/*
 * slots[0..n) (sorted GOT addresses) get RT_PLT_READ when some instruction
 * in the module's executable segments refers to them other than as
 * `call *slot(%rip)` (ff 15) or `jmp *slot(%rip)` (ff 25), and
 * RT_PLT_CALLED for such a call or jmp outside the module's .plt.got.  The
 * scan looks at every 4-byte window as a RIP-relative displacement, with
 * 0, 1, 2 or 4 bytes of immediate after it: byte patterns that only look
 * like such a reference make it refuse a slot, or count a call elsewhere,
 * never accept one.
 */
static void rt_plt_mark_non_calls(const struct dl_phdr_info *info, uint64_t *slots, size_t n,
				  const struct rt_plt_pltgot *pg)
{
	if (!n)
		return;
	uint64_t lo = slots[0] & ~RT_PLT_BITS, hi = (slots[n - 1] & ~RT_PLT_BITS) + 8;
	static const int imm[] = {0, 1, 2, 4};
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_filesz < 8)
			continue;
		const uint8_t *b = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t len = ph->p_filesz;
		for (size_t p = 0; p + 4 <= len; p++) {
			int32_t disp;
			memcpy(&disp, b + p, 4);
			uint64_t t0 = (uint64_t)(uintptr_t)(b + p + 4) + (uint64_t)(int64_t)disp;
			if (t0 + 4 < lo || t0 >= hi) /* the common case: one test per byte */
				continue;
			for (int k = 0; k < 4; k++) {
				uint64_t tgt = (uint64_t)(uintptr_t)(b + p + 4 + imm[k]) + (uint64_t)(int64_t)disp;
				if (tgt < lo || tgt >= hi)
					continue;
				uint64_t *slot = rt_plt_glob_find(slots, n, tgt);
				if (!slot)
					continue;
				int is_call = k == 0 && p >= 2 && b[p - 2] == 0xff &&
					      (b[p - 1] == 0x15 || b[p - 1] == 0x25);
				uintptr_t at = (uintptr_t)(b + p - 2);
				if (!is_call)
					*slot |= RT_PLT_READ;
				else if (at < pg->lo || at >= pg->hi)
					*slot |= RT_PLT_CALLED;
			}
		}
	}
}

/*
 * rt_plt_mark_non_calls, or what an earlier process of the recording found
 * for the same code and the same slots (rt_kept.c): the scan reads every
 * byte of the module's code, about 5 ms of each start of bash with libc.
 * Kept: one word per slot, its bits.
 */
static void rt_plt_mark_non_calls_kept(const struct dl_phdr_info *info, uint64_t *slots, size_t n,
				       const struct rt_plt_pltgot *pg)
{
	if (!n)
		return;
	uint64_t h = rt_kept_mix(0x452821e638d01377ull, n);
	h = rt_kept_mix(h, pg->lo ? pg->lo - info->dlpi_addr : 0);
	h = rt_kept_mix(h, pg->hi ? pg->hi - info->dlpi_addr : 0);
	for (size_t i = 0; i < n; i++)
		h = rt_kept_mix(h, slots[i] - info->dlpi_addr);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_filesz < 8)
			continue;
		h = rt_kept_mix(h, ph->p_vaddr);
		h = rt_kept_hash(h, (const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_filesz);
	}
	size_t len;
	uint64_t *kept = rt_kept_read("got", h, &len);
	if (kept && len == n * 8) {
		for (size_t i = 0; i < n; i++)
			slots[i] |= kept[i] & RT_PLT_BITS;
		rt_kept_free(kept, len);
		return;
	}
	rt_kept_free(kept, len);
	rt_plt_mark_non_calls(info, slots, n, pg);
	uint64_t *bits = mmap(NULL, n * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bits == MAP_FAILED)
		return;
	for (size_t i = 0; i < n; i++)
		bits[i] = slots[i] & RT_PLT_BITS;
	rt_kept_write("got", h, bits, n * 8);
	munmap(bits, n * 8);
}

/* The module's .plt.got section, from its file's section headers, if it
 * lies in an executable segment of the module in memory. */
static void rt_plt_find_pltgot(const struct dl_phdr_info *info, struct rt_plt_pltgot *pg)
{
	memset(pg, 0, sizeof(*pg));
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	size_t fsz;
	const uint8_t *f = rt_map_elf(path, &fsz);
	if (!f)
		return;
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	const ElfW(Shdr) *strs = &sh[eh->e_shstrndx];
	/* the file of the module in memory (not the dynamic linker's, which
	 * /proc/self/exe is for `ld-linux-x86-64.so.2 ./app`): the same
	 * program headers */
	int same = eh->e_phnum == info->dlpi_phnum && eh->e_phentsize == sizeof(ElfW(Phdr)) &&
		   eh->e_phoff <= fsz && (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) <= fsz - eh->e_phoff;
	for (int i = 0; same && i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const void *)(f + eh->e_phoff + (size_t)i * sizeof(ElfW(Phdr)));
		same = ph->p_type == info->dlpi_phdr[i].p_type && ph->p_vaddr == info->dlpi_phdr[i].p_vaddr &&
		       ph->p_memsz == info->dlpi_phdr[i].p_memsz;
	}
	for (unsigned i = 0; same && i < eh->e_shnum && strs->sh_offset <= fsz && strs->sh_size <= fsz - strs->sh_offset;
	     i++) {
		if (sh[i].sh_type != SHT_PROGBITS || !(sh[i].sh_flags & SHF_EXECINSTR) ||
		    sh[i].sh_name >= strs->sh_size || strs->sh_size - sh[i].sh_name < 9 ||
		    memcmp(f + strs->sh_offset + sh[i].sh_name, ".plt.got", 9) != 0)
			continue;
		uintptr_t lo = info->dlpi_addr + sh[i].sh_addr, hi = lo + sh[i].sh_size;
		const ElfW(Phdr) *ph = rt_patch_load_segment(info, lo, 1);
		if ((sh[i].sh_entsize == 8 || sh[i].sh_entsize == 16) && sh[i].sh_size && ph &&
		    hi <= info->dlpi_addr + ph->p_vaddr + ph->p_memsz) {
			pg->lo = lo;
			pg->hi = hi;
			pg->ent = sh[i].sh_entsize;
		}
		break;
	}
	rt_unmap_elf(f, fsz);
}

/*
 * The GOT entry that the .plt.got entry at e (ent bytes) jumps through, or
 * 0 if it is none of GNU ld's forms: `jmp *got(%rip)`, after an endbr64
 * (IBT) and with a bnd prefix (MPX) or not.  *jmp, *len: that instruction.
 */
static uint64_t rt_plt_pltgot_slot(const uint8_t *e, size_t ent, uint8_t **jmp, int *len)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t at = ent == 16 && memcmp(e, endbr64, 4) == 0 ? 4 : 0;
	size_t bnd = e[at] == 0xf2;
	if (at + bnd + 6 > ent || e[at + bnd] != 0xff || e[at + bnd + 1] != 0x25)
		return 0;
	int32_t disp;
	memcpy(&disp, e + at + bnd + 2, 4);
	*jmp = (uint8_t *)(uintptr_t)(e + at);
	*len = (int)bnd + 6;
	return (uint64_t)(uintptr_t)(e + at + bnd + 6) + (uint64_t)(int64_t)disp;
}

/* ------------------------------------------------------------------------
 * Rewriting a module's GOT
 * --------------------------------------------------------------------- */

static const ElfW(Phdr) *rt_plt_relro(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
			return &info->dlpi_phdr[i];
	return NULL;
}

struct rt_plt_hook {
	uint64_t *first_got; /* the first entry rewritten, and its stub (or */
	uint64_t first_stub; /* the first .plt.got jmp, and its new 8 bytes) */
	uint8_t *stubs;
	size_t nstubs, cap;
	uintptr_t ro_lo, ro_hi;
	size_t page;
	struct rt_plt_pltgot pg;
	uint8_t *near;       /* the stubs .plt.got jmps reach: within a rel32 */
	size_t nnear, near_cap;
};

/* Make [p, p + n) of the program's code writable (read-write-execute if
 * allowed: another thread may run code of the same page), 0 if not. */
static int rt_plt_code_open(uint8_t *p, size_t n, size_t page)
{
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
	return mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) == 0 ||
	       mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) == 0;
}

static void rt_plt_code_close(uint8_t *p, size_t n, size_t page)
{
	uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n + page - 1) & ~(page - 1);
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
}

/*
 * Probe the calls of relocation r's function, if they are calls to probe:
 * point its GOT entry at a new stub (site NULL), or rewrite the .plt.got
 * jmp at site (len bytes) that goes through that entry into a jmp to the
 * stub.  1 when done.
 */
static int rt_plt_hook_entry(const struct dl_phdr_info *info, const struct rt_dyn *d, const ElfW(Rela) *r,
			     struct rt_plt_hook *h, uint8_t *site, int len)
{
	static int self_known;
	static Dl_info self;
	if (!self_known)
		self_known = dladdr((void *)rt_plt_hook_entry, &self) ? 1 : -1;
	uint32_t si = (uint32_t)ELF64_R_SYM(r->r_info);
	const ElfW(Sym) *sym = &d->symtab[si];
	const char *nm = d->strtab + sym->st_name;
	if (!si || !*nm || sym->st_shndx != SHN_UNDEF || rt_plt_nslots >= RT_PLT_MAX_SLOTS ||
	    (site ? h->nnear >= h->near_cap : h->nstubs >= h->cap))
		return 0;
	int kind = rt_plt_kind_of(nm);
	/* without library-call probes vfork is still taken over: its child's
	 * events must not land in the parent's recording */
	if (kind < 0 || (!rt_g.plt && kind != RT_PLT_VFORK))
		return 0;
	uint64_t *got = (uint64_t *)(info->dlpi_addr + r->r_offset);
	uint64_t target = *got;
	const struct rt_plt_mod *own = rt_plt_mod_of((uint64_t)(uintptr_t)got);
	const struct rt_plt_mod *tm = rt_plt_mod_of(target);
	if (!own)
		return 0;
	if (!tm || tm == own) {
		/* still lazy (the module's own PLT), or never bound: resolve it now,
		 * as the dynamic linker would; if the symbol is not there yet,
		 * the entry stays as the program had it */
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT)
			return 0;
		target = rt_plt_lookup(info->dlpi_addr, nm, rt_plt_version(d, si));
		tm = target ? rt_plt_mod_of(target) : NULL;
		if (!tm || tm == own)
			return 0;
	}
	if (tm->instrumented) /* it has probes of its own */
		return 0;
	uint64_t lands = target;
	int ours = self_known > 0 && tm->lo == (uintptr_t)self.dli_fbase;
	if (ours) {
		/* one of rt.c's interposers (dlopen, ...): it calls the real one
		 * itself; the call is recorded as the real one's */
		void *real = dlsym(RTLD_NEXT, nm);
		if (real)
			lands = (uint64_t)(uintptr_t)real;
		if (strcmp(nm, "dlopen") == 0)
			kind = RT_PLT_CALL; /* the real dlopen sees rt.c as its caller anyway */
	}
	/* (vfork's is also where a call goes when it cannot be followed:
	 * the real function, never an address given to a second name) */
	uint64_t fn = kind == RT_PLT_VFORK ? lands : rt_plt_fn_of(lands, nm);
	rt_sel_lib_name(fn, lands, nm);
	uintptr_t pg = (uintptr_t)got & ~(h->page - 1);
	uint8_t *stub;
	if (site) {
		if (!h->near) {
			size_t sz = (h->near_cap * RT_PLT_STUB + h->page - 1) & ~(h->page - 1);
			h->near = rt_patch_near(h->pg.lo, h->pg.hi, sz);
			if (!h->near) {
				h->near_cap = 0;
				return 0;
			}
		}
		stub = h->near + h->nnear * RT_PLT_STUB;
		int64_t rel = (int64_t)((uintptr_t)stub - (uintptr_t)(site + 5));
		if (rel != (int32_t)rel || !rt_plt_code_open(site, (size_t)len, h->page))
			return 0;
	} else {
		if (mprotect((void *)pg, h->page, PROT_READ | PROT_WRITE) < 0)
			return 0;
		stub = h->stubs + h->nstubs * RT_PLT_STUB;
	}
	uint32_t idx = rt_plt_nslots;
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	s->target = kind == RT_PLT_VFORK ? (uint64_t)(uintptr_t)rt_plt_vfork : target;
	s->fn = fn;
	s->kind = (uint32_t)kind;
	s->last = 0;
	rt_plt_write_stub(stub, idx);
	__atomic_store_n(&rt_plt_nslots, idx + 1, __ATOMIC_RELEASE);
	if (site) {
		/* the stub's code is written before the jmp can reach it: the near
		 * block becomes executable once the module is done (rt_plt_module),
		 * and the module's code runs only after that */
		uint8_t jmp[8];
		memset(jmp, 0x90, sizeof(jmp));
		int32_t rel = (int32_t)((uintptr_t)stub - (uintptr_t)(site + 5));
		jmp[0] = 0xe9;
		memcpy(jmp + 1, &rel, 4);
		memcpy(site, jmp, (size_t)len);
		rt_plt_code_close(site, (size_t)len, h->page);
		h->nnear++;
	} else {
		__atomic_store_n(got, (uint64_t)(uintptr_t)stub, __ATOMIC_RELEASE);
		if (pg >= h->ro_lo && pg < h->ro_hi)
			mprotect((void *)pg, h->page, PROT_READ);
		h->nstubs++;
	}
	if (rt_g.plt)
		rt_plt_note_name(fn, nm);
	if (!h->first_got) {
		h->first_got = site ? (uint64_t *)(uintptr_t)site : got;
		if (site)
			memcpy(&h->first_stub, site, 8);
		else
			h->first_stub = (uint64_t)(uintptr_t)stub;
	}
	return 1;
}

static void rt_plt_module(const struct dl_phdr_info *info, struct rt_plt_done *done)
{
	struct rt_dyn d;
	if (rt_plt_read_dynamic(info, &d) < 0 || !rt_plt_probes_calls(info, &d))
		return;
	struct rt_plt_hook h;
	memset(&h, 0, sizeof(h));
	h.page = (size_t)sysconf(_SC_PAGESIZE);
	/* the GLOB_DAT entries of functions, and which of them only calls use */
	size_t nglob = 0;
	for (size_t i = 0; i < d.nrela; i++)
		if (ELF64_R_TYPE(d.rela[i].r_info) == R_X86_64_GLOB_DAT)
			nglob++;
	uint64_t *glob = NULL;
	size_t globsz = (nglob * sizeof(uint64_t) + h.page - 1) & ~(h.page - 1);
	if (nglob) {
		glob = mmap(NULL, globsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (glob == MAP_FAILED) {
			glob = NULL;
			nglob = 0;
		}
	}
	size_t ng = 0;
	for (size_t i = 0; i < d.nrela && glob; i++) {
		const ElfW(Rela) *r = &d.rela[i];
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT)
			continue;
		const ElfW(Sym) *sym = &d.symtab[ELF64_R_SYM(r->r_info)];
		int type = ELF64_ST_TYPE(sym->st_info);
		uint64_t *got = (uint64_t *)(info->dlpi_addr + r->r_offset);
		/* functions that are bound (not a weak one absent) and may be probed */
		if (sym->st_shndx == SHN_UNDEF && *got &&
		    (type == STT_FUNC || type == STT_GNU_IFUNC || (type == STT_NOTYPE && rt_plt_is_code(*got))) &&
		    rt_plt_kind_of(d.strtab + sym->st_name) >= 0)
			glob[ng++] = (uint64_t)(uintptr_t)got;
	}
	rt_plt_sort_u64(glob, ng);
	if (ng)
		rt_plt_find_pltgot(info, &h.pg);
	rt_plt_mark_non_calls_kept(info, glob, ng, &h.pg);
	if (h.pg.lo)
		h.near_cap = (h.pg.hi - h.pg.lo) / h.pg.ent;

	h.cap = d.njmprel + ng;
	if (!h.cap)
		goto out;
	size_t stubsz = (h.cap * RT_PLT_STUB + h.page - 1) & ~(h.page - 1);
	h.stubs = mmap(NULL, stubsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.stubs == MAP_FAILED)
		goto out;
	const ElfW(Phdr) *relro = rt_plt_relro(info);
	h.ro_lo = relro ? (info->dlpi_addr + relro->p_vaddr) & ~(h.page - 1) : 0;
	h.ro_hi = relro ? info->dlpi_addr + relro->p_vaddr + relro->p_memsz : 0;
	for (size_t i = 0; i < d.njmprel; i++)
		if (ELF64_R_TYPE(d.jmprel[i].r_info) == R_X86_64_JUMP_SLOT)
			rt_plt_hook_entry(info, &d, &d.jmprel[i], &h, NULL, 0);
	for (size_t i = 0; i < d.nrela && ng; i++) {
		const ElfW(Rela) *r = &d.rela[i];
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT)
			continue;
		uint64_t at = info->dlpi_addr + r->r_offset;
		const uint64_t *g = rt_plt_glob_find(glob, ng, at);
		if (!g)
			continue; /* not the entry of a function that may be probed */
		if (!(*g & RT_PLT_READ)) { /* only called through: rewritten */
			rt_plt_hook_entry(info, &d, r, &h, NULL, 0);
			continue;
		}
		/* left alone.  Calls through the module's PLT (a JUMP_SLOT of
		 * its own; this entry serves the address taken) are probed
		 * there, those through the .plt.got stub by rewriting its jmp;
		 * any other goes unrecorded */
		int plt = 0;
		for (size_t j = 0; j < d.njmprel && !plt; j++)
			plt = ELF64_R_SYM(d.jmprel[j].r_info) == ELF64_R_SYM(r->r_info);
		if (plt)
			continue;
		int stubbed = 0;
		for (uintptr_t e = h.pg.lo; h.pg.lo && e + h.pg.ent <= h.pg.hi && !stubbed; e += h.pg.ent) {
			uint8_t *jmp = NULL;
			int len = 0;
			if (rt_plt_pltgot_slot((const uint8_t *)e, h.pg.ent, &jmp, &len) == at)
				stubbed = rt_plt_hook_entry(info, &d, r, &h, jmp, len);
		}
		if (rt_g.plt && (!stubbed || (*g & RT_PLT_CALLED)))
			rt_plt_note_unprobed(info->dlpi_name ? info->dlpi_name : "",
					     d.strtab + d.symtab[ELF64_R_SYM(r->r_info)].st_name);
	}
	/* the stubs become executable before the GOT can reach them: the GOT
	 * writes above only happen in this single-threaded set-up or under
	 * dlopen, before the new module's code runs */
	mprotect(h.stubs, stubsz, PROT_READ | PROT_EXEC);
	if (h.near)
		mprotect(h.near, (h.near_cap * RT_PLT_STUB + h.page - 1) & ~(h.page - 1), PROT_READ | PROT_EXEC);
	if (done) {
		done->got = h.first_got;
		done->stub = h.first_stub;
	}
out:
	if (glob)
		munmap(glob, globsz);
}

static int rt_plt_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	struct rt_plt_done *done = NULL;
	for (unsigned i = 0; i < rt_plt_ndone && !done; i++)
		if (rt_plt_done[i].base == info->dlpi_addr)
			done = &rt_plt_done[i];
	if (done) {
		/* handled, unless it is another module at the same base: then
		 * the entry, if still inside a segment, no longer holds our stub */
		if (!done->got)
			return 0;
		int inside = 0;
		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			uintptr_t a = info->dlpi_addr + ph->p_vaddr;
			if (ph->p_type == PT_LOAD && (uintptr_t)done->got >= a &&
			    (uintptr_t)done->got + 8 <= a + ph->p_memsz)
				inside = 1;
		}
		if (inside && *done->got == done->stub)
			return 0;
		done->got = NULL;
	} else if (rt_plt_ndone < sizeof(rt_plt_done) / sizeof(rt_plt_done[0])) {
		done = &rt_plt_done[rt_plt_ndone++];
		done->base = info->dlpi_addr;
		done->got = NULL;
	}
	/* skip the vDSO and this runtime */
	Dl_info self;
	if (dladdr((void *)rt_plt_visit, &self) && (uintptr_t)self.dli_fbase == info->dlpi_addr)
		return 0;
	if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso"))
		return 0;
	rt_plt_module(info, done);
	return 0;
}

void rt_plt_init(void)
{
	if (!rt_plt_thunks_ok())
		return;
	pthread_mutex_lock(&rt_plt_lock);
	if (!rt_plt_slots) {
		void *m = mmap(NULL, RT_PLT_MAX_SLOTS * sizeof(struct rt_plt_slot),
			       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		rt_plt_slots = m == MAP_FAILED ? NULL : m;
	}
	if (rt_plt_slots) {
		rt_plt_nmods = 0;
		rt_patch_wanted(); /* decided before the walk: it walks the modules too */
		dl_iterate_phdr(rt_plt_collect, NULL);
		dl_iterate_phdr(rt_plt_visit, NULL);
		rt_plt_save_names();
	}
	pthread_mutex_unlock(&rt_plt_lock);
}

void rt_plt_after_dlopen(void)
{
	rt_plt_init();
}

void rt_calib_plain(void);

/*
 * A stub of its own through which calls of rt_calib_plain (an empty
 * function) go the way of a probed library call: the yardstick of the
 * library-call probes' cost (rt_calibrate in rt.c).  Made once.
 */
void (*rt_plt_calib_stub(void))(void)
{
	static uint8_t *stub;
	if (stub)
		return (void (*)(void))(void *)stub;
	pthread_mutex_lock(&rt_plt_lock);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (rt_plt_slots && rt_plt_nslots < RT_PLT_MAX_SLOTS) {
		uint8_t *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			uint32_t idx = rt_plt_nslots;
			struct rt_plt_slot *sl = &rt_plt_slots[idx];
			sl->target = sl->fn = (uint64_t)(uintptr_t)rt_calib_plain;
			sl->kind = RT_PLT_CALL;
			sl->last = 0;
			rt_plt_write_stub(m, idx);
			__atomic_store_n(&rt_plt_nslots, idx + 1, __ATOMIC_RELEASE);
			if (mprotect(m, page, PROT_READ | PROT_EXEC) == 0)
				stub = m;
			else
				munmap(m, page);
		}
	}
	pthread_mutex_unlock(&rt_plt_lock);
	return stub ? (void (*)(void))(void *)stub : NULL;
}

/* The hooked functions' names and those left alone, for the recorder (a
 * fork child's new process key too). */
void rt_plt_save_names(void)
{
	if (rt_plt_names.len)
		rt_write_file(".plt", rt_plt_names.p, rt_plt_names.len);
	if (rt_plt_unprobed.len)
		rt_write_file(".unprobed", rt_plt_unprobed.p, rt_plt_unprobed.len);
}

/* In a fork child, which has a key of its own: no lock, one thread. */
void rt_plt_fork_child(void)
{
	pthread_mutex_init(&rt_plt_lock, NULL);
	rt_plt_thunks_after_fork();
	rt_plt_save_names();
}
