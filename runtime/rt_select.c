/*
 * rt_select.c - record-time selection in libstint-rt.so: which probe
 * events are written (`stint record --function, --not-function, --module,
 * --depth, --min-duration`; doc/stint-record.md, "Selecting what is
 * recorded").
 *
 * The recorder passes the selection in STINT_SELECT, one item a line:
 * "f<glob>" (--function), "n<glob>" (--not-function), "m<glob>" (--module),
 * "d<N>" (--depth), "t<ticks>" (--min-duration, in the clock's ticks).
 *
 * By name and module: every loaded module's symbols are read once (at
 * start-up and after each dlopen, outside the probes) and each function
 * address gets its decision; a module keeps, sorted, only the addresses
 * whose decision differs from the module's default (most modules: none).
 * A probe looks the decision up in a per-thread direct-mapped cache first.
 * An unselected function's events are dropped: its time stays in its
 * caller's, as if it had been inlined.
 *
 * --depth N: entries of selected functions while N selected frames are
 * open are not written; those hidden frames are kept on a per-thread stack
 * so that their exits are recognised (and a longjmp past them too).
 *
 * --min-duration T: an entry is held back, with its time and switch count,
 * on a per-thread stack of pending frames.  At every event of the thread
 * the pending frames that have lasted T by now are written, oldest first,
 * at their own times; an exit of a pending frame drops it (it lasted less
 * than T) and nothing is written, so the next record's delta covers it and
 * its time is its caller's (exclusive).  The pending frames are always the
 * innermost ones and nothing else is ever held back, so the memory is
 * bounded by the nesting and the spool only ever holds records that are
 * final: a crash or SIGKILL leaves a valid spool (the pending frames are
 * then simply absent).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_elf.h"
#include "rt_int.h"
#include "rt_select.h"
#include "rt_file.h"

#define RT_SEL_PATS 64       /* patterns of each kind */
#define RT_SEL_MODS 1024     /* modules remembered */
#define RT_SEL_CACHE 1024    /* per-thread decision cache (a power of 2) */
#define RT_SEL_PEND 1024     /* calls held back per thread (--min-duration) */
#define RT_SEL_HIDDEN 1024   /* frames below --depth remembered per thread (a power of 2) */

int rt_sel_on;

static char rt_sel_spec[8192]; /* STINT_SELECT, its lines split in place */
static const char *rt_sel_fn[RT_SEL_PATS], *rt_sel_not[RT_SEL_PATS], *rt_sel_mod[RT_SEL_PATS];
static unsigned rt_sel_nfn, rt_sel_nnot, rt_sel_nmod;
static int rt_sel_by_name;        /* any of the three */
static uint32_t rt_sel_depth;     /* 0: no limit */
static uint64_t rt_sel_min;       /* ticks; 0: no minimum */
static uintptr_t rt_sel_self_lo, rt_sel_self_len; /* this library: its calibration yardsticks */

struct rt_sel_mod {
	uintptr_t base, lo, hi;
	int modok;      /* --module selects it (or there is no --module) */
	int dflt;       /* decision for the module's functions not in exc */
	uint64_t *exc;  /* sorted function addresses decided the other way */
	size_t nexc;
};
static struct rt_sel_mod rt_sel_mods[RT_SEL_MODS];
static unsigned rt_sel_nmods; /* published with release: entries below are complete */
static pthread_mutex_t rt_sel_lock = PTHREAD_MUTEX_INITIALIZER;

struct rt_sel_pend {
	uint64_t fn, site, t, sw;
};

struct rt_sel_thread {
	int busy;                /* inside this file: a signal handler's events are dropped */
	uint32_t first, npend;   /* pending calls: pend[first..npend), innermost last */
	uint32_t hidden;         /* frames below --depth, also beyond RT_SEL_HIDDEN */
	uint64_t ckey[RT_SEL_CACHE];
	uint8_t cval[RT_SEL_CACHE]; /* 1 unselected, 2 selected */
	uint64_t hstack[RT_SEL_HIDDEN];
	struct rt_sel_pend pend[RT_SEL_PEND];
};
/* mapped at the thread's first selection decision (rt_thread_block): not
 * in static TLS, which glibc takes from every thread's stack */
static __thread struct rt_sel_thread *rt_st_p __attribute__((tls_model("initial-exec")));

