/*
 * rt_plt.c - probes around calls into shared libraries.
 *
 * SPEC.md wants "before and after each call" an instrumented function makes,
 * also into libraries that were not instrumented, so that time in read,
 * malloc or usleep shows as those functions of libc.so.6.  Chosen by
 * measurement over rtld-audit (la_pltenter/la_pltexit copy a stack frame per
 * call and disable lazy binding tricks, several times the cost): the GOT
 * entries of the modules built with -finstrument-functions are rewritten
 * once, at start-up and after each dlopen, to point to a per-entry stub.
 * Only entries that lead into modules NOT built with -finstrument-functions
 * are rewritten: an instrumented library has probes of its own.
 *
 * Which GOT entries: every R_X86_64_JUMP_SLOT (calls through the PLT), and
 * the R_X86_64_GLOB_DAT entries of functions that the module's code uses
 * only to call or jump through (-fno-plt: `call *foo@GOTPCREL(%rip)`).  A
 * GLOB_DAT entry also serves to take a function's address; rewriting it
 * would change &foo, so an entry that any instruction reads other than as
 * a call or jump target is left alone (rt_plt_call_only_slots).
 *
 * Binding: the program's own binding is kept (no LD_BIND_NOW).  An entry
 * still lazy, i.e. pointing back into its module's PLT, is resolved here
 * the way the dynamic linker would (global scope, then the module's own
 * scope, with the symbol's version); a symbol that cannot be found now
 * stays lazy and unprobed, so a program that relies on lazy binding to
 * never need it behaves as it always did.
 *
 * The stub enters rt_plt_entry (rt_plt_x86_64.S), which records the entry
 * and, for a call that returns, swaps the return address for a return
 * thunk.  Each pair (return address, library function) has a thunk of its
 * own, so the way back is written in code and a table, never lost: a
 * longjmp, a context switch, a signal handler that leaves, or a C++
 * exception cannot make a return land in the wrong place.  A per-thread
 * shadow stack (t->rets) remembers the calls in flight with the stack
 * address of their return slot, for the bookkeeping:
 *   - a call whose slot lies at or below the slot of a new call or return
 *     on the same stack was left (longjmp, an exception, a handler that
 *     jumped out): it is closed then (an exit event);
 *   - longjmp/siglongjmp and setcontext close the calls they leave at once,
 *     from the stack pointer they jump to;
 *   - C++ exceptions: _Unwind_RaiseException is interposed and puts the
 *     original return addresses of the calls in flight back (only where the
 *     slot still holds our thunk), __cxa_begin_catch closes the calls that
 *     were unwound and re-arms the others.
 * The runtime never aborts the program and never writes to the stack but
 * the return slot of the call being made, and slots it has checked still
 * hold its own thunk.
 *
 * Calls counted without swapping the return address (a zero-length call,
 * entry and exit at once): functions that return twice (setjmp, sigsetjmp,
 * getcontext, swapcontext, savectx), and those whose caller's address
 * matters (dlsym, dlvsym, dlmopen, dlopen when not interposed by rt.c).
 * Calls that do not return (exit, abort, pthread_exit, __cxa_throw, ...)
 * record their entry; the frame closes when the program is seen past it
 * (the rules above) or at the thread's end.  vfork is replaced by
 * rt_plt_vfork, which gives the child a process entry of its own.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt_int.h"

extern void rt_plt_entry(void);
extern void rt_plt_vfork(void);
extern char rt_plt_thunks[], rt_plt_thunks_end[];
uint64_t rt_plt_enter(uint64_t idx, uint64_t *ret_slot, const uint64_t *args)
	__attribute__((visibility("hidden")));
uint64_t rt_plt_leave(uint64_t k, uint64_t *ret_slot) __attribute__((visibility("hidden")));
int64_t rt_plt_vfork_child(int64_t r) __attribute__((visibility("hidden")));
int64_t rt_plt_vfork_parent(int64_t r) __attribute__((visibility("hidden")));

#define RT_PLT_MAX_SLOTS (1u << 18)
#define RT_PLT_STUB 32
#define RT_PLT_THUNK 16
#define RT_PLT_NTHUNKS 65536 /* as in rt_plt_x86_64.S */
#define RT_PLT_HASH (2 * RT_PLT_NTHUNKS)
/* Two return slots this close are taken to be on the same stack: a
 * thread's stack is one mapping of at most this size in practice, and the
 * separate stacks of ucontext coroutines or sigaltstack lie further apart
 * or, when not, only make bookkeeping close a call early (never unsafe). */
