/*
 * rt_attach.c - libstint-rt-attach.so: the runtime as `stint record -p PID`
 * loads it into a running program built with -finstrument-functions
 * (recorder/rec_inject.c does the ptrace side; doc/stint-record.md,
 * "Attaching to a running process").
 *
 * The same rt.c as libstint-rt.so, built with RT_ATTACH_LIB: a library
 * loaded by dlopen has only a few bytes of static TLS, so each thread's
 * state is mapped on its first probe and found through one thread-local
 * pointer; the threads' states are listed, so that detaching can end them
 * all.  No library-call probes, no patching, no record-time selection
 * (their entry points are empty here).
 *
 * What stint calls, each in a thread it stopped while all the others are
 * stopped too:
 *   stint_attach(settings)  start recording (rt_attach_start) and point
 *                           every module's GOT entries of
 *                           __cyg_profile_func_enter/exit (the C library's
 *                           empty ones until now) at this library's probes
 *   stint_detach_begin()    put the GOT entries back as they were
 *   stint_detach_end()      (once no thread is inside a probe) end every
 *                           thread's recording and unmap what it mapped;
 *                           stint then unloads the library.  1 when a
 *                           thread is busy in the runtime: nothing done
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt_int.h"
#include "rt_file.h"
#include "rt_select.h"

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

#define RT_ATTACH_THREADS 4096
#define RT_ATTACH_SLOTS 256

/* ------------------------------------------------------------------------
 * Per-thread state, mapped
 * --------------------------------------------------------------------- */

static __thread struct rt_thread *rt_self_p __attribute__((tls_model("initial-exec")));
static struct rt_thread *rt_threads[RT_ATTACH_THREADS];
static unsigned rt_nthreads;
static struct rt_thread rt_unrecorded = {.state = RT_DONE}; /* past the list, or no memory */

struct rt_thread *rt_self_get(void)
{
	struct rt_thread *t = rt_self_p;
	if (RT_LIKELY(t != NULL))
		return t;
	unsigned i = __atomic_fetch_add(&rt_nthreads, 1, __ATOMIC_RELAXED);
	void *m = i < RT_ATTACH_THREADS ? mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
					: MAP_FAILED;
	if (m == MAP_FAILED) {
		if (i >= RT_ATTACH_THREADS)
			__atomic_store_n(&rt_nthreads, RT_ATTACH_THREADS, __ATOMIC_RELAXED);
		else
			rt_threads[i] = &rt_unrecorded;
		rt_self_p = &rt_unrecorded;
		return &rt_unrecorded;
	}
	t = m;
	__atomic_store_n(&rt_threads[i], t, __ATOMIC_RELEASE);
	rt_self_p = t;
	return t;
}

/* ------------------------------------------------------------------------
 * What the preloaded runtime has and this one does without
 * --------------------------------------------------------------------- */

int rt_sel_on;
void rt_sel_init(void) {}
void rt_sel_after_dlopen(void) {}
void rt_sel_thread_end(struct rt_thread *t) { (void)t; }
void rt_sel_thread_unmap(void) {}
void rt_patch_thread_unmap(void) {}
void rt_patch_after_dlclose(void) {}
int rt_sel_skip(uint64_t fn) { (void)fn; return 0; }
void rt_sel_vfork(int child) { (void)child; }
int rt_sel_event(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site, uint64_t now, uint64_t sw)
{
	(void)t; (void)is_exit; (void)fn; (void)site; (void)now; (void)sw;
	return 0;
}
void rt_plt_init(void) {}
void rt_plt_after_dlopen(void) {}
void rt_plt_fork_child(void) {}
void rt_plt_save_names(void) {}
void (*rt_plt_calib_stub(void))(void) { return NULL; }
void rt_patch_init(void) {}
int rt_patch_program_probed(void) { return 0; }

/* ------------------------------------------------------------------------
 * The frames open when stint attached: "<spool>/attach.frames", a line
 * "tid addr addr ..." (hex, outermost first) per thread
 * --------------------------------------------------------------------- */

static char *rt_frames;
static size_t rt_frames_len;

/* (spool: STINT_SPOOL of the settings; read before the attaching thread
 * starts recording, which enters its own open frames) */
static void rt_read_frames(const char *spool, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%.*s/attach.frames", (int)len, spool);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	size_t cap = 1 << 20;
	char *buf = rt_mem_grow(NULL, 0, cap);
	size_t n = 0;
	while (buf && n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!buf)
		return;
	buf[n] = 0;
	rt_frames = buf;
	rt_frames_len = cap;
}