static struct rt_sel_thread *rt_st_get(void)
{
	struct rt_sel_thread *s = rt_st_p;
	return RT_LIKELY(s != NULL) ? s : rt_thread_block((void **)&rt_st_p, sizeof(*s));
}


/* ------------------------------------------------------------------------
 * Names
 * --------------------------------------------------------------------- */

/* fnmatch(3) without flags: '*', '?', '[...]' ('!' or '^' negates, ranges),
 * '\' quotes; no malloc (glibc's may allocate in multibyte locales). */
static int rt_sel_glob(const char *p, const char *s)
{
	const char *star_p = NULL, *star_s = NULL;
	for (;;) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			if (!*p)
				return 1;
			star_p = p;
			star_s = s;
			continue;
		}
		if (!*s) {
			if (!*p)
				return 1;
			goto backtrack;
		}
		if (*p == '?') {
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *q = p + 1;
			int neg = *q == '!' || *q == '^', hit = 0;
			if (neg)
				q++;
			const char *start = q;
			while (*q && (*q != ']' || q == start)) {
				unsigned char lo = (unsigned char)*q, hi = lo;
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hi = (unsigned char)q[2];
					q += 2;
				}
				if ((unsigned char)*s >= lo && (unsigned char)*s <= hi)
					hit = 1;
				q++;
			}
			if (*q != ']') { /* no closing bracket: a plain '[' */
				if (*s != '[')
					goto backtrack;
				p++;
				s++;
				continue;
			}
			if (hit == neg)
				goto backtrack;
			p = q + 1;
			s++;
			continue;
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p == *s) {
			p++;
			s++;
			continue;
		}
	backtrack:
		if (!star_p || !*star_s)
			return 0;
		p = star_p;
		s = ++star_s;
	}
}

int rt_sel_match(const char *pattern, const char *name)
{
	return rt_sel_glob(pattern, name) || strstr(name, pattern) != NULL;
}

/* <length><identifier> at *pp, appended to out; 0 when not one */
static int rt_sel_source_name(const char **pp, char *out, unsigned *n, unsigned outlen, const char **last,
			      unsigned *lastlen)
{
	const char *p = *pp;
	unsigned len = 0;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9' && len < 100000)
		len = len * 10 + (unsigned)(*p++ - '0');
	if (strnlen(p, len) < len || *n + len + 1 >= outlen)
		return 0;
	memcpy(out + *n, p, len);
	*last = p;
	*lastlen = len;
	*n += len;
	out[*n] = 0;
	*pp = p + len;
	return 1;
}

int rt_sel_plain_name(const char *m, char *out, unsigned outlen)
{
	if (strncmp(m, "_Z", 2) != 0 || outlen < 2)
		return 0;
	const char *p = m + 2, *last = NULL;
	unsigned n = 0, lastlen = 0;
	out[0] = 0;
	if (*p == 'L')
		p++; /* internal linkage */
	if (*p != 'N') {
		if (strncmp(p, "St", 2) == 0) {
			memcpy(out, "std::", 6);
			n = 5;
			p += 2;
		}
		return rt_sel_source_name(&p, out, &n, outlen, &last, &lastlen);
	}
	p++;
	while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O')
		p++;
	int parts = 0;
	while (*p && *p != 'E') {
		if (parts && n + 2 < outlen) {
			out[n++] = ':';
			out[n++] = ':';
			out[n] = 0;
		}
		if (strncmp(p, "St", 2) == 0 && !parts) {
			if (n + 4 >= outlen)
				return 0;
			memcpy(out + n, "std", 4);
			n += 3;
			p += 2;
			parts++;
			continue;
		}
		if (*p == 'C' && p[1] >= '1' && p[1] <= '5' && last) { /* constructor */
			if (n + lastlen + 1 >= outlen)
				return 0;
			memcpy(out + n, last, lastlen);
			n += lastlen;
			out[n] = 0;
			p += 2;
		} else if (*p == 'D' && p[1] >= '0' && p[1] <= '5' && last) { /* destructor */
			if (n + lastlen + 2 >= outlen)
				return 0;
			out[n++] = '~';
			memcpy(out + n, last, lastlen);
			n += lastlen;
			out[n] = 0;
			p += 2;
		} else if (!rt_sel_source_name(&p, out, &n, outlen, &last, &lastlen)) {
			return 0; /* templates, substitutions, operators: too complex */
		}
		while (*p == 'B') { /* ABI tags: [abi:cxx11] is no part of the name */
			const char *l2;
			unsigned ll2, save = n;
			p++;
			if (!rt_sel_source_name(&p, out, &n, outlen, &l2, &ll2))
				return 0;
			n = save;
			out[n] = 0;
		}
		parts++;
	}
	return *p == 'E' && parts > 0;
}