#define RT_PLT_SAME_STACK (64ull << 20)

/* What a hooked call does. */
enum rt_plt_kind {
	RT_PLT_CALL = 0,   /* entry, return address swapped, exit at its return */
	RT_PLT_NORETURN,   /* entry only: closed once the program is past it */
	RT_PLT_JUMP,       /* longjmp & co: entry, then closes what it leaves */
	RT_PLT_SETCONTEXT, /* the same, for a ucontext */
	RT_PLT_ONCE,       /* returns twice or needs its caller: entry+exit at once */
	RT_PLT_VFORK,      /* vfork: rt_plt_vfork */
};

struct rt_plt_slot {
	uint64_t target; /* where the call goes */
	uint64_t fn;     /* the function it is recorded as (differs for rt.c's interposers) */
	uint32_t kind;   /* enum rt_plt_kind */
	uint32_t last;   /* the thunk of this slot's last call + 1: a cache */
};

static struct rt_plt_slot *rt_plt_slots; /* slot number -> call */
static uint32_t rt_plt_nslots;
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
static char *rt_plt_names; /* "address name" lines for the recorder */
static size_t rt_plt_names_len, rt_plt_names_cap;

/* The return thunks' table: thunk k returns to thunk_ret[k], and closes a
 * call of slot thunk_slot[k].  thunk_hash maps (return address, slot) to
 * k + 1.  Entries are written once, under rt_plt_thunk_spin. */
static uint64_t rt_plt_thunk_ret[RT_PLT_NTHUNKS];
static uint32_t rt_plt_thunk_slot[RT_PLT_NTHUNKS];
static uint32_t rt_plt_thunk_hash[RT_PLT_HASH];
static uint32_t rt_plt_nthunks;
static int rt_plt_thunk_spin;

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
static int rt_plt_kind_of(const char *name)
{
	/* the runtime's own hooks, the start of the program, the TLS helper,
	 * the unwinder's internals and clone (whose child would share this
	 * thread's recording) are not calls of the program's to count */
	static const char *const never[] = {
		"__cyg_profile_func_enter", "__cyg_profile_func_exit", "__libc_start_main",
		"__tls_get_addr", "__cxa_begin_catch", "__gxx_personality_v0", "clone", "__clone",
	};
	static const char *const noreturn[] = {
		"exit", "_exit", "_Exit", "quick_exit", "abort", "pthread_exit", "__stack_chk_fail",
		"__assert_fail", "__assert_perror_fail", "__fortify_fail", "__chk_fail", "__cxa_throw",
		"__cxa_rethrow", "__cxa_call_unexpected", "__cxa_bad_cast", "__cxa_bad_typeid",
		"__cxa_throw_bad_array_new_length", "__cxa_pure_virtual", "__cxa_deleted_virtual",
	};
	static const char *const jump[] = {
		"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
	};
	static const char *const once[] = {
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx", "getcontext",
		"swapcontext", "dlsym", "dlvsym", "dlmopen", "dlopen",
	};
	if (RT_IN(name, never) || strncmp(name, "_Unwind_", 8) == 0)
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
	return RT_PLT_CALL;
}

static void rt_plt_note_name(uint64_t addr, const char *name)
{
	char line[600];
	int n = snprintf(line, sizeof(line), "%llx %s\n", (unsigned long long)addr, name);
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	if (rt_plt_names_len + (size_t)n > rt_plt_names_cap) {
		size_t cap = rt_plt_names_cap ? rt_plt_names_cap * 2 : 16384;
		while (cap < rt_plt_names_len + (size_t)n)
			cap *= 2;
		/* mmap, not realloc: the runtime never calls the program's malloc */
		char *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		if (rt_plt_names) {
			memcpy(p, rt_plt_names, rt_plt_names_len);
			munmap(rt_plt_names, rt_plt_names_cap);
		}
		rt_plt_names = p;
		rt_plt_names_cap = cap;
	}
	memcpy(rt_plt_names + rt_plt_names_len, line, (size_t)n);
	rt_plt_names_len += (size_t)n;
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
			if (s && strcmp(d->strtab + d->symtab[s].st_name, "__cyg_profile_func_enter") == 0)
				return 1;
		}
	return 0;
}