uint32_t rt_attach_frames(pid_t tid, uint64_t *open, uint32_t max)
{
	for (char *p = rt_frames; p && *p;) {
		char *end;
		long id = strtol(p, &end, 10);
		char *nl = strchrnul(p, '\n');
		if (id == (long)tid && end != p) {
			uint32_t n = 0;
			for (char *q = end; q < nl && n < max;) {
				uint64_t a = strtoull(q, &end, 16);
				if (end == q)
					break;
				open[n++] = a;
				q = end;
			}
			return n;
		}
		p = *nl ? nl + 1 : nl;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * The GOT entries of __cyg_profile_func_enter/exit
 * --------------------------------------------------------------------- */

struct rt_got_slot {
	uint64_t *slot;
	uint64_t orig;
	uintptr_t ro_lo, ro_hi; /* the module's RELRO range: read-only unless opened */
};
static struct rt_got_slot rt_slots[RT_ATTACH_SLOTS];
static unsigned rt_nslots;
static uintptr_t rt_self_base;

static const void *rt_dptr(uintptr_t base, ElfW(Addr) p)
{
	return (const void *)(p < base ? base + p : p); /* glibc relocates some in place */
}

static void rt_got_write(const struct rt_got_slot *s, uint64_t v)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)s->slot;
	int ro = a >= s->ro_lo && a < s->ro_hi;
	if (ro)
		mprotect((void *)(a & ~(page - 1)), page, PROT_READ | PROT_WRITE);
	__atomic_store_n(s->slot, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)(a & ~(page - 1)), page, PROT_READ);
}

static int rt_got_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_addr == rt_self_base || (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso")))
		return 0;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t relsz = 0, relasz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	uintptr_t ro_lo = 0, ro_hi = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_RELRO) {
			ro_lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
			ro_hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + ph->p_vaddr); d->d_tag != DT_NULL; d++)
			switch (d->d_tag) {
			case DT_JMPREL: jmprel = rt_dptr(info->dlpi_addr, d->d_un.d_ptr); break;
			case DT_PLTRELSZ: relsz = d->d_un.d_val; break;
			case DT_RELA: rela = rt_dptr(info->dlpi_addr, d->d_un.d_ptr); break;
			case DT_RELASZ: relasz = d->d_un.d_val; break;
			case DT_SYMTAB: symtab = rt_dptr(info->dlpi_addr, d->d_un.d_ptr); break;
			case DT_STRTAB: strtab = rt_dptr(info->dlpi_addr, d->d_un.d_ptr); break;
			}
	}
	if (!symtab || !strtab)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		const ElfW(Rela) *r = pass ? rela : jmprel;
		size_t n = (pass ? relasz : relsz) / sizeof(ElfW(Rela));
		for (size_t i = 0; r && i < n; i++) {
			unsigned type = ELF64_R_TYPE(r[i].r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			const char *nm = strtab + symtab[ELF64_R_SYM(r[i].r_info)].st_name;
			int is_enter = strcmp(nm, "__cyg_profile_func_enter") == 0;
			if ((!is_enter && strcmp(nm, "__cyg_profile_func_exit") != 0) || rt_nslots == RT_ATTACH_SLOTS)
				continue;
			struct rt_got_slot *s = &rt_slots[rt_nslots++];
			s->slot = (uint64_t *)(info->dlpi_addr + r[i].r_offset);
			s->orig = *s->slot;
			s->ro_lo = ro_lo;
			s->ro_hi = ro_hi;
			rt_got_write(s, (uint64_t)(uintptr_t)(is_enter ? (void *)__cyg_profile_func_enter
								       : (void *)__cyg_profile_func_exit));
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * What stint calls
 * --------------------------------------------------------------------- */

static char rt_settings[8192];

RT_API int stint_attach(const char *settings)
{
	if (strlen(settings) >= sizeof(rt_settings))
		return -1;
	strcpy(rt_settings, settings);
	rt_env_given = rt_settings;
	Dl_info self;
	if (dladdr((void *)stint_attach, &self))
		rt_self_base = (uintptr_t)self.dli_fbase;
	const char *sp = strstr(rt_settings, "STINT_SPOOL=");
	if (sp) {
		sp += 12;
		rt_read_frames(sp, (size_t)(strchrnul(sp, '\n') - sp));
	}
	if (rt_attach_start() < 0)
		return -2;
	dl_iterate_phdr(rt_got_visit, NULL);
	return rt_nslots ? 0 : -3;
}

RT_API int stint_detach_begin(void)
{
	for (unsigned i = 0; i < rt_nslots; i++)
		rt_got_write(&rt_slots[i], rt_slots[i].orig);
	return 0;
}

RT_API int stint_detach_end(void)
{
	unsigned n = rt_nthreads < RT_ATTACH_THREADS ? rt_nthreads : RT_ATTACH_THREADS;
	static struct rt_thread *list[RT_ATTACH_THREADS]; /* (not on the borrowed thread's stack) */
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		if (rt_threads[i] && rt_threads[i] != &rt_unrecorded)
			list[k++] = rt_threads[i];
	/* a thread stopped inside the runtime's work (in a system call of a
	 * chunk switch, say: its instruction pointer is then in the C
	 * library): stint lets it finish and asks again */
	for (unsigned i = 0; i < k; i++)
		if (rt_busy(list[i]))
			return 1;
	rt_attach_finish(list, k, 1);
	for (unsigned i = 0; i < k; i++)
		munmap(list[i], sizeof(*list[i]));
	/* this thread runs the destructors at dlclose (rt_destructor reads its
	 * state); the others never enter this library again */
	rt_self_p = &rt_unrecorded;
	if (rt_frames)
		munmap(rt_frames, rt_frames_len);
	rt_frames = NULL;
	if (rt_g.count_hdr) /* nothing of the spool stays mapped */
		munmap(rt_g.count_hdr, FMT_SPOOL_HDR_SIZE);
	rt_g.count_hdr = NULL;
	return 0;
}