/* ------------------------------------------------------------------------
 * Modules and their functions' decisions
 * --------------------------------------------------------------------- */

static const char *rt_sel_basename(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int rt_sel_any(const char *const *pats, unsigned n, const char *name, const char *plain)
{
	for (unsigned i = 0; i < n; i++)
		if (rt_sel_match(pats[i], name) || (plain && rt_sel_match(pats[i], plain)))
			return 1;
	return 0;
}

/* Heap sort of n addresses, each with a flag byte in the low bits of a
 * parallel array (no qsort: glibc's may call malloc). */
static void rt_sel_sort(uint64_t *a, uint8_t *f, size_t n)
{
	for (size_t k = n; k-- > 0;) /* build */
		for (size_t i = k;;) {
			size_t c = 2 * i + 1;
			if (c >= n)
				break;
			if (c + 1 < n && a[c + 1] > a[c])
				c++;
			if (a[c] <= a[i])
				break;
			uint64_t x = a[c]; a[c] = a[i]; a[i] = x;
			uint8_t y = f[c]; f[c] = f[i]; f[i] = y;
			i = c;
		}
	for (size_t end = n; end-- > 1;) {
		uint64_t x = a[0]; a[0] = a[end]; a[end] = x;
		uint8_t y = f[0]; f[0] = f[end]; f[end] = y;
		for (size_t i = 0;;) {
			size_t c = 2 * i + 1;
			if (c >= end)
				break;
			if (c + 1 < end && a[c + 1] > a[c])
				c++;
			if (a[c] <= a[i])
				break;
			x = a[c]; a[c] = a[i]; a[i] = x;
			y = f[c]; f[c] = f[i]; f[i] = y;
			i = c;
		}
	}
}

#define RT_SEL_F_FN 1  /* a name of the address matches --function */
#define RT_SEL_F_NOT 2 /* ... --not-function */

/*
 * A function without a symbol, named as the report names it, by the file
 * offset of its first byte ("0x4290", a stripped program's): the address
 * that offset is loaded at in module base, or 0 if pat is no such name.
 */
static uint64_t rt_sel_offset_addr(const uint8_t *f, size_t fsz, uint64_t base, const char *pat)
{
	if (pat[0] != '0' || pat[1] != 'x' || !pat[2] || strlen(pat) > 18)
		return 0;
	uint64_t off = 0;
	for (const char *p = pat + 2; *p; p++) {
		int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
		if (d < 0)
			return 0;
		off = off << 4 | (uint64_t)d;
	}
	const ElfW(Ehdr) *eh = (const void *)f;
	if (eh->e_phoff > fsz || eh->e_phnum > (fsz - eh->e_phoff) / sizeof(ElfW(Phdr)))
		return 0;
	const ElfW(Phdr) *ph = (const void *)(f + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && off >= ph[i].p_offset &&
		    off - ph[i].p_offset < ph[i].p_filesz)
			return base + ph[i].p_vaddr + (off - ph[i].p_offset);
	return 0;
}

/*
 * Read the function symbols of the module's file (.symtab, else .dynsym)
 * and keep the addresses decided against the module's default; the
 * functions --function or --not-function name by file offset too.
 */
static void rt_sel_read_symbols(struct rt_sel_mod *m, const char *path)
{
	size_t fsz;
	const uint8_t *f = rt_map_elf(path, &fsz);
	if (!f)
		return;
	const ElfW(Ehdr) *eh = (const void *)f;
	const ElfW(Shdr) *sh = (const void *)(f + eh->e_shoff);
	const ElfW(Shdr) *tab = NULL;
	for (unsigned s = 0; s < eh->e_shnum; s++)
		if (sh[s].sh_type == SHT_SYMTAB || (sh[s].sh_type == SHT_DYNSYM && !tab))
			tab = &sh[s];
	if (tab && (tab->sh_link >= eh->e_shnum || tab->sh_offset + tab->sh_size > fsz ||
		    sh[tab->sh_link].sh_offset + sh[tab->sh_link].sh_size > fsz))
		tab = NULL; /* (offsets may still name functions) */
	const ElfW(Sym) *sym = tab ? (const void *)(f + tab->sh_offset) : NULL;
	size_t nsym = tab ? tab->sh_size / sizeof(ElfW(Sym)) : 0;
	const char *strs = tab ? (const char *)f + sh[tab->sh_link].sh_offset : NULL;
	size_t strsz = tab ? sh[tab->sh_link].sh_size : 0;
	size_t cap = nsym + rt_sel_nfn + rt_sel_nnot + 1;
	uint64_t *addr = rt_mem_grow(NULL, 0, cap * 8);
	uint8_t *flags = rt_mem_grow(NULL, 0, cap);
	size_t n = 0;
	char plain[512];
	for (size_t i = 0; addr && flags && i < nsym; i++) {
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
		    !sym[i].st_value || sym[i].st_name >= strsz)
			continue;
		const char *name = strs + sym[i].st_name;
		if (!memchr(name, 0, strsz - sym[i].st_name))
			continue;
		const char *pl = rt_sel_plain_name(name, plain, sizeof(plain)) ? plain : NULL;
		uint8_t fl = (uint8_t)((rt_sel_any(rt_sel_fn, rt_sel_nfn, name, pl) ? RT_SEL_F_FN : 0) |
				       (rt_sel_any(rt_sel_not, rt_sel_nnot, name, pl) ? RT_SEL_F_NOT : 0));
		addr[n] = m->base + sym[i].st_value;
		flags[n++] = fl;
	}
	for (unsigned k = 0; addr && flags && k < rt_sel_nfn + rt_sel_nnot; k++) {
		int is_fn = k < rt_sel_nfn;
		uint64_t a = rt_sel_offset_addr(f, fsz, m->base, is_fn ? rt_sel_fn[k] : rt_sel_not[k - rt_sel_nfn]);
		if (a) {
			addr[n] = a;
			flags[n++] = is_fn ? RT_SEL_F_FN : RT_SEL_F_NOT;
		}
	}
	rt_unmap_elf(f, fsz);
	if (!addr || !flags) {
		if (addr)
			munmap(addr, cap * 8);
		if (flags)
			munmap(flags, cap);
		return;
	}
	rt_sel_sort(addr, flags, n);
	/* aliases: one address, the flags of all its names; then only the
	 * addresses decided against the default stay */
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		uint8_t fl = 0;
		size_t j = i;
		for (; j < n && addr[j] == addr[i]; j++)
			fl |= flags[j];
		/* (read only for modules --module selects) */
		int want = (!rt_sel_nfn || (fl & RT_SEL_F_FN)) && !(fl & RT_SEL_F_NOT);
		if (want != m->dflt)
			addr[k++] = addr[i];
		i = j;
	}
	munmap(flags, cap);
	m->exc = addr;
	m->nexc = k;
}

