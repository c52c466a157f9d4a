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
 * The recorder sets LD_BIND_NOW, so every entry already holds its resolved
 * target (IFUNCs included) when this runs.
 *
 * The stub enters rt_plt_entry (rt_plt_x86_64.S), which records the entry
 * and swaps the return address for rt_plt_return, which records the exit.
 * Functions that never return, return twice, or unwind (exit, longjmp,
 * setjmp, vfork, __cxa_throw, std::__throw_*, _Unwind_*) are left alone.
 * A C++ exception unwinding through a library call would meet a swapped
 * return address, so _Unwind_RaiseException is interposed: it puts every
 * original return address of the thread back first, and __cxa_begin_catch
 * closes the calls that were unwound and re-arms the ones still live.
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

#include "rt_int.h"

extern void rt_plt_entry(void);
extern void rt_plt_return(void);
uint64_t rt_plt_enter(uint64_t idx, uint64_t *ret_slot) __attribute__((visibility("hidden")));
uint64_t rt_plt_leave(uint64_t *ret_slot) __attribute__((visibility("hidden")));

#define RT_PLT_MAX_SLOTS (1u << 18)
#define RT_PLT_STUB 32

static uint64_t *rt_plt_targets; /* slot number -> library function */
static uint32_t rt_plt_nslots;
static pthread_mutex_t rt_plt_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t rt_plt_done[1024]; /* load bases of the modules already handled */
static unsigned rt_plt_ndone;
static char *rt_plt_names; /* "address name" lines for the recorder */
static size_t rt_plt_names_len, rt_plt_names_cap;

static int rt_plt_skip(const char *name)
{
	static const char *const never[] = {
		"__cyg_profile_func_enter", "__cyg_profile_func_exit", "exit", "_exit", "_Exit",
		"quick_exit", "abort", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk",
		"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "savectx", "vfork", "__vfork",
		"getcontext", "setcontext", "swapcontext", "makecontext", "pthread_exit",
		"__libc_start_main", "__stack_chk_fail", "__assert_fail", "__fortify_fail",
		"__chk_fail", "__cxa_throw", "__cxa_rethrow", "__cxa_end_cleanup",
		"__cxa_begin_catch", "__cxa_end_catch", "__cxa_call_unexpected",
		"__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_throw_bad_array_new_length",
		"__gxx_personality_v0", "clone", "__clone", "__tls_get_addr", "dlopen",
	};
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (strcmp(name, never[i]) == 0)
			return 1;
	/* _Unwind_*, std::__throw_* and std::rethrow_exception */
	return strncmp(name, "_Unwind_", 8) == 0 || strstr(name, "__throw_") != NULL ||
	       strstr(name, "rethrow_exception") != NULL;
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
		char *p = realloc(rt_plt_names, cap);
		if (!p)
			return;
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

struct rt_dyn {
	const ElfW(Rela) *jmprel;
	size_t njmprel;
	const ElfW(Sym) *symtab;
	const char *strtab;
};

static int rt_plt_read_dynamic(const struct dl_phdr_info *info, struct rt_dyn *d)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		size_t relsz = 0;
		int rela = 1;
		for (; dyn->d_tag != DT_NULL; dyn++) {
			switch (dyn->d_tag) {
			case DT_JMPREL: d->jmprel = (const void *)dyn->d_un.d_ptr; break;
			case DT_PLTRELSZ: relsz = dyn->d_un.d_val; break;
			case DT_SYMTAB: d->symtab = (const void *)dyn->d_un.d_ptr; break;
			case DT_STRTAB: d->strtab = (const void *)dyn->d_un.d_ptr; break;
			case DT_PLTREL: rela = dyn->d_un.d_val == DT_RELA; break;
			}
		}
		/* glibc relocates these d_ptr entries in place (vDSO aside) */
		if (!rela || !d->jmprel || !d->symtab || !d->strtab)
			return -1;
		d->njmprel = relsz / sizeof(ElfW(Rela));
		return 0;
	}
	return -1;
}

static const ElfW(Phdr) *rt_plt_relro(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
			return &info->dlpi_phdr[i];
	return NULL;
}