/* ------------------------------------------------------------------------
 * The modules of the process: which are instrumented
 * --------------------------------------------------------------------- */

struct rt_plt_mod {
	uintptr_t lo, hi; /* the module's mapped range */
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
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t a = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			if (a < lo)
				lo = a;
			if (a + info->dlpi_phdr[i].p_memsz > hi)
				hi = a + info->dlpi_phdr[i].p_memsz;
		}
	if (hi <= lo)
		return 0;
	struct rt_dyn d;
	struct rt_plt_mod *m = &rt_plt_mods[rt_plt_nmods++];
	m->lo = lo;
	m->hi = hi;
	/* this runtime has probes in its calibration yardstick (rt_calib.c),
	 * but its interposers are library functions to probe */
	Dl_info self;
	int is_self = dladdr((void *)rt_plt_collect, &self) && (uintptr_t)self.dli_fbase == info->dlpi_addr;
	m->instrumented = !is_self && rt_plt_read_dynamic(info, &d) == 0 && rt_plt_module_instrumented(&d);
	return 0;
}

static const struct rt_plt_mod *rt_plt_mod_of(uint64_t addr)
{
	for (unsigned i = 0; i < rt_plt_nmods; i++)
		if (addr >= rt_plt_mods[i].lo && addr < rt_plt_mods[i].hi)
			return &rt_plt_mods[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Resolving a lazy entry as the dynamic linker would
 * --------------------------------------------------------------------- */

/* The dynamic linker's handle of the module loaded at base (glibc: the
 * link_map itself), for a lookup in that module's own scope. */
static void *rt_plt_handle_of(uintptr_t base)
{
	for (struct link_map *l = _r_debug.r_map; l; l = l->l_next)
		if (l->l_addr == base)
			return l;
	return NULL;
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
		if (h)
			p = version ? dlvsym(h, name, version) : dlsym(h, name);
	}
	return (uint64_t)(uintptr_t)p;
}

/* ------------------------------------------------------------------------
 * GLOB_DAT entries used only as call or jump targets
 * --------------------------------------------------------------------- */

static int rt_plt_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

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

/*
 * slots[0..n) (sorted GOT addresses) get bit 0 set when some instruction in
 * the module's executable segments refers to them other than as
 * `call *slot(%rip)` (ff 15) or `jmp *slot(%rip)` (ff 25).  The scan looks
 * at every 4-byte window as a RIP-relative displacement, with 0, 1, 2 or 4
 * bytes of immediate after it: byte patterns that only look like such a
 * reference make it refuse a slot, never accept one.
 */
static void rt_plt_mark_non_calls(const struct dl_phdr_info *info, uint64_t *slots, size_t n)
{
	if (!n)
		return;
	uint64_t lo = slots[0] & ~1ull, hi = (slots[n - 1] & ~1ull) + 8;
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
			for (int k = 0; k < 4; k++) {
				uint64_t tgt = (uint64_t)(uintptr_t)(b + p + 4 + imm[k]) + (uint64_t)(int64_t)disp;
				if (tgt < lo || tgt >= hi)
					continue;
				size_t a = 0, z = n;
				while (a < z) { /* find tgt's slot */
					size_t mid = (a + z) / 2;
					if ((slots[mid] & ~1ull) < tgt)
						a = mid + 1;
					else
						z = mid;
				}
				if (a == n || (slots[a] & ~1ull) != tgt)
					continue;
				int is_call = k == 0 && p >= 2 && b[p - 2] == 0xff &&
					      (b[p - 1] == 0x15 || b[p - 1] == 0x25);
				if (!is_call)
					slots[a] |= 1;
			}
		}
	}
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
	uint64_t *first_got; /* the first entry rewritten, and its stub */
	uint64_t first_stub;
	uint8_t *stubs;
	size_t nstubs, cap;
	uintptr_t ro_lo, ro_hi;
	size_t page;
};