static int rt_sel_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi <= lo)
		return 0;
	unsigned n = rt_sel_nmods;
	for (unsigned i = 0; i < n; i++)
		if (rt_sel_mods[i].lo == lo && rt_sel_mods[i].hi == hi && rt_sel_mods[i].base == info->dlpi_addr)
			return 0;
	if (n >= RT_SEL_MODS)
		return 0;
	const char *name = info->dlpi_name;
	if (name && strstr(name, "linux-vdso"))
		return 0;
	char exe[4096];
	const char *path = name;
	if (!name || !*name) {
		ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[l > 0 ? l : 0] = 0;
		name = exe;
		path = "/proc/self/exe";
	}
	struct rt_sel_mod *m = &rt_sel_mods[n];
	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	m->lo = lo;
	m->hi = hi;
	if (rt_sel_self_lo && !rt_sel_self_len && info->dlpi_addr == rt_sel_self_lo) {
		rt_sel_self_lo = lo;
		rt_sel_self_len = hi - lo;
	}
	int modok = !rt_sel_nmod;
	for (unsigned i = 0; i < rt_sel_nmod; i++)
		if (rt_sel_match(rt_sel_mod[i], rt_sel_basename(name)))
			modok = 1;
	/* a module that --module leaves out: every function unselected, no
	 * need to read its symbols */
	m->modok = modok;
	m->dflt = modok && !rt_sel_nfn;
	if (modok && (rt_sel_nfn || rt_sel_nnot))
		rt_sel_read_symbols(m, path);
	__atomic_store_n(&rt_sel_nmods, n + 1, __ATOMIC_RELEASE);
	return 0;
}