static void rt_plt_module(const struct dl_phdr_info *info)
{
	struct rt_dyn d;
	if (rt_plt_read_dynamic(info, &d) < 0)
		return;
	int instrumented = 0;
	for (size_t i = 0; i < d.njmprel; i++) {
		const char *nm = d.strtab + d.symtab[ELF64_R_SYM(d.jmprel[i].r_info)].st_name;
		if (strcmp(nm, "__cyg_profile_func_enter") == 0)
			instrumented = 1;
	}
	if (!instrumented || rt_plt_nslots + d.njmprel > RT_PLT_MAX_SLOTS)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t stubsz = (d.njmprel * RT_PLT_STUB + page - 1) & ~(page - 1);
	uint8_t *stubs = mmap(NULL, stubsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stubs == MAP_FAILED)
		return;
	const ElfW(Phdr) *relro = rt_plt_relro(info);
	uintptr_t ro_lo = relro ? (info->dlpi_addr + relro->p_vaddr) & ~(page - 1) : 0;
	uintptr_t ro_hi = relro ? info->dlpi_addr + relro->p_vaddr + relro->p_memsz : 0;
	int hooked = 0;
	for (size_t i = 0; i < d.njmprel; i++) {
		const ElfW(Rela) *r = &d.jmprel[i];
		if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT)
			continue;
		const ElfW(Sym) *sym = &d.symtab[ELF64_R_SYM(r->r_info)];
		const char *nm = d.strtab + sym->st_name;
		uint64_t *got = (uint64_t *)(info->dlpi_addr + r->r_offset);
		uint64_t target = *got;
		if (!*nm || rt_plt_skip(nm) || sym->st_shndx != SHN_UNDEF)
			continue;
		Dl_info di;
		/* still unresolved (no LD_BIND_NOW), or inside this very module */
		if (!dladdr((void *)(uintptr_t)target, &di) ||
		    (uintptr_t)di.dli_fbase == (uintptr_t)info->dlpi_addr)
			continue;
		uint32_t idx = rt_plt_nslots;
		uintptr_t pg = (uintptr_t)got & ~(page - 1);
		if (mprotect((void *)pg, page, PROT_READ | PROT_WRITE) < 0)
			continue;
		rt_plt_targets[idx] = target;
		rt_plt_write_stub(stubs + (size_t)hooked * RT_PLT_STUB, idx);
		__atomic_store_n(&rt_plt_nslots, idx + 1, __ATOMIC_RELEASE);
		__atomic_store_n(got, (uint64_t)(uintptr_t)(stubs + (size_t)hooked * RT_PLT_STUB),
				 __ATOMIC_RELEASE);
		if (pg >= ro_lo && pg < ro_hi)
			mprotect((void *)pg, page, PROT_READ);
		rt_plt_note_name(target, nm);
		hooked++;
	}
	/* the stubs become executable before the GOT can reach them: the GOT
	 * writes above only happen in this single-threaded set-up or under
	 * dlopen, before the new module's code runs */
	mprotect(stubs, stubsz, PROT_READ | PROT_EXEC);
}

static int rt_plt_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (unsigned i = 0; i < rt_plt_ndone; i++)
		if (rt_plt_done[i] == info->dlpi_addr)
			return 0;
	if (rt_plt_ndone < sizeof(rt_plt_done) / sizeof(rt_plt_done[0]))
		rt_plt_done[rt_plt_ndone++] = info->dlpi_addr;
	/* skip the vDSO and this runtime */
	Dl_info self;
	if (dladdr((void *)rt_plt_visit, &self) && (uintptr_t)self.dli_fbase == info->dlpi_addr)
		return 0;
	if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso"))
		return 0;
	rt_plt_module(info);
	return 0;
}