/* Point one GOT entry of module d at a new stub, if its call is one to probe. */
static void rt_plt_hook_entry(const struct dl_phdr_info *info, const struct rt_dyn *d,
			      const ElfW(Rela) *r, struct rt_plt_hook *h)
{
	static int self_known;
	static Dl_info self;
	if (!self_known)
		self_known = dladdr((void *)rt_plt_hook_entry, &self) ? 1 : -1;
	uint32_t si = (uint32_t)ELF64_R_SYM(r->r_info);
	const ElfW(Sym) *sym = &d->symtab[si];
	const char *nm = d->strtab + sym->st_name;
	if (!si || !*nm || sym->st_shndx != SHN_UNDEF || h->nstubs >= h->cap ||
	    rt_plt_nslots >= RT_PLT_MAX_SLOTS)
		return;
	int kind = rt_plt_kind_of(nm);
	if (kind < 0)
		return;
	uint64_t *got = (uint64_t *)(info->dlpi_addr + r->r_offset);
	uint64_t target = *got;
	const struct rt_plt_mod *own = rt_plt_mod_of((uint64_t)(uintptr_t)got);
	const struct rt_plt_mod *tm = rt_plt_mod_of(target);
	if (!own)
		return;
	if (!tm || tm == own) {
		/* still lazy (the module's own PLT), or never bound: resolve it now,
		 * as the dynamic linker would; if the symbol is not there yet,
		 * the entry stays as the program had it */
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT)
			return;
		target = rt_plt_lookup(info->dlpi_addr, nm, rt_plt_version(d, si));
		tm = target ? rt_plt_mod_of(target) : NULL;
		if (!tm || tm == own)
			return;
	}
	if (tm->instrumented) /* it has probes of its own */
		return;
	uint64_t fn = target;
	int ours = self_known > 0 && tm->lo == (uintptr_t)self.dli_fbase;
	if (ours) {
		/* one of rt.c's interposers (dlopen, ...): it calls the real one
		 * itself; the call is recorded as the real one's */
		void *real = dlsym(RTLD_NEXT, nm);
		if (real)
			fn = (uint64_t)(uintptr_t)real;
		if (strcmp(nm, "dlopen") == 0)
			kind = RT_PLT_CALL; /* the real dlopen sees rt.c as its caller anyway */
	}
	uintptr_t pg = (uintptr_t)got & ~(h->page - 1);
	if (mprotect((void *)pg, h->page, PROT_READ | PROT_WRITE) < 0)
		return;
	uint32_t idx = rt_plt_nslots;
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	s->target = kind == RT_PLT_VFORK ? (uint64_t)(uintptr_t)rt_plt_vfork : target;
	s->fn = fn;
	s->kind = (uint32_t)kind;
	s->last = 0;
	uint8_t *stub = h->stubs + h->nstubs * RT_PLT_STUB;
	rt_plt_write_stub(stub, idx);
	__atomic_store_n(&rt_plt_nslots, idx + 1, __ATOMIC_RELEASE);
	__atomic_store_n(got, (uint64_t)(uintptr_t)stub, __ATOMIC_RELEASE);
	if (pg >= h->ro_lo && pg < h->ro_hi)
		mprotect((void *)pg, h->page, PROT_READ);
	rt_plt_note_name(fn, nm);
	if (!h->first_got) {
		h->first_got = got;
		h->first_stub = (uint64_t)(uintptr_t)stub;
	}
	h->nstubs++;
}

static void rt_plt_module(const struct dl_phdr_info *info, struct rt_plt_done *done)
{
	struct rt_dyn d;
	if (rt_plt_read_dynamic(info, &d) < 0 || !rt_plt_module_instrumented(&d))
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
		if (sym->st_shndx == SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC ||
						   type == STT_NOTYPE))
			glob[ng++] = info->dlpi_addr + r->r_offset;
	}
	rt_plt_sort_u64(glob, ng);
	rt_plt_mark_non_calls(info, glob, ng);

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
			rt_plt_hook_entry(info, &d, &d.jmprel[i], &h);
	for (size_t i = 0; i < d.nrela && ng; i++) {
		const ElfW(Rela) *r = &d.rela[i];
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_GLOB_DAT)
			continue;
		uint64_t at = info->dlpi_addr + r->r_offset;
		uint64_t *g = bsearch(&at, glob, ng, sizeof(uint64_t), rt_plt_cmp_u64);
		if (g) /* a call-only slot: bit 0 clear, so bsearch found it exactly */
			rt_plt_hook_entry(info, &d, r, &h);
	}
	/* the stubs become executable before the GOT can reach them: the GOT
	 * writes above only happen in this single-threaded set-up or under
	 * dlopen, before the new module's code runs */
	mprotect(h.stubs, stubsz, PROT_READ | PROT_EXEC);
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
	/* the thunks of rt_plt_x86_64.S must be what this file counts on */
	if ((size_t)(rt_plt_thunks_end - rt_plt_thunks) != (size_t)RT_PLT_NTHUNKS * RT_PLT_THUNK)
		return;
	pthread_mutex_lock(&rt_plt_lock);
	if (!rt_plt_slots) {
		void *m = mmap(NULL, RT_PLT_MAX_SLOTS * sizeof(struct rt_plt_slot),
			       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		rt_plt_slots = m == MAP_FAILED ? NULL : m;
	}
	if (rt_plt_slots) {
		rt_plt_nmods = 0;
		dl_iterate_phdr(rt_plt_collect, NULL);
		dl_iterate_phdr(rt_plt_visit, NULL);
		if (rt_plt_names_len)
			rt_write_file(".plt", rt_plt_names, rt_plt_names_len);
	}
	pthread_mutex_unlock(&rt_plt_lock);
}