static void rt_sel_scan(void)
{
	pthread_mutex_lock(&rt_sel_lock);
	dl_iterate_phdr(rt_sel_visit, NULL);
	pthread_mutex_unlock(&rt_sel_lock);
}

/* (from a probe: a signal handler's probe may interrupt a scan, so never wait) */
static int rt_sel_scan_try(void)
{
	if (pthread_mutex_trylock(&rt_sel_lock) != 0)
		return -1;
	dl_iterate_phdr(rt_sel_visit, NULL);
	pthread_mutex_unlock(&rt_sel_lock);
	return 0;
}

static const struct rt_sel_mod *rt_sel_find(uint64_t fn)
{
	unsigned n = __atomic_load_n(&rt_sel_nmods, __ATOMIC_ACQUIRE);
	for (unsigned i = n; i-- > 0;) /* newest first: a module loaded where one was unloaded */
		if (fn >= rt_sel_mods[i].lo && fn < rt_sel_mods[i].hi)
			return &rt_sel_mods[i];
	return NULL;
}

/*
 * Library functions probed at their calls (rt_plt_got.c) are decided by the
 * name the program calls them by: where a call lands may have no name of
 * its own (glibc's memset is an IFUNC, and the choice it made, such as
 * __memset_avx2_unaligned_erms, is not among the library's dynamic
 * symbols) or several (memcpy and memmove land in one function; the
 * runtime gives each name a function address of its own).  Open
 * addressing; an entry's decision is written before its address.
 */
#define RT_SEL_LIBS 16384 /* a power of 2 */
static struct rt_sel_lib {
	uint64_t fn;
	uint8_t want;
} rt_sel_libs[RT_SEL_LIBS];

static struct rt_sel_lib *rt_sel_lib_slot(uint64_t fn)
{
	unsigned i = (unsigned)((fn * 0x9E3779B97F4A7C15ull) >> 50) & (RT_SEL_LIBS - 1);
	for (unsigned n = 0; n < RT_SEL_LIBS; n++, i = (i + 1) & (RT_SEL_LIBS - 1)) {
		uint64_t k = __atomic_load_n(&rt_sel_libs[i].fn, __ATOMIC_ACQUIRE);
		if (k == fn || !k)
			return &rt_sel_libs[i];
	}
	return NULL;
}

void rt_sel_lib_name(uint64_t fn, uint64_t target, const char *name)
{
	if (!rt_sel_by_name || !fn)
		return;
	const struct rt_sel_mod *m = rt_sel_find(target);
	if (!m) {
		rt_sel_scan();
		m = rt_sel_find(target);
	}
	char plain[512];
	const char *pl = rt_sel_plain_name(name, plain, sizeof(plain)) ? plain : NULL;
	int want = (m ? m->modok : !rt_sel_nmod) && (!rt_sel_nfn || rt_sel_any(rt_sel_fn, rt_sel_nfn, name, pl)) &&
		   !rt_sel_any(rt_sel_not, rt_sel_nnot, name, pl);
	struct rt_sel_lib *e = rt_sel_lib_slot(fn);
	if (!e)
		return;
	e->want = (uint8_t)want;
	__atomic_store_n(&e->fn, fn, __ATOMIC_RELEASE);
}

static int rt_sel_decide(uint64_t fn)
{
	const struct rt_sel_lib *lib = rt_sel_lib_slot(fn);
	if (lib && __atomic_load_n(&lib->fn, __ATOMIC_ACQUIRE) == fn)
		return lib->want;
	const struct rt_sel_mod *m = rt_sel_find(fn);
	if (!m) { /* loaded since (a dlopen'ed library's constructors run before dlopen returns) */
		if (rt_sel_scan_try() == 0)
			m = rt_sel_find(fn);
	}
	if (!m)
		return !rt_sel_nfn && !rt_sel_nmod;
	size_t lo = 0, hi = m->nexc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->exc[mid] < fn)
			lo = mid + 1;
		else
			hi = mid;
	}
	int exc = lo < m->nexc && m->exc[lo] == fn;
	return m->dflt ^ exc;
}