void rt_plt_init(void)
{
	pthread_mutex_lock(&rt_plt_lock);
	if (!rt_plt_targets) {
		void *m = mmap(NULL, RT_PLT_MAX_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		rt_plt_targets = m == MAP_FAILED ? NULL : m;
	}
	if (rt_plt_targets) {
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

void rt_calib_plain(void);

void (*rt_plt_calib_stub(void))(void)
{
	static uint8_t *stub;
	if (stub)
		return (void (*)(void))(void *)stub;
	pthread_mutex_lock(&rt_plt_lock);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (rt_plt_targets && rt_plt_nslots < RT_PLT_MAX_SLOTS) {
		uint8_t *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			uint32_t idx = rt_plt_nslots;
			rt_plt_targets[idx] = (uint64_t)(uintptr_t)rt_calib_plain;
			__atomic_store_n(&rt_plt_nslots, idx + 1, __ATOMIC_RELEASE);
			rt_plt_write_stub(m, idx);
			if (mprotect(m, page, PROT_READ | PROT_EXEC) == 0)
				stub = m;
		}
	}
	pthread_mutex_unlock(&rt_plt_lock);
	return stub ? (void (*)(void))(void *)stub : NULL;
}

/* In a fork child, which has a key of its own: no lock, one thread. */
void rt_plt_fork_child(void)
{
	pthread_mutex_init(&rt_plt_lock, NULL);
	if (rt_plt_names_len)
		rt_write_file(".plt", rt_plt_names, rt_plt_names_len);
}

/* ------------------------------------------------------------------------
 * The probes, called from the trampolines
 * --------------------------------------------------------------------- */

uint64_t rt_plt_enter(uint64_t idx, uint64_t *ret_slot)
{
	uint64_t target = rt_plt_targets[idx];
	struct rt_thread *t = &rt_self;
	if (RT_UNLIKELY(t->state != RT_ACTIVE) && !rt_thread_start(t))
		return target;
	if (RT_UNLIKELY(t->nrets == RT_RETS))
		return target;
	/* a signal handler may interrupt anywhere here; its own calls push
	 * and pop entries above ours before we go on (LIFO) */
	uint32_t i = t->nrets;
	struct rt_ret *r = &t->rets[i];
	r->slot = ret_slot;
	r->orig = *ret_slot;
	r->fn = target;
	r->restored = 0;
	t->nrets = i + 1;
	*ret_slot = (uint64_t)(uintptr_t)rt_plt_return;
	rt_probe(t, 0, target);
	return target;
}

static void rt_plt_record_exit(struct rt_thread *t, uint64_t fn)
{
	if (t->state == RT_ACTIVE)
		rt_probe(t, 1, fn);
}

/*
 * The library function returned through ret_slot.  Calls deeper on the
 * stack that never returned (a longjmp went past them) are closed first.
 */
uint64_t rt_plt_leave(uint64_t *ret_slot)
{
	struct rt_thread *t = &rt_self;
	while (t->nrets) {
		struct rt_ret *r = &t->rets[t->nrets - 1];
		if (r->slot == ret_slot) {
			t->nrets--;
			rt_plt_record_exit(t, r->fn);
			return r->orig;
		}
		if (r->slot > ret_slot)
			break;
		t->nrets--;
		rt_plt_record_exit(t, r->fn);
	}
	static const char msg[] = "stint: lost track of a library call's return address\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);
	(void)w;
	abort();
}

/* ------------------------------------------------------------------------
 * Exceptions: unwinders must see the real return addresses
 * --------------------------------------------------------------------- */

static void rt_plt_restore_all(void)
{
	struct rt_thread *t = &rt_self;
	for (uint32_t i = 0; i < t->nrets; i++)
		if (!t->rets[i].restored) {
			*t->rets[i].slot = t->rets[i].orig;
			t->rets[i].restored = 1;
		}
}

/*
 * A handler was found: calls whose return slot lies below the catching
 * frame's stack were unwound, and close now; the others are re-armed.
 */
static void rt_plt_after_catch(void *sp)
{
	struct rt_thread *t = &rt_self;
	while (t->nrets && (void *)t->rets[t->nrets - 1].slot < sp) {
		t->nrets--;
		rt_plt_record_exit(t, t->rets[t->nrets].fn);
	}
	for (uint32_t i = 0; i < t->nrets; i++)
		if (t->rets[i].restored) {
			*t->rets[i].slot = (uint64_t)(uintptr_t)rt_plt_return;
			t->rets[i].restored = 0;
		}
}

typedef int (*rt_unwind_fn)(void *);

RT_API int _Unwind_RaiseException(void *exc)
{
	static rt_unwind_fn real;
	if (!real)
		real = (rt_unwind_fn)dlsym(RTLD_NEXT, "_Unwind_RaiseException");
	rt_plt_restore_all();
	return real(exc);
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
	rt_plt_after_catch(__builtin_frame_address(0));
	return r;
}

RT_API void *__cxa_begin_catch(void *exc)
{
	static void *(*real)(void *);
	if (!real)
		real = (void *(*)(void *))dlsym(RTLD_NEXT, "__cxa_begin_catch");
	/* everything below our caller's frame is gone */
	rt_plt_after_catch((char *)__builtin_frame_address(0) + 16);
	return real ? real(exc) : NULL;
}