void rt_plt_after_dlopen(void)
{
	if (rt_g.plt)
		rt_plt_init();
}

/* The hooked functions' names, for a new process key. */
void rt_plt_save_names(void)
{
	if (rt_plt_names_len)
		rt_write_file(".plt", rt_plt_names, rt_plt_names_len);
}

/* In a fork child, which has a key of its own: no lock, one thread. */
void rt_plt_fork_child(void)
{
	pthread_mutex_init(&rt_plt_lock, NULL);
	rt_plt_thunk_spin = 0; /* another thread may have held it at the fork */
	rt_plt_save_names();
}

/* ------------------------------------------------------------------------
 * Return thunks
 * --------------------------------------------------------------------- */

static inline uint64_t rt_plt_thunk_addr(uint32_t k)
{
	return (uint64_t)(uintptr_t)(rt_plt_thunks + (size_t)k * RT_PLT_THUNK);
}

static inline uint32_t rt_plt_hash_of(uint64_t ret, uint32_t idx)
{
	return (uint32_t)(((ret ^ ((uint64_t)idx << 40)) * 0x9E3779B97F4A7C15ull) >> 40) & (RT_PLT_HASH - 1);
}

/* The thunk of (ret, idx), made if new; ~0u when the table is full. */
static uint32_t rt_plt_thunk(uint32_t idx, uint64_t ret)
{
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	uint32_t c = __atomic_load_n(&s->last, __ATOMIC_ACQUIRE);
	if (RT_LIKELY(c && rt_plt_thunk_ret[c - 1] == ret && rt_plt_thunk_slot[c - 1] == idx))
		return c - 1;
	uint32_t h = rt_plt_hash_of(ret, idx);
	for (;;) {
		uint32_t e = __atomic_load_n(&rt_plt_thunk_hash[h], __ATOMIC_ACQUIRE);
		if (!e)
			break;
		if (rt_plt_thunk_ret[e - 1] == ret && rt_plt_thunk_slot[e - 1] == idx) {
			__atomic_store_n(&s->last, e, __ATOMIC_RELEASE);
			return e - 1;
		}
		h = (h + 1) & (RT_PLT_HASH - 1);
	}
	/* new: a spin flag held for a few stores.  Only other threads can
	 * hold it: this thread's signal handlers do not get here while it
	 * does (t->plt_busy makes their calls zero-length) */
	while (__atomic_exchange_n(&rt_plt_thunk_spin, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	uint32_t k = ~0u;
	for (;;) {
		uint32_t e = rt_plt_thunk_hash[h];
		if (!e) {
			if (rt_plt_nthunks < RT_PLT_NTHUNKS) {
				k = rt_plt_nthunks++;
				rt_plt_thunk_ret[k] = ret;
				rt_plt_thunk_slot[k] = idx;
				__atomic_store_n(&rt_plt_thunk_hash[h], k + 1, __ATOMIC_RELEASE);
			}
			break;
		}
		if (rt_plt_thunk_ret[e - 1] == ret && rt_plt_thunk_slot[e - 1] == idx) {
			k = e - 1;
			break;
		}
		h = (h + 1) & (RT_PLT_HASH - 1);
	}
	__atomic_store_n(&rt_plt_thunk_spin, 0, __ATOMIC_RELEASE);
	if (k != ~0u)
		__atomic_store_n(&s->last, k + 1, __ATOMIC_RELEASE);
	return k;
}

/* ------------------------------------------------------------------------
 * The shadow stack
 * --------------------------------------------------------------------- */

/* a and b (return slots) on one stack, a at or below b */
static inline int rt_plt_at_or_below(uint64_t *a, uint64_t *b)
{
	return a <= b && (uint64_t)((char *)b - (char *)a) < RT_PLT_SAME_STACK;
}

static void rt_plt_close(struct rt_thread *t, uint64_t fn)
{
	if (t->state == RT_ACTIVE)
		rt_probe(t, 1, fn);
}

/*
 * Close the calls in flight whose return slot lies below `limit` (or at it,
 * when `at` is set) on its stack: the program has left them.  Entries of
 * other stacks (coroutines, a signal stack) are kept.
 */
static void rt_plt_drop_below(struct rt_thread *t, uint64_t *limit, int at)
{
	uint32_t n = t->nrets;
	int dropped = 0;
	/* innermost first: the reader closes frames in that order */
	for (uint32_t i = n; i-- > 0;) {
		struct rt_ret *r = &t->rets[i];
		if (at ? rt_plt_at_or_below(r->slot, limit)
		       : r->slot < limit && rt_plt_at_or_below(r->slot, limit)) {
			rt_plt_close(t, r->fn);
			r->fn = 0; /* marks it gone */
			dropped = 1;
		} else if (rt_plt_at_or_below(limit, r->slot)) {
			break; /* a live call above: older ones of this stack lie higher */
		}
	}
	if (!dropped)
		return;
	uint32_t j = 0;
	for (uint32_t i = 0; i < n; i++)
		if (t->rets[i].fn)
			t->rets[j++] = t->rets[i];
	t->nrets = j;
}

/* Record a zero-length call: entry and exit at once. */
static void rt_plt_once(struct rt_thread *t, uint64_t fn)
{
	rt_probe(t, 0, fn);
	if (t->state == RT_ACTIVE)
		rt_probe(t, 1, fn);
}

/* Where longjmp(env) will land: glibc keeps the stack pointer mangled with
 * the thread's pointer guard in __jmpbuf[6] (x86_64 ABI of glibc). */
static uint64_t rt_plt_jmp_sp(const uint64_t *env)
{
	uint64_t guard;
	__asm__("mov %%fs:0x30, %0" : "=r"(guard));
	uint64_t v = env[6];
	v = (v >> 0x11) | (v << (64 - 0x11));
	return v ^ guard;
}

static int rt_plt_vfork_prepare(uint64_t fn);

/* ------------------------------------------------------------------------
 * The probes, called from the trampolines
 * --------------------------------------------------------------------- */

uint64_t rt_plt_enter(uint64_t idx, uint64_t *ret_slot, const uint64_t *args)
{
	struct rt_plt_slot *s = &rt_plt_slots[idx];
	uint64_t target = s->target;
	struct rt_thread *t = &rt_self;
	if (RT_UNLIKELY(t->state != RT_ACTIVE) && !rt_thread_start(t))
		return s->kind == RT_PLT_VFORK ? s->fn : target;
	uint32_t kind = s->kind;
	if (RT_UNLIKELY(t->plt_busy)) {
		/* a signal handler interrupted this thread's bookkeeping */
		if (kind != RT_PLT_VFORK)
			rt_plt_once(t, s->fn);
		return target;
	}
	t->plt_busy = 1;
	/* calls left at or below this slot on this stack are over */
	if (t->nrets && rt_plt_at_or_below(t->rets[t->nrets - 1].slot, ret_slot))
		rt_plt_drop_below(t, ret_slot, 1);
	if (RT_UNLIKELY(kind != RT_PLT_CALL)) {
		if (kind == RT_PLT_ONCE) {
			rt_plt_once(t, s->fn);
		} else if (kind == RT_PLT_VFORK) {
			rt_probe(t, 0, s->fn);
			t->plt_busy = 0;
			return rt_plt_vfork_prepare(s->fn) == 0 ? target : s->fn;
		} else {
			rt_probe(t, 0, s->fn);
			if (t->nrets < RT_RETS) {
				struct rt_ret *r = &t->rets[t->nrets++];
				memset(r, 0, sizeof(*r));
				r->slot = ret_slot;
				r->fn = s->fn;
			}
			/* where the jump lands: longjmp's jmp_buf or setcontext's
			 * ucontext is the first argument */
			uint64_t *to = NULL;
			if (kind == RT_PLT_JUMP && args[0])
				to = (uint64_t *)(uintptr_t)rt_plt_jmp_sp((const uint64_t *)args[0]);
			else if (kind == RT_PLT_SETCONTEXT && args[0])
				to = (uint64_t *)(uintptr_t)((const ucontext_t *)args[0])
					     ->uc_mcontext.gregs[REG_RSP];
			if (!(to > ret_slot && rt_plt_at_or_below(ret_slot, to)))
				to = NULL; /* not on this stack: left to the rules above */
			if (to) /* everything below the landing point, this call first */
				rt_plt_drop_below(t, to, 0);
		}
		t->plt_busy = 0;
		return target;
	}
	uint32_t k = t->nrets < RT_RETS ? rt_plt_thunk((uint32_t)idx, *ret_slot) : ~0u;
	if (RT_UNLIKELY(k == ~0u)) {
		/* no room to follow the return: counted, as a zero-length call */
		rt_plt_once(t, s->fn);
		t->plt_busy = 0;
		return target;
	}
	struct rt_ret *r = &t->rets[t->nrets];
	r->slot = ret_slot;
	r->orig = *ret_slot;
	r->fn = s->fn;
	r->thunk = k;
	r->swapped = 1;
	r->restored = 0;
	t->nrets++;
	*ret_slot = rt_plt_thunk_addr(k);
	t->plt_busy = 0;
	rt_probe(t, 0, s->fn);
	return target;
}

/*
 * A library call returned through thunk k, whose return slot was ret_slot.
 * Calls deeper on the same stack that never returned are closed first.
 * The way back comes from the thunk's table entry, whatever the shadow
 * stack holds.
 */
uint64_t rt_plt_leave(uint64_t k, uint64_t *ret_slot)
{
	uint64_t orig = rt_plt_thunk_ret[k];
	struct rt_thread *t = &rt_self;
	if (t->plt_busy || !t->nrets)
		return orig;
	t->plt_busy = 1;
	struct rt_ret *top = &t->rets[t->nrets - 1];
	if (RT_LIKELY(top->slot == ret_slot && top->swapped && top->thunk == k)) {
		uint64_t fn = top->fn;
		t->nrets--;
		t->plt_busy = 0;
		rt_plt_close(t, fn);
		return orig;
	}
	uint32_t i = t->nrets;
	while (i > 0 && t->rets[i - 1].slot != ret_slot)
		i--;
	if (i > 0 && t->rets[i - 1].swapped && t->rets[i - 1].thunk == k) {
		uint64_t fn = t->rets[i - 1].fn;
		/* entries below it on this stack were left; then this call ends */
		rt_plt_drop_below(t, ret_slot, 0);
		uint32_t n = t->nrets;
		for (uint32_t j = n; j-- > 0;)
			if (t->rets[j].slot == ret_slot) {
				memmove(&t->rets[j], &t->rets[j + 1], (n - j - 1) * sizeof(t->rets[0]));
				t->nrets = n - 1;
				break;
			}
		t->plt_busy = 0;
		rt_plt_close(t, fn);
		return orig;
	}
	/* not followed (closed already as left): nothing to record */
	t->plt_busy = 0;
	return orig;
}

/* ------------------------------------------------------------------------
 * vfork: the child records into a process entry of its own
 * --------------------------------------------------------------------- */

/* The parent's recording state while its vfork child runs on its memory. */
static __thread struct rt_thread *rt_plt_vfork_saved __attribute__((tls_model("initial-exec")));
static __thread uint64_t rt_plt_vfork_fn __attribute__((tls_model("initial-exec")));

static int rt_plt_vfork_prepare(uint64_t fn)
{
	struct rt_thread *t = &rt_self;
	void *m = mmap(NULL, sizeof(*t) + sizeof(rt_g), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	memcpy(m, t, sizeof(*t));
	memcpy((char *)m + sizeof(*t), &rt_g, sizeof(rt_g)); /* the child gets a new key */
	rt_plt_vfork_saved = m;
	rt_plt_vfork_fn = fn;
	return 0;
}

int64_t rt_plt_vfork_child(int64_t r)
{
	rt_vfork_child();
	return r;
}

int64_t rt_plt_vfork_parent(int64_t r)
{
	struct rt_thread *t = &rt_self, *saved = rt_plt_vfork_saved;
	if (saved) {
		/* what the child mapped in the memory it shared with us */
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		if (t->hdr && t->hdr != saved->hdr)
			munmap(t->hdr, FMT_SPOOL_HDR_SIZE);
		if (t->chunk_base && t->chunk_base != saved->chunk_base)
			munmap(t->chunk_base, fmt_spool_chunk_size(t->chunk));
		if (t->seen && t->seen != saved->seen)
			munmap(t->seen, RT_SEEN * sizeof(uint64_t));
		if (t->lock && t->lock != saved->lock)
			munmap((void *)((uintptr_t)t->lock & ~(page - 1)), page);
		memcpy(t, saved, sizeof(*t));
		memcpy(&rt_g, (char *)saved + sizeof(*t), sizeof(rt_g));
		munmap(saved, sizeof(*t) + sizeof(rt_g));
		rt_plt_vfork_saved = NULL;
	}
	if (t->state == RT_ACTIVE && rt_plt_vfork_fn)
		rt_probe(t, 1, rt_plt_vfork_fn); /* the parent's vfork ends now */
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/* ------------------------------------------------------------------------
 * Exceptions: unwinders must see the real return addresses
 * --------------------------------------------------------------------- */

/* Read one word that may no longer be mapped (a coroutine's freed stack). */
static int rt_plt_peek(const uint64_t *p, uint64_t *v)
{
	struct iovec local = {v, sizeof(*v)}, remote = {(void *)p, sizeof(*v)};
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*v))
		return 0;
	if (errno != ENOSYS && errno != EPERM)
		return -1;
	/* forbidden here (a seccomp filter): mapped is the best we can check */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec;
	if (mincore((void *)((uintptr_t)p & ~(page - 1)), page, &vec) < 0)
		return -1;
	*v = *p;
	return 0;
}

static void rt_plt_restore_all(void)
{
	struct rt_thread *t = &rt_self;
	if (t->plt_busy)
		return;
	t->plt_busy = 1;
	for (uint32_t i = 0; i < t->nrets; i++) {
		struct rt_ret *r = &t->rets[i];
		uint64_t v;
		/* only a slot that still holds our thunk is a call in flight */
		if (r->swapped && !r->restored && rt_plt_peek(r->slot, &v) == 0 &&
		    v == rt_plt_thunk_addr(r->thunk)) {
			*r->slot = r->orig;
			r->restored = 1;
		}
	}
	t->plt_busy = 0;
}

/*
 * A handler was found, or a backtrace is done: calls whose return slot lies
 * below sp (on this stack) were unwound, and close now; the others are
 * re-armed.
 */
static void rt_plt_rearm(void *sp)
{
	struct rt_thread *t = &rt_self;
	if (t->plt_busy)
		return;
	t->plt_busy = 1;
	if (sp)
		rt_plt_drop_below(t, sp, 0);
	for (uint32_t i = 0; i < t->nrets; i++) {
		struct rt_ret *r = &t->rets[i];
		if (r->restored) {
			*r->slot = rt_plt_thunk_addr(r->thunk);
			r->restored = 0;
		}
	}
	t->plt_busy = 0;
}

typedef int (*rt_unwind_fn)(void *);

RT_API int _Unwind_RaiseException(void *exc)
{
	static rt_unwind_fn real;
	if (!real)
		real = (rt_unwind_fn)dlsym(RTLD_NEXT, "_Unwind_RaiseException");
	rt_plt_restore_all();
	int r = real(exc);
	/* returns only when no handler was found: nothing was unwound */
	rt_plt_rearm(NULL);
	return r;
}

RT_API int _Unwind_ForcedUnwind(void *exc, void *stop, void *arg)
{
	static int (*real)(void *, void *, void *);
	if (!real)
		real = (int (*)(void *, void *, void *))dlsym(RTLD_NEXT, "_Unwind_ForcedUnwind");
	rt_plt_restore_all();
	return real(exc, stop, arg);
}

RT_API int _Unwind_Backtrace(void *fn, void *arg)
{
	static int (*real)(void *, void *);
	if (!real)
		real = (int (*)(void *, void *))dlsym(RTLD_NEXT, "_Unwind_Backtrace");
	rt_plt_restore_all();
	int r = real(fn, arg);
	rt_plt_rearm(NULL);
	return r;
}

RT_API void *__cxa_begin_catch(void *exc)
{
	static void *(*real)(void *);
	if (!real)
		real = (void *(*)(void *))dlsym(RTLD_NEXT, "__cxa_begin_catch");
	/* everything below our caller's frame is gone */
	rt_plt_rearm((char *)__builtin_frame_address(0) + 16);
	return real ? real(exc) : NULL;
}