/* rt_sel_decide from a probe: it may scan the loaded modules (the C
 * library), so the program's vector registers are kept (rt.c) */
__attribute__((noinline)) static int rt_sel_decide_kept(uint64_t fn)
{
	int want;
	struct rt_thread *t = &rt_self;
	RT_VEC_KEEP(t, want = rt_sel_decide(fn));
	return want;
}

static inline int rt_sel_cached(struct rt_sel_thread *s, uint64_t fn)
{
	unsigned i = (unsigned)((fn * 0x9E3779B97F4A7C15ull) >> 54) & (RT_SEL_CACHE - 1);
	if (RT_LIKELY(s->ckey[i] == fn && s->cval[i]))
		return s->cval[i] == 2;
	int want = rt_sel_decide_kept(fn);
	/* in this order: a signal handler reading the slot meanwhile finds
	 * no value and decides for itself */
	s->cval[i] = 0;
	__asm__ volatile("" ::: "memory");
	s->ckey[i] = fn;
	__asm__ volatile("" ::: "memory");
	s->cval[i] = (uint8_t)(want ? 2 : 1);
	return want;
}

int rt_sel_want(uint64_t fn)
{
	if (!rt_sel_on || !rt_sel_by_name)
		return 1;
	return rt_sel_decide(fn);
}

/* ------------------------------------------------------------------------
 * Start-up
 * --------------------------------------------------------------------- */

void rt_sel_init(void)
{
	const char *v = getenv(FMT_ENV_SELECT);
	if (!v || !*v || strlen(v) >= sizeof(rt_sel_spec))
		return;
	strcpy(rt_sel_spec, v);
	rt_sel_nfn = rt_sel_nnot = rt_sel_nmod = 0; /* (the unit tests set up several) */
	rt_sel_depth = 0;
	rt_sel_min = 0;
	for (char *line = rt_sel_spec; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char kind = line[0];
		const char *val = line + 1;
		if (kind == 'f' && *val && rt_sel_nfn < RT_SEL_PATS)
			rt_sel_fn[rt_sel_nfn++] = val;
		else if (kind == 'n' && *val && rt_sel_nnot < RT_SEL_PATS)
			rt_sel_not[rt_sel_nnot++] = val;
		else if (kind == 'm' && *val && rt_sel_nmod < RT_SEL_PATS)
			rt_sel_mod[rt_sel_nmod++] = val;
		else if (kind == 'd')
			rt_sel_depth = (uint32_t)strtoul(val, NULL, 10);
		else if (kind == 't')
			rt_sel_min = strtoull(val, NULL, 10);
		line = nl ? nl + 1 : NULL;
	}
	rt_sel_by_name = rt_sel_nfn || rt_sel_nnot || rt_sel_nmod;
	if (!rt_sel_by_name && !rt_sel_depth && !rt_sel_min)
		return;
	Dl_info self;
	if (dladdr((void *)rt_sel_init, &self))
		rt_sel_self_lo = (uintptr_t)self.dli_fbase; /* made a range by rt_sel_visit */
	rt_sel_scan();
	rt_sel_on = 1;
	RT_GUARD(rt_self.gate, rt_self.gate & ~RT_GATE_LEAN); /* a thread that recorded before: from now on through rt_probe */
}

void rt_sel_after_dlopen(void)
{
	if (rt_sel_on)
		rt_sel_scan();
}

/* ------------------------------------------------------------------------
 * The events
 * --------------------------------------------------------------------- */

/* Write the pending calls that have lasted rt_sel_min by now, oldest first. */
static void rt_sel_commit(struct rt_thread *t, struct rt_sel_thread *s, uint64_t now)
{
	while (s->first < s->npend && now >= s->pend[s->first].t && now - s->pend[s->first].t >= rt_sel_min) {
		struct rt_sel_pend *p = &s->pend[s->first++];
		rt_probe_held(t, p->fn, p->site, p->t, p->sw);
	}
	if (s->first == s->npend)
		s->first = s->npend = 0;
}

static int rt_sel_enter(struct rt_thread *t, struct rt_sel_thread *s, uint64_t fn, uint64_t site,
			uint64_t now, uint64_t sw)
{
	if (rt_sel_min)
		rt_sel_commit(t, s, now);
	if (rt_sel_depth && (s->hidden || t->depth + (s->npend - s->first) >= rt_sel_depth)) {
		s->hstack[s->hidden++ & (RT_SEL_HIDDEN - 1)] = fn;
		return 1;
	}
	if (!rt_sel_min)
		return 0;
	if (s->npend == RT_SEL_PEND) {
		if (s->first) { /* room at the bottom */
			/* a loop, not memmove: no call out of the runtime (rt.c, RT_VEC_KEEP) */
			for (uint32_t i = s->first; i < s->npend; i++)
				s->pend[i - s->first] = s->pend[i];
			s->npend -= s->first;
			s->first = 0;
		} else { /* as deep as that in less than T: the outermost is written early */
			struct rt_sel_pend *p = &s->pend[s->first++];
			rt_probe_held(t, p->fn, p->site, p->t, p->sw);
			return rt_sel_enter(t, s, fn, site, now, sw);
		}
	}
	struct rt_sel_pend *p = &s->pend[s->npend];
	p->fn = fn;
	p->site = site;
	p->t = now;
	p->sw = sw;
	s->npend++;
	return 1;
}

static int rt_sel_exit(struct rt_thread *t, struct rt_sel_thread *s, uint64_t fn, uint64_t now)
{
	if (rt_sel_min)
		rt_sel_commit(t, s, now);
	uint32_t h = s->hidden;
	if (h) {
		uint32_t lim = h > RT_SEL_HIDDEN ? h - RT_SEL_HIDDEN : 0;
		for (uint32_t j = h; j-- > lim;)
			if (s->hstack[j & (RT_SEL_HIDDEN - 1)] == fn) {
				s->hidden = j; /* and the ones above it, which a longjmp left */
				return 1;
			}
		if (h > RT_SEL_HIDDEN) { /* beyond what is remembered: the innermost */
			s->hidden = h - 1;
			return 1;
		}
		s->hidden = 0; /* a written frame exits: the hidden ones were left */
	}
	if (!rt_sel_min)
		return 0;
	for (uint32_t i = s->npend; i-- > s->first;)
		if (s->pend[i].fn == fn) {
			/* shorter than T: dropped, with the calls a longjmp left */
			s->npend = i;
			if (s->npend == s->first)
				s->first = s->npend = 0;
			return 1;
		}
	s->first = s->npend = 0; /* a written frame exits: the pending ones were left */
	return 0;
}

int rt_sel_skip(uint64_t fn)
{
	if (!rt_sel_by_name || fn - rt_sel_self_lo < rt_sel_self_len)
		return 0; /* (the calibration's yardsticks are always measured) */
	struct rt_sel_thread *s = rt_st_get();
	return s ? !rt_sel_cached(s, fn) : !rt_sel_decide_kept(fn);
}

int rt_sel_event(struct rt_thread *t, int is_exit, uint64_t fn, uint64_t site, uint64_t now, uint64_t sw)
{
	if (!(rt_sel_depth || rt_sel_min) || fn - rt_sel_self_lo < rt_sel_self_len)
		return 0;
	struct rt_sel_thread *s = rt_st_get();
	if (!s || s->busy)
		return 1; /* a signal handler interrupted this code: its calls are its caller's */
	RT_GUARD(s->busy, 1);
	int r = is_exit ? rt_sel_exit(t, s, fn, now) : rt_sel_enter(t, s, fn, site, now, sw);
	RT_GUARD(s->busy, 0);
	return r;
}

void rt_sel_vfork(int child)
{
	struct rt_sel_thread *s = rt_st_p;
	if (rt_sel_on && (rt_sel_depth || rt_sel_min) && s)
		RT_GUARD(s->busy, child);
}

void rt_sel_thread_end(struct rt_thread *t)
{
	struct rt_sel_thread *s = rt_st_p;
	if (!rt_sel_on || !rt_sel_min || !s || s->busy || t->state != RT_ACTIVE)
		return;
	RT_GUARD(s->busy, 1);
	rt_sel_commit(t, s, rt_now());
	RT_GUARD(s->busy, 0);
}

void rt_sel_thread_unmap(void)
{
	struct rt_sel_thread *s = rt_st_p;
	if (!s || s->busy || rt_g.no_syscalls)
		return;
	rt_st_p = NULL;
	munmap(s, sizeof(*s));
}
