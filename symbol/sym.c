/*
 * sym.c - symbolization with elfutils' libdwfl (see symbol.h).
 *
 * The process is rebuilt from its saved maps text with
 * dwfl_linux_proc_maps_report, so the files are opened by path, as they are
 * on disk when `stint record` finishes; the recorder calls this right after
 * the program exits.  Names come from the ELF symbol tables (.symtab, else
 * .dynsym), source lines from DWARF when the module has it, C++ names are
 * demangled with libstdc++'s __cxa_demangle, Rust's with libiberty's
 * rust_demangle (when built with it).
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"
#include "symbol.h"
#include "sym_fde.h"
#include "sym_table.h"

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);
#ifdef STINT_HAVE_IBERTY
#include <libiberty/demangle.h>
#endif

struct sym_unwind_ctx {
	int tid;
	uint64_t regs[ARCH_PERF_NREGS];
	const uint8_t *stack;
	size_t stack_len;
	uint64_t *pcs;
	int n, max;
	int ran_out; /* the unwinder wanted memory past the end of the copy */
	int bogus;   /* it gave a return address no code can have */
	int full;    /* frames were left when pcs was full */
	const struct sym_exec_ranges *exec; /* where a return address can point */
};

/* The process's executable mappings, file-backed or not (JIT code), sorted. */
struct sym_exec_ranges {
	struct {
		uint64_t start, end;
	} *r;
	size_t n, cap;
};

/* A module's PLT stubs, named NAME@plt (run-time addresses). */
struct sym_plt {
	int loaded;
	struct sym_plt_entry {
		uint64_t addr, size;
		char *name;
	} *e;
	size_t n;
};

/*
 * The functions of one compilation unit by address range, so that finding
 * the function holding an address does not walk the unit's DIEs each time
 * (a large unit has thousands of them, and a run thousands of addresses).
 */
struct sym_cu_index {
	const void *cu;          /* the unit's DIE (Dwarf_Die.addr) */
	struct sym_cu_range {
		Dwarf_Addr lo, hi;
		Dwarf_Die die;   /* a DW_TAG_subprogram */
	} *e;
	size_t n, cap;
};

/*
 * A module's compilation units by address range, for modules without
 * .debug_aranges (clang emits none unless -gdwarf-aranges), where libdw
 * 0.188's dwfl_module_addrdie finds no unit: no line, no inlined frame, no
 * declaration for any address of a clang build, where perf has them.
 */
struct sym_units {
	Dwfl_Module *m;
	struct sym_unit_range {
		Dwarf_Addr lo, hi;
		Dwarf_Die cu;
		Dwarf_Addr bias;
	} *e;
	size_t n;
};

struct sym_proc {
	Dwfl *dwfl;
	struct fmt_module *mods;
	uint32_t nmods;
	struct sym_plt *plt;     /* per module, read on first use */
	struct sym_cu_index *cus; /* units whose inline chains were looked up */
	struct {
		struct sym_table *table;
		int read;
	} *tables;               /* per module without a build ID, on first use */
	size_t ncus;
	struct sym_units *units; /* modules whose units were indexed (no .debug_aranges) */
	size_t nunits;
	int attached;            /* dwfl_attach_state done */
	struct sym_unwind_ctx u; /* the stack being unwound */
	struct sym_exec_ranges exec;
	char path_buf[8192];     /* sym_proc_line's joined path, until its next call */
};

/*
 * Separate debug files (Debian's *-dbg and *-dbgsym packages) keep their
 * DWARF sections compressed, and libdw inflates every one of them when a
 * module's DWARF is first wanted: in each process, because each process
 * has a Dwfl of its own (its modules at its own addresses).  With libc6-dbg
 * installed that was 20-40 ms a process, 80 % of the recorder's time on a
 * script of short commands.  So each compressed debug file is inflated once
 * per run, into an anonymous file (memfd) that every later process's Dwfl
 * reads instead; a file that cannot be copied is used as it is.
 */
struct sym_plain_debug {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd; /* the inflated copy; -1: nothing compressed, or no copy */
};
static struct sym_plain_debug *sym_plain;
static size_t sym_nplain;

/* An anonymous file holding the ELF file in, its compressed sections
 * inflated, or -1 (none compressed, or the copy failed). */
static int inflated_copy(Elf *in)
{
	size_t shnum, shstrndx, phnum;
	GElf_Ehdr eh;
	if (elf_getshdrnum(in, &shnum) || elf_getshdrstrndx(in, &shstrndx) || elf_getphdrnum(in, &phnum) ||
	    shstrndx >= SHN_LORESERVE || shnum >= SHN_LORESERVE || !gelf_getehdr(in, &eh))
		return -1;
	int compressed = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(in, scn));) {
		GElf_Shdr sh;
		compressed |= gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
	}
	if (!compressed)
		return -1;
	int fd = memfd_create("stint-debuginfo", MFD_CLOEXEC);
	Elf *out = fd >= 0 ? elf_begin(fd, ELF_C_WRITE, NULL) : NULL;
	int ok = out && gelf_newehdr(out, gelf_getclass(in)) && (!phnum || gelf_newphdr(out, phnum));
	for (size_t i = 0; ok && i < phnum; i++) {
		GElf_Phdr ph;
		ok = gelf_getphdr(in, (int)i, &ph) && gelf_update_phdr(out, (int)i, &ph);
	}
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(in, scn));) {
		Elf_Scn *o = elf_newscn(out);
		GElf_Shdr sh;
		ok = o && gelf_getshdr(scn, &sh);
		if (ok && (sh.sh_flags & SHF_COMPRESSED))
			ok = elf_compress(scn, 0, 0) >= 0 && gelf_getshdr(scn, &sh);
		for (Elf_Data *d = NULL; ok && (d = elf_getdata(scn, d));) {
			Elf_Data *od = elf_newdata(o);
			if (od)
				*od = *d; /* (its bytes stay in, which outlives the write) */
			ok = od != NULL;
		}
		ok = ok && gelf_update_shdr(o, &sh);
	}
	/* offsets laid out anew: the sections' sizes changed */
	ok = ok && gelf_update_ehdr(out, &eh) && elf_update(out, ELF_C_WRITE) >= 0;
	if (out)
		elf_end(out);
	if (!ok) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The debug file the build ID names in /usr/lib/debug/.build-id (where
 * Debian's packages put them), opened, or -1. */
static int open_by_build_id(Dwfl_Module *mod, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n < 2 || n > 64)
		return -1;
	char path[64 + 2 * 64 + 16], *p = path + sprintf(path, "/usr/lib/debug/.build-id/%02x/", bits[0]);
	for (int i = 1; i < n; i++)
		p += sprintf(p, "%02x", bits[i]);
	strcpy(p, ".debug");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debuginfo_file_name = strdup(path);
	return fd;
}

static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			      const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			      char **debuginfo_file_name)
{
	/* (by build ID ourselves: libdwfl's own search keeps the file it opens
	 * for the check of its build ID, and reads that one whatever fd this
	 * returns) */
	int fd = open_by_build_id(mod, debuginfo_file_name);
	if (fd < 0)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						    debuglink_crc, debuginfo_file_name);
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fd;
	size_t i;
	for (i = 0; i < sym_nplain; i++) {
		const struct sym_plain_debug *k = &sym_plain[i];
		if (k->dev == st.st_dev && k->ino == st.st_ino && k->size == st.st_size &&
		    k->mtime.tv_sec == st.st_mtim.tv_sec && k->mtime.tv_nsec == st.st_mtim.tv_nsec)
			break;
	}
	if (i == sym_nplain) {
		struct sym_plain_debug *v = realloc(sym_plain, (sym_nplain + 1) * sizeof(*v));
		if (!v)
			return fd;
		sym_plain = v;
		Elf *in = elf_begin(fd, ELF_C_READ, NULL);
		v[i] = (struct sym_plain_debug){st.st_dev, st.st_ino, st.st_size, st.st_mtim, in ? inflated_copy(in) : -1};
		if (in)
			elf_end(in);
		sym_nplain++;
	}
	int copy = sym_plain[i].fd >= 0 ? dup(sym_plain[i].fd) : -1;
	if (copy < 0)
		return fd;
	close(fd);
	return copy;
}

/*
 * The vDSO, the kernel's own small library mapped into every process
 * ([vdso] in the maps: clock_gettime, gettimeofday), has no file, and
 * libdwfl's report of the maps skips it: its samples had no function and no
 * call-frame information.  Every process of this kernel maps the same image,
 * stint's too, so it is read from stint's own memory (where
 * AT_SYSINFO_EHDR points, as long as the [vdso] mapping there), once, and
 * given to libdwfl for a [vdso] module of the same size.
 */
static unsigned char *sym_vdso_image;
static size_t sym_vdso_size;

static void sym_vdso_load(void)
{
	static int tried;
	if (tried)
		return;
	tried = 1;
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	FILE *f = base ? fopen("/proc/self/maps", "r") : NULL;
	char line[512];
	size_t size = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2 && a == base)
			size = (size_t)(b - a);
	}
	if (f)
		fclose(f);
	if (!size || !(sym_vdso_image = malloc(size)))
		return;
	memcpy(sym_vdso_image, (const void *)base, size);
	sym_vdso_size = size;
}

static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
			Elf **elfp)
{
	if (strcmp(name, "[vdso]") == 0) {
		Dwarf_Addr start = 0, end = 0;
		dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
		sym_vdso_load();
		if (sym_vdso_image && end - start == sym_vdso_size)
			*elfp = elf_memory((char *)sym_vdso_image, sym_vdso_size);
		return -1;
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

static char *sym_debuginfo_path = NULL;
static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = sym_find_elf,
	.find_debuginfo = sym_find_debuginfo,
	.debuginfo_path = &sym_debuginfo_path,
};

char *sym_demangle(const char *name)
{
#ifdef STINT_HAVE_IBERTY
	/* Rust's: v0 (_R...) and legacy (_ZN...17h<hash>E, which __cxa_demangle
	 * would read as C++, hash and escapes kept); NULL for any other */
	if (name[0] == '_' && (name[1] == 'R' || name[1] == 'Z')) {
		char *r = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		if (r)
			return r;
	}
#endif
	if (name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

/* Add [start, end) to the sorted executable ranges x (no memory: left out,
 * so a return address there ends a stack, as without the check). */
static void add_exec_range(struct sym_exec_ranges *x, uint64_t start, uint64_t end)
{
	if (x->n && x->r[x->n - 1].end == start) { /* sorted maps: join neighbours */
		x->r[x->n - 1].end = end;
		return;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 32;
		void *nr = realloc(x->r, cap * sizeof(*x->r));
		if (!nr)
			return;
		x->r = nr;
		x->cap = cap;
	}
	x->r[x->n].start = start;
	x->r[x->n].end = end;
	x->n++;
}

static int in_exec_range(const struct sym_exec_ranges *x, uint64_t addr)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < x->r[mid].start)
			hi = mid;
		else if (addr >= x->r[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* Collect the executable, file-backed mappings of the maps text, by path
 * (and every executable range, for the unwinder's check of return addresses). */
static void parse_maps(struct sym_proc *sp, const char *maps, size_t len)
{
	const char *p = maps, *end = maps + len;
	uint32_t cap = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4352];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		unsigned long long start, stop, off;
		char perms[8];
		int pathpos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &stop, perms, &off, &pathpos) < 4 ||
		    !pathpos)
			continue;
		const char *path = line + pathpos;
		if (perms[2] == 'x')
			add_exec_range(&sp->exec, start, stop);
		if (perms[2] != 'x' || (path[0] != '/' && strcmp(path, "[vdso]") != 0))
			continue;
		/* a file's mappings make one module; perf's "//anon" (code made
		 * at run time) is no file: each of its mappings is a module of
		 * its own, or one would span every library between two of them
		 * (libc's samples in "anon" with 15 JIT pages around it) */
		uint32_t i = sp->nmods;
		for (uint32_t k = 0; path[1] != '/' && k < sp->nmods; k++)
			if (strcmp(sp->mods[k].path, path) == 0) {
				i = k;
				break;
			}
		/* (the file mapped again at another bias, as V8 maps node's
		 * builtins: a module of its own, named by its first's symbols,
		 * locate(); one spanning both held every library between) */
		if (i < sp->nmods && start - off != sp->mods[i].start - sp->mods[i].offset) {
			for (uint32_t k = i + 1; k < sp->nmods; k++)
				if (strcmp(sp->mods[k].path, path) == 0 &&
				    start - off == sp->mods[k].start - sp->mods[k].offset) {
					i = k;
					break;
				}
			if (start - off != sp->mods[i].start - sp->mods[i].offset)
				i = sp->nmods;
		}
		if (i < sp->nmods) {
			if (start < sp->mods[i].start)
				sp->mods[i].start = start;
			if (stop > sp->mods[i].end)
				sp->mods[i].end = stop;
			continue;
		}
		if (sp->nmods == cap) {
			cap = cap ? cap * 2 : 16;
			struct fmt_module *nm = realloc(sp->mods, cap * sizeof(*nm));
			if (!nm)
				return;
			sp->mods = nm;
		}
		struct fmt_module *m = &sp->mods[sp->nmods++];
		m->start = start;
		m->end = stop;
		m->offset = off;
		m->path = strdup(path);
		m->build_id = strdup("");
	}
}

static int module_index(const struct sym_proc *sp, uint64_t addr);

/*
 * Where libdwfl's module describes the code at addr: the module, and addr
 * in its terms.  A file's code mapped a second time elsewhere (V8 maps
 * node's embedded builtins again, away from node's text) is reported from
 * that mapping alone, its bias taken from where the file's first segment
 * would be, or (a program, ET_EXEC) not at all: no symbol or line matched,
 * and 61 % of node's samples were bare addresses.  The mapping's file
 * offset, through the ELF file's segments, gives the address in the terms
 * of the module (that one, or the file's module where it is mapped first).
 */
struct sym_at {
	Dwfl_Module *dm; /* NULL: none */
	uint64_t addr;   /* in dm's terms */
};

static struct sym_at locate(const struct sym_proc *sp, uint64_t addr)
{
	struct sym_at at = {sp->dwfl ? dwfl_addrmodule(sp->dwfl, addr) : NULL, addr};
	int i = module_index(sp, addr);
	if (i < 0 || !sp->dwfl || sp->mods[i].path[0] != '/')
		return at;
	for (int k = 0; !at.dm && k < (int)sp->nmods; k++)
		if (k != i && strcmp(sp->mods[k].path, sp->mods[i].path) == 0)
			at.dm = dwfl_addrmodule(sp->dwfl, sp->mods[k].start);
	GElf_Addr bias;
	Elf *elf = at.dm ? dwfl_module_getelf(at.dm, &bias) : NULL;
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return at;
	uint64_t off = addr - sp->mods[i].start + sp->mods[i].offset;
	for (size_t k = 0; k < n; k++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)k, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			at.addr = bias + ph.p_vaddr + (off - ph.p_offset);
			break;
		}
	}
	return at;
}

static void fill_build_ids(struct sym_proc *sp)
{
	for (uint32_t i = 0; i < sp->nmods; i++) {
		/* (a file's second mapping: its first's module, locate()) */
		Dwfl_Module *m = locate(sp, sp->mods[i].start).dm;
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = m ? dwfl_module_build_id(m, &bits, &vaddr) : -1;
		if (n == 0) { /* reported from the maps: the id is read with the ELF file */
			GElf_Addr bias;
			if (dwfl_module_getelf(m, &bias))
				n = dwfl_module_build_id(m, &bits, &vaddr);
		}
		if (n <= 0)
			continue;
		char *hex = malloc((size_t)n * 2 + 1);
		if (!hex)
			continue;
		for (int k = 0; k < n; k++)
			sprintf(hex + 2 * k, "%02x", bits[k]);
		free(sp->mods[i].build_id);
		sp->mods[i].build_id = hex;
	}
}

static int cmp_line_start(const void *a, const void *b)
{
	unsigned long long x = strtoull(*(char *const *)a, NULL, 16);
	unsigned long long y = strtoull(*(char *const *)b, NULL, 16);
	return x < y ? -1 : x > y;
}

/* libdwfl wants the maps lines in address order, as the kernel gives them;
 * lines rebuilt from perf mmap records come in event order. */
static char *sorted_maps(const char *maps, size_t len, size_t *outlen)
{
	char *copy = malloc(len + 1), *out = malloc(len + 2);
	size_t n = 0, cap = 64;
	char **lines = malloc(cap * sizeof(*lines));
	if (!copy || !out || !lines) {
		free(copy);
		free(out);
		free(lines);
		return NULL;
	}
	memcpy(copy, maps, len);
	copy[len] = 0;
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			cap *= 2;
			char **nl = realloc(lines, cap * sizeof(*lines));
			if (!nl)
				break;
			lines = nl;
		}
		lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), cmp_line_start);
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		/* the same mapping twice (read from /proc at attach, and as an
		 * mmap record made while attaching): once */
		if (i && strcmp(lines[i], lines[i - 1]) == 0)
			continue;
		size_t l = strlen(lines[i]);
		memcpy(out + o, lines[i], l);
		o += l;
		out[o++] = '\n';
	}
	out[o] = 0;
	free(lines);
	free(copy);
	*outlen = o;
	return out;
}

struct sym_proc *sym_proc_open(const char *maps_in, size_t len_in)
{
	struct sym_proc *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	size_t len = 0;
	char *maps = sorted_maps(maps_in, len_in, &len);
	if (!maps) {
		free(sp);
		return NULL;
	}
	parse_maps(sp, maps, len);
	sp->dwfl = dwfl_begin(&sym_callbacks);
	if (sp->dwfl) {
		FILE *f = fmemopen(maps, len ? len : 1, "r");
		dwfl_report_begin(sp->dwfl);
		if (f && len) {
			dwfl_linux_proc_maps_report(sp->dwfl, f);
		}
		for (uint32_t i = 0; i < sp->nmods; i++) /* (sym_find_elf) */
			if (strcmp(sp->mods[i].path, "[vdso]") == 0)
				dwfl_report_module(sp->dwfl, "[vdso]", sp->mods[i].start, sp->mods[i].end);
		if (f)
			fclose(f);
		dwfl_report_end(sp->dwfl, NULL, NULL);
		fill_build_ids(sp);
	}
	free(maps);
	return sp;
}

const struct fmt_module *sym_proc_modules(struct sym_proc *sp, uint32_t *n)
{
	*n = sp->nmods;
	return sp->mods;
}

static int module_index(const struct sym_proc *sp, uint64_t addr)
{
	for (uint32_t i = 0; i < sp->nmods; i++)
		if (addr >= sp->mods[i].start && addr < sp->mods[i].end)
			return (int)i;
	return -1;
}

int sym_proc_module_of(const struct sym_proc *sp, uint64_t addr)
{
	return module_index(sp, addr);
}

/*
 * A source path as the unit names it, made absolute with the unit's
 * compilation directory where it is relative: make-based projects compile
 * "src/hot.c" from their top directory, and the bare "src/hot.c" was found
 * by annotate only when run from there (perf, objdump -S and addr2line
 * join the two).  Into buf (n bytes); f itself when it cannot be joined.
 */
static const char *unit_path(const char *comp_dir, const char *f, char *buf, size_t n)
{
	if (!f || !f[0])
		return f;
	/* a relative compilation directory (Debian's -dbg builds: "./libio",
	 * -fdebug-prefix-map) is joined too, the result tidied as relative;
	 * libdw joined it already to a DWARF 5 unit's files of directory 0
	 * ("./src/a.c"), not to those of its other relative directories
	 * ("../include/util.h", from ./src) */
	size_t cl = comp_dir ? strlen(comp_dir) : 0;
	int joined = f[0] == '/' || !cl || (strncmp(f, comp_dir, cl) == 0 && f[cl] == '/');
	int w = joined ? snprintf(buf, n, "%s", f) : snprintf(buf, n, "%s/%s", comp_dir, f);
	if (w <= 0 || (size_t)w >= n)
		return f;
	util_path_tidy(buf);
	return buf;
}

static int cmp_unit_range(const void *a, const void *b)
{
	const struct sym_unit_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* m's units by their code ranges, made on first use; NULL when out of memory. */
static const struct sym_units *units_of(struct sym_proc *sp, Dwfl_Module *m)
{
	for (size_t i = 0; i < sp->nunits; i++)
		if (sp->units[i].m == m)
			return &sp->units[i];
	struct sym_units *nu = realloc(sp->units, (sp->nunits + 1) * sizeof(*nu));
	if (!nu)
		return NULL;
	sp->units = nu;
	struct sym_units *u = &sp->units[sp->nunits++];
	memset(u, 0, sizeof(*u));
	u->m = m;
	size_t cap = 0;
	Dwarf_Addr bias;
	for (Dwarf_Die *cu = NULL; (cu = dwfl_module_nextcu(m, cu, &bias));) {
		Dwarf_Addr base, lo, hi;
		for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0;) {
			if (lo >= hi)
				continue;
			if (u->n == cap) {
				cap = cap ? cap * 2 : 64;
				struct sym_unit_range *ne = realloc(u->e, cap * sizeof(*ne));
				if (!ne)
					return u;
				u->e = ne;
			}
			u->e[u->n++] = (struct sym_unit_range){lo, hi, *cu, bias};
		}
	}
	if (u->n) /* (a module without DWARF: none) */
		qsort(u->e, u->n, sizeof(*u->e), cmp_unit_range);
	return u;
}

/* The compilation unit of m holding addr (m's terms), its bias in *bias;
 * NULL if none. */
static Dwarf_Die *unit_at(struct sym_proc *sp, Dwfl_Module *m, uint64_t addr, Dwarf_Addr *bias)
{
	if (!m)
		return NULL;
	Dwarf_Die *cu = dwfl_module_addrdie(m, addr, bias);
	if (cu)
		return cu;
	const struct sym_units *u = units_of(sp, m);
	size_t lo = 0, hi = u ? u->n : 0;
	while (lo < hi) { /* the last range starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;
		if (u->e[mid].lo + u->e[mid].bias <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= u->e[lo - 1].hi + u->e[lo - 1].bias)
		return NULL;
	*bias = u->e[lo - 1].bias;
	return &u->e[lo - 1].cu;
}

/* The line of addr, in m's terms. */
static int line_in(struct sym_proc *sp, Dwfl_Module *m, uint64_t addr, const char **file, uint32_t *line)
{
	/* code of no unit (crt1.o's _start, without DWARF) has no line:
	 * libdw gave the last row of the unit before it where that row
	 * shares its address with the end of its sequence (a C++ header's
	 * line on every stack, at 100 %), where addr2line and perf say ?? */
	Dwarf_Addr cbias = 0, base, lo, hi;
	Dwarf_Die *cu = unit_at(sp, m, addr, &cbias);
	if (!cu || (dwarf_ranges(cu, 0, &base, &lo, &hi) > 0 && dwarf_haspc(cu, addr - cbias) <= 0))
		return -1; /* (a unit with no ranges at all is believed) */
	Dwarf_Line *l = dwarf_getsrc_die(cu, addr - cbias);
	int ln = 0;
	const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
	if (!f || dwarf_lineno(l, &ln) != 0)
		return -1;
	Dwarf_Attribute cda;
	*file = unit_path(dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &cda)), f, sp->path_buf,
			  sizeof(sp->path_buf));
	*line = (uint32_t)ln;
	return 0;
}

int sym_proc_line(struct sym_proc *sp, uint64_t addr, const char **file, uint32_t *line)
{
	struct sym_at at = locate(sp, addr);
	return line_in(sp, at.dm, at.addr, file, line);
}

/* ------------------------------------------------------------------------
 * PLT stubs: NAME@plt
 *
 * A call into a shared library goes through a stub in .plt (or .plt.sec
 * with IBT, .plt.got for functions bound at load time) that jumps through
 * a GOT slot; the ELF symbol tables do not name the stubs.  Each stub is
 * named after the dynamic relocation of its slot: the stub's
 * `jmp *disp(%rip)` gives the slot's address, matched against r_offset of
 * .rela.plt/.rela.dyn; a lazy .plt stub of the IBT layout has no such jump,
 * but its `push $index` is the index into .rela.plt.  A slot no relocation
 * names (the first of .plt: the jump into the dynamic linker that binds a
 * lazy stub's function on its first call, or every call under
 * LD_BIND_NOT) is "[plt]", a function of its own size: else the call-frame
 * information's range, which covers the whole section, made every stub
 * after it one nameless function.
 * --------------------------------------------------------------------- */

struct plt_reloc {
	uint64_t offset; /* the GOT slot (ELF address) */
	const char *name;
};

/* Names made here (not in the ELF string tables), freed with the table. */
struct plt_names {
	char **v;
	size_t n;
};

static const char *plt_keep(struct plt_names *k, char *name)
{
	char **nv = name ? realloc(k->v, (k->n + 1) * sizeof(*nv)) : NULL;
	if (!nv) {
		free(name);
		return NULL;
	}
	k->v = nv;
	k->v[k->n++] = name;
	return name;
}

/*
 * The name of an R_X86_64_IRELATIVE slot (no symbol: the addend is the
 * IFUNC resolver, e.g. strlen's in libc): the symbol there, else
 * "*ABS*+0xADDEND" as objdump prints it.
 */
static const char *plt_irelative_name(Dwfl_Module *m, GElf_Addr bias, uint64_t addend, struct plt_names *k)
{
	const char *s = dwfl_module_addrname(m, addend + bias);
	char *n = NULL;
	if (s && *s)
		n = strdup(s);
	else if (asprintf(&n, "*ABS*+0x%llx", (unsigned long long)addend) < 0)
		n = NULL;
	return plt_keep(k, n);
}

static int cmp_plt_reloc(const void *a, const void *b)
{
	const struct plt_reloc *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const char *plt_reloc_name(const struct plt_reloc *r, size_t n, uint64_t slot)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].offset < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && r[lo].offset == slot ? r[lo].name : NULL;
}

/* The relocations of one SHT_RELA section that name a dynamic symbol. */
static void plt_read_relocs(Dwfl_Module *m, GElf_Addr bias, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			    struct plt_reloc **v, size_t *n, size_t *cap, const char ***plt_order, size_t *nplt,
			    int is_plt, struct plt_names *keep)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *rd = elf_getdata(scn, NULL), *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
	if (!rd || !sd || !gelf_getshdr(symscn, &symsh))
		return;
	size_t cnt = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t i = 0; i < cnt; i++) {
		GElf_Rela ra;
		GElf_Sym sym;
		if (!gelf_getrela(rd, (int)i, &ra) || !gelf_getsym(sd, (int)GELF_R_SYM(ra.r_info), &sym))
			continue;
		const char *name = GELF_R_SYM(ra.r_info) ? elf_strptr(elf, symsh.sh_link, sym.st_name) : NULL;
		if (!GELF_R_SYM(ra.r_info) && GELF_R_TYPE(ra.r_info) == R_X86_64_IRELATIVE)
			name = plt_irelative_name(m, bias, (uint64_t)ra.r_addend, keep);
		if (is_plt) {
			const char **no = realloc(*plt_order, (*nplt + 1) * sizeof(*no));
			if (!no)
				return;
			*plt_order = no;
			no[(*nplt)++] = name && *name ? name : NULL;
		}
		if (!name || !*name)
			continue;
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 256;
			struct plt_reloc *nv = realloc(*v, *cap * sizeof(*nv));
			if (!nv)
				return;
			*v = nv;
		}
		(*v)[(*n)++] = (struct plt_reloc){ra.r_offset, name};
	}
}

/* name: the relocation's symbol (shown NAME@plt), or NULL for "[plt]" */
static void plt_add(struct sym_plt *t, uint64_t addr, uint64_t size, const char *name)
{
	struct sym_plt_entry *ne = realloc(t->e, (t->n + 1) * sizeof(*ne));
	if (!ne)
		return;
	t->e = ne;
	char *full = malloc(name ? strlen(name) + 5 : 6);
	if (!full)
		return;
	if (!name) {
		strcpy(full, "[plt]");
	} else {
		strcpy(full, name);
		char *at = strchr(full, '@'); /* a versioned name: foo@GLIBC_2.2.5 */
		if (at && at != full)
			*at = 0;
		strcat(full, "@plt");
	}
	t->e[t->n++] = (struct sym_plt_entry){addr, size, full};
}

static void plt_load(struct sym_plt *t, Dwfl_Module *m)
{
	t->loaded = 1;
	GElf_Addr bias = 0;
	Elf *elf = m ? dwfl_module_getelf(m, &bias) : NULL;
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	struct plt_reloc *rel = NULL;
	size_t nrel = 0, caprel = 0, nplt = 0;
	const char **plt_order = NULL; /* .rela.plt entries in order, for push $index */
	struct plt_names keep = {0};
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && (strcmp(nm, ".rela.plt") == 0 || strcmp(nm, ".rela.dyn") == 0))
			plt_read_relocs(m, bias, elf, scn, &sh, &rel, &nrel, &caprel, &plt_order, &nplt,
					strcmp(nm, ".rela.plt") == 0, &keep);
	}
	qsort(rel, nrel, sizeof(*rel), cmp_plt_reloc);
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		const char *nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!nm || (strcmp(nm, ".plt") != 0 && strcmp(nm, ".plt.sec") != 0 && strcmp(nm, ".plt.got") != 0))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		uint64_t ent = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
		const uint8_t *code = d->d_buf;
		for (uint64_t off = 0; off + ent <= sh.sh_size; off += ent) {
			const char *name = NULL;
			for (uint64_t k = off; k + 6 <= off + ent && !name; k++) {
				if (code[k] == 0xff && code[k + 1] == 0x25) { /* jmp *disp32(%rip) */
					int32_t disp;
					memcpy(&disp, code + k + 2, 4);
					name = plt_reloc_name(rel, nrel, sh.sh_addr + k + 6 + (uint64_t)(int64_t)disp);
					break;
				}
				if (code[k] == 0x68 && strcmp(nm, ".plt") == 0) { /* push $index */
					uint32_t idx;
					memcpy(&idx, code + k + 1, 4);
					if (idx < nplt)
						name = plt_order[idx];
					break;
				}
			}
			plt_add(t, sh.sh_addr + off + bias, ent, name);
		}
	}
	free(rel);
	free(plt_order);
	for (size_t i = 0; i < keep.n; i++)
		free(keep.v[i]);
	free(keep.v);
}

static int cmp_plt_entry(const void *a, const void *b)
{
	const struct sym_plt_entry *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The PLT stub holding addr, by name, or NULL. */
static const struct sym_plt_entry *plt_lookup(struct sym_proc *sp, Dwfl_Module *m, uint64_t addr)
{
	int mi = module_index(sp, addr);
	if (mi < 0)
		return NULL;
	if (!sp->plt) {
		sp->plt = calloc(sp->nmods + 1, sizeof(*sp->plt));
		if (!sp->plt)
			return NULL;
	}
	struct sym_plt *t = &sp->plt[mi];
	if (!t->loaded) {
		plt_load(t, m);
		qsort(t->e, t->n, sizeof(*t->e), cmp_plt_entry);
	}
	size_t lo = 0, hi = t->n; /* the last entry starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < t->e[lo - 1].addr + t->e[lo - 1].size ? &t->e[lo - 1] : NULL;
}

/*
 * What sym_proc_lookup found, kept for the whole run by module (build ID
 * and path) and file offset: dwfl_module_addrinfo reads the whole symbol table for each
 * address, and a recording of a shell script has a hundred processes of
 * the same bash asking for the same functions (pyenv's python3 shim: 79
 * processes, 3 s of the recorder's time before).  A build ID names one
 * file's contents, so the answer is the same in every process; modules
 * without one are looked up each time.
 */
struct sym_memo_entry {
	const char *id; /* interned build ID; NULL: a free slot */
	uint64_t off;   /* the address's file offset */
	char *name, *file;
	uint64_t start_off, size;
	uint32_t line;
};
static struct {
	struct sym_memo_entry *e;
	size_t n, cap; /* cap: a power of two */
	struct sym_memo_module {
		char *key;               /* "<build ID> <path>" */
		struct sym_table *table; /* its symbols by address */
		int table_read;          /* table read (or found unreadable) */
	} *ids;
	size_t nids;
} sym_memo;

/* The module's key: its build ID and path (a file stripped keeps the build
 * ID of the one it was stripped from, and has fewer names). */
static struct sym_memo_module *sym_memo_id(const struct fmt_module *mod)
{
	size_t lb = strlen(mod->build_id), lp = strlen(mod->path);
	for (size_t i = sym_memo.nids; i-- > 0;) {
		const char *k = sym_memo.ids[i].key;
		if (strncmp(k, mod->build_id, lb) == 0 && k[lb] == ' ' && strcmp(k + lb + 1, mod->path) == 0)
			return &sym_memo.ids[i];
	}
	struct sym_memo_module *v = realloc(sym_memo.ids, (sym_memo.nids + 1) * sizeof(*v));
	char *copy = malloc(lb + lp + 2);
	if (v)
		sym_memo.ids = v;
	if (!v || !copy) {
		free(copy);
		return NULL;
	}
	memcpy(copy, mod->build_id, lb);
	copy[lb] = ' ';
	memcpy(copy + lb + 1, mod->path, lp + 1);
	v[sym_memo.nids] = (struct sym_memo_module){.key = copy};
	return &v[sym_memo.nids++];
}

static size_t sym_memo_slot(const struct sym_memo_entry *e, size_t cap, const char *id, uint64_t off)
{
	uint64_t h = (off ^ (uint64_t)(uintptr_t)id) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 32) & (cap - 1);
	while (e[i].id && (e[i].id != id || e[i].off != off))
		i = (i + 1) & (cap - 1);
	return i;
}

static struct sym_memo_entry *sym_memo_find(const char *id, uint64_t off)
{
	if (!sym_memo.cap)
		return NULL;
	struct sym_memo_entry *e = &sym_memo.e[sym_memo_slot(sym_memo.e, sym_memo.cap, id, off)];
	return e->id ? e : NULL;
}

static void sym_memo_add(const char *id, uint64_t off, const struct sym_info *si, uint64_t base)
{
	if (2 * (sym_memo.n + 1) > sym_memo.cap) {
		size_t cap = sym_memo.cap ? 2 * sym_memo.cap : 1024;
		struct sym_memo_entry *e = calloc(cap, sizeof(*e));
		if (!e)
			return;
		for (size_t i = 0; i < sym_memo.cap; i++)
			if (sym_memo.e[i].id)
				e[sym_memo_slot(e, cap, sym_memo.e[i].id, sym_memo.e[i].off)] = sym_memo.e[i];
		free(sym_memo.e);
		sym_memo.e = e;
		sym_memo.cap = cap;
	}
	struct sym_memo_entry *e = &sym_memo.e[sym_memo_slot(sym_memo.e, sym_memo.cap, id, off)];
	e->id = id;
	e->off = off;
	e->name = si->name ? strdup(si->name) : NULL;
	e->file = si->file ? strdup(si->file) : NULL;
	e->start_off = si->start - base;
	e->size = si->size;
	e->line = si->line;
	sym_memo.n++;
}

static int decl_in(struct sym_proc *sp, Dwfl_Module *m, uint64_t addr, const char **file, uint32_t *line);
static void sym_proc_lookup_dwfl(struct sym_proc *sp, Dwfl_Module *m, struct sym_table *table, uint64_t addr,
				 struct sym_info *out);

/* The sorted symbols of module m: kept for the run when the module has a
 * build ID (processes of the same program share it), else for sp. */
static struct sym_table *module_table(struct sym_proc *sp, Dwfl_Module *m, int module, struct sym_memo_module *mm)
{
	if (mm) {
		if (!mm->table_read) {
			mm->table_read = 1;
			mm->table = sym_table_read(m);
		}
		return mm->table;
	}
	if (module < 0)
		return NULL;
	if (!sp->tables && !(sp->tables = calloc(sp->nmods, sizeof(*sp->tables))))
		return NULL;
	if (!sp->tables[module].read) {
		sp->tables[module].read = 1;
		sp->tables[module].table = sym_table_read(m);
	}
	return sp->tables[module].table;
}

int sym_proc_lookup(struct sym_proc *sp, uint64_t addr, struct sym_info *out)
{
	memset(out, 0, sizeof(*out));
	out->module = module_index(sp, addr);
	const struct fmt_module *mod = out->module >= 0 ? &sp->mods[out->module] : NULL;
	struct sym_memo_module *mm = mod && mod->build_id[0] ? sym_memo_id(mod) : NULL;
	const char *id = mm ? mm->key : NULL;
	uint64_t base = mod ? mod->start - mod->offset : 0; /* address - base: the file offset */
	const struct sym_memo_entry *e = id ? sym_memo_find(id, addr - base) : NULL;
	if (e) {
		out->name = e->name ? strdup(e->name) : NULL;
		out->file = e->file ? strdup(e->file) : NULL;
		out->start = e->start_off + base;
		out->size = e->size;
		out->line = e->line;
		return 0;
	}
	struct sym_at at = locate(sp, addr);
	if (!at.dm)
		return out->module >= 0 ? 0 : -1;
	sym_proc_lookup_dwfl(sp, at.dm, module_table(sp, at.dm, out->module, mm), at.addr, out);
	if (out->name)
		out->start += addr - at.addr; /* (back where the code ran) */
	if (id)
		sym_memo_add(id, addr - base, out, base);
	return 0;
}

/* What libdwfl says of addr in its module m (table: m's sorted symbols,
 * which answer first where they can). */
static void sym_proc_lookup_dwfl(struct sym_proc *sp, Dwfl_Module *m, struct sym_table *table, uint64_t addr,
				 struct sym_info *out)
{
	const char *name;
	uint64_t start, size;
	int found = table ? sym_table_find(table, m, addr, &name, &start, &size) : 0;
	if (found < 0)
		name = NULL;
	else if (found == 0) {
		GElf_Off off = 0;
		GElf_Sym sym;
		name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
		start = addr - off;
		size = sym.st_size;
	}
	if (name) {
		out->name = sym_demangle(name);
		char *at = strstr(out->name, "@@"); /* versioned .symtab names */
		if (!at)
			at = strchr(out->name, '@');
		if (at && at != out->name)
			*at = 0;
		out->start = start;
		out->size = size;
	} else {
		const struct sym_plt_entry *e = plt_lookup(sp, m, addr);
		if (e) {
			out->name = strdup(e->name);
			out->start = e->addr;
			out->size = e->size;
			return;
		}
	}
	const char *file;
	uint32_t line;
	if ((name && decl_in(sp, m, out->start, &file, &line) == 0) ||
	    line_in(sp, m, name ? out->start : addr, &file, &line) == 0) {
		out->file = strdup(file);
		out->line = line;
	}
}

/* The ELF file of the module holding addr, and its load bias; NULL if none. */
static Elf *module_elf_at(struct sym_proc *sp, uint64_t addr, Dwarf_Addr *bias)
{
	Dwfl_Module *m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, addr) : NULL;
	return m ? dwfl_module_getelf(m, bias) : NULL;
}

int sym_proc_code_range(struct sym_proc *sp, uint64_t addr, uint64_t *start, uint64_t *end)
{
	Dwarf_Addr bias;
	Elf *elf = module_elf_at(sp, addr, &bias);
	if (!elf || addr < bias || sym_fde_range(elf, addr - bias, start, end) < 0)
		return -1;
	*start += bias;
	*end += bias;
	return 0;
}

/* ------------------------------------------------------------------------
 * Inlined functions
 * --------------------------------------------------------------------- */

#define SYM_INLINE_MAX 64 /* inline depth kept; deeper chains keep the outer part */

/*
 * Find, below parent, the DIEs whose code holds pc and append the
 * subprogram and inlined-subroutine ones to path, outermost first.
 * Lexical blocks are looked into; so are namespaces and classes, which
 * have no code ranges of their own but hold C++ functions.  Returns 1 when
 * a DIE holding pc was found.  Recursion is bounded by level (DWARF nests a
 * few levels deep; a corrupt file must not run the stack out).
 */
static int inl_walk(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int *n, int level)
{
	Dwarf_Die c;
	if (level > 128 || dwarf_child(parent, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		switch (tag) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&c, pc) > 0) {
				if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
				    *n < SYM_INLINE_MAX + 1)
					path[(*n)++] = c;
				inl_walk(&c, pc, path, n, level + 1);
				return 1;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (inl_walk(&c, pc, path, n, level + 1))
				return 1;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int lang_cxx(int lang)
{
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 || lang == DW_LANG_C_plus_plus_11 ||
	       lang == DW_LANG_C_plus_plus_14;
}

static int lang_c(int lang)
{
	return lang == DW_LANG_C || lang == DW_LANG_C89 || lang == DW_LANG_C99 || lang == DW_LANG_C11;
}

/*
 * A DIE's function name, as the symbol tables would give it: a C++ or Rust
 * linkage name demangled (with its parameters, like the demangled symbols),
 * any other language's linkage name as it is (Fortran's module procedures,
 * __heavy_MOD_work_a); else the source name (a C linkage name is an asm
 * label, such as glibc's __GI_ aliases, which would split one function
 * into two rows).  Rust's v0 names (_R) and Fortran's were the bare source
 * names: inlined copies one row, the out-of-line function another.
 */
static char *inl_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *ln = NULL;
	if (dwarf_attr_integrate(d, DW_AT_linkage_name, &a) || dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a))
		ln = dwarf_formstring(&a);
	if (ln && ln[0] == '_' && (ln[1] == 'Z' || ln[1] == 'R'))
		return sym_demangle(ln);
	Dwarf_Die cu;
	int lang = ln && dwarf_diecu(d, &cu, NULL, NULL) ? dwarf_srclang(&cu) : -1;
	if (ln && *ln && lang != -1 && !lang_c(lang) && !lang_cxx(lang))
		return strdup(ln);
	const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_name, &a));
	return strdup(n ? n : ln ? ln : "[inlined]");
}

static struct sym_cu_index *cu_index(struct sym_proc *sp, Dwarf_Die *cu);

/* Whether a C++ function name carries its parameters ("f(int)", not "f"
 * nor a lambda's bare "operator()"). */
static int has_params(const char *name)
{
	const char *op = strstr(name, "operator()");
	return strchr(op ? op + 10 : name, '(') != NULL;
}

/*
 * d's name within the scopes that declare it, for a C++ function with no
 * linkage name and no out-of-line copy: a lambda's operator() inlined into
 * the function that made it was "operator()", one row for every such
 * lambda of the program; now "run_lambda::{lambda@12}::operator()" (the
 * line that makes it).
 * NULL if d has no enclosing scope with a name.
 */
static char *scoped_name(Dwarf_Die *d, const char *name)
{
	Dwarf_Attribute a;
	Dwarf_Die decl = *d, next, *scopes = NULL;
	for (int hop = 0; hop < 4; hop++) { /* origin, then specification: the declaration */
		if ((dwarf_attr(&decl, DW_AT_abstract_origin, &a) || dwarf_attr(&decl, DW_AT_specification, &a)) &&
		    dwarf_formref_die(&a, &next))
			decl = next;
		else
			break;
	}
	int n = dwarf_getscopes_die(&decl, &scopes);
	char buf[1024], lambda[48];
	size_t len = 0;
	/* from the innermost function out that has a linkage name: its
	 * demangled name says its namespaces and classes (ns::S::m(int)),
	 * which the scopes of its definition's unit do not */
	int from = n - 1;
	char *outer = NULL;
	for (int i = 1; i < n && !outer; i++) {
		Dwarf_Attribute la;
		const char *ln = NULL;
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram &&
		    (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &la) ||
		     dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &la)))
			ln = dwarf_formstring(&la);
		if (ln && ln[0] == '_' && ln[1] == 'Z' && (outer = sym_demangle(ln)) != NULL)
			from = i - 1;
	}
	if (outer)
		len = (size_t)snprintf(buf, sizeof(buf), "%s::", outer);
	free(outer);
	for (int i = from; i >= 1 && len < sizeof(buf); i--) {
		const char *part = NULL;
		int dl = 0;
		switch (dwarf_tag(&scopes[i])) {
		case DW_TAG_namespace:
			part = dwarf_diename(&scopes[i]);
			if (!part)
				part = "(anonymous namespace)";
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
			/* (GCC's lambda closure types have no name) */
			part = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &a));
			if (!part) { /* (two lambdas of one function: by the place that makes them) */
				int dc = 0;
				if (dwarf_decl_line(&scopes[i], &dl) == 0 && dl > 0 &&
				    dwarf_decl_column(&scopes[i], &dc) == 0 && dc > 0)
					snprintf(lambda, sizeof(lambda), "{lambda@%d:%d}", dl, dc);
				else if (dl > 0)
					snprintf(lambda, sizeof(lambda), "{lambda@%d}", dl);
				else
					snprintf(lambda, sizeof(lambda), "{lambda}");
				part = lambda;
			}
			break;
		case DW_TAG_union_type:
		case DW_TAG_subprogram:
			part = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &a));
			break;
		default:
			break;
		}
		if (part)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s::", part);
	}
	free(scopes);
	if (!len || len >= sizeof(buf))
		return NULL;
	char *full = NULL;
	return asprintf(&full, "%s%s", buf, name) < 0 ? NULL : full;
}

/*
 * The name of the out-of-line copy of the function inlined at d, as its
 * symbol demangles ("mix(unsigned long, unsigned long)"), or NULL.  GCC
 * gives a static or anonymous-namespace C++ function no linkage name in
 * DWARF, so its inlined copies were "mix" and its out-of-line one (named by
 * the symbol table) "mix(unsigned long, unsigned long)": one function in
 * two rows, callers picking one of them.  The copy is the unit's function
 * whose abstract origin is d's.
 */
static char *out_of_line_name(struct sym_proc *sp, Dwfl_Module *m, Dwarf_Addr bias, Dwarf_Die *cu, Dwarf_Die *d)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;
	/* (C names have no parameters to add) */
	if (!lang_cxx(dwarf_srclang(cu)) || !dwarf_attr(d, DW_AT_abstract_origin, &a) ||
	    !dwarf_formref_die(&a, &origin))
		return NULL;
	Dwarf_Off want = dwarf_dieoffset(&origin);
	const struct sym_cu_index *x = cu_index(sp, cu);
	for (size_t i = 0; x && i < x->n; i++) {
		Dwarf_Die c = x->e[i].die, o;
		int same = dwarf_dieoffset(&c) == want ||
			   (dwarf_attr(&c, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &o) &&
			    dwarf_dieoffset(&o) == want);
		if (!same)
			continue;
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(m, x->e[i].lo + bias, &off, &sym, NULL, NULL, NULL);
		if (!name || off != 0 || name[0] != '_' || name[1] != 'Z')
			return NULL;
		char *full = sym_demangle(name);
		if (full && !strchr(full, '(')) {
			free(full);
			return NULL;
		}
		return full;
	}
	return NULL;
}

static int cmp_cu_range(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Add the code ranges of the functions below parent (namespaces, classes and
 * the functions nested in functions included). */
static void cu_index_add(struct sym_cu_index *x, Dwarf_Die *parent, int level)
{
	Dwarf_Die c;
	if (level > 64 || dwarf_child(parent, &c) != 0)
		return;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram: {
			Dwarf_Addr base, lo, hi;
			for (ptrdiff_t off = 0; (off = dwarf_ranges(&c, off, &base, &lo, &hi)) > 0;) {
				if (x->n == x->cap) {
					x->cap = x->cap ? x->cap * 2 : 256;
					struct sym_cu_range *ne = realloc(x->e, x->cap * sizeof(*ne));
					if (!ne)
						return;
					x->e = ne;
				}
				x->e[x->n++] = (struct sym_cu_range){lo, hi, c};
			}
			/* functions GCC nests in the one they come from: an OpenMP
			 * region's outlined body (main._omp_fn.0), a lambda's
			 * operator() (in its class, in the function), a nested C
			 * function; their own code, unfound, had no inlined frames */
			cu_index_add(x, &c, level + 1);
			break;
		}
		case DW_TAG_lexical_block:
			cu_index_add(x, &c, level + 1);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			cu_index_add(x, &c, level + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* The index of cu's functions by code range, made on first use; NULL
 * when out of memory. */
static struct sym_cu_index *cu_index(struct sym_proc *sp, Dwarf_Die *cu)
{
	struct sym_cu_index *x = NULL;
	for (size_t i = sp->ncus; i-- > 0 && !x;)
		if (sp->cus[i].cu == cu->addr)
			x = &sp->cus[i];
	if (!x) {
		struct sym_cu_index *nc = realloc(sp->cus, (sp->ncus + 1) * sizeof(*nc));
		if (!nc)
			return NULL;
		sp->cus = nc;
		x = &sp->cus[sp->ncus++];
		memset(x, 0, sizeof(*x));
		x->cu = cu->addr;
		cu_index_add(x, cu, 0);
		qsort(x->e, x->n, sizeof(*x->e), cmp_cu_range);
	}
	return x;
}

/* The subprogram of cu whose code holds pc, from the unit's index; NULL if none. */
static Dwarf_Die *cu_function_at(struct sym_proc *sp, Dwarf_Die *cu, Dwarf_Addr pc)
{
	struct sym_cu_index *x = cu_index(sp, cu);
	if (!x)
		return NULL;
	size_t lo = 0, hi = x->n;
	while (lo < hi) { /* the last range starting at or below pc */
		size_t mid = lo + (hi - lo) / 2;
		if (x->e[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < x->e[lo - 1].hi ? &x->e[lo - 1].die : NULL;
}

/*
 * The unit holding the DIEs of cu's code: with -gsplit-dwarf the unit in
 * the program is a skeleton (its lines, no functions), and its functions
 * are in the split unit (.dwo) libdw found beside it; without the split
 * unit, or for any other unit, cu itself.
 */
static Dwarf_Die *unit_code(Dwarf_Die *cu, Dwarf_Die *buf)
{
	uint8_t type = 0;
	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, buf, NULL, NULL, NULL) == 0 && type == DW_UT_skeleton &&
	    buf->addr)
		return buf;
	return cu;
}

/* A unit's compilation directory, from the skeleton where the split unit has none. */
static const char *unit_comp_dir(Dwarf_Die *code, Dwarf_Die *cu)
{
	Dwarf_Attribute a;
	const char *d = dwarf_formstring(dwarf_attr(code, DW_AT_comp_dir, &a));
	return d ? d : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
}

/*
 * The file d is declared in (DW_AT_decl_file, through its abstract origin
 * or specification), joined with the compilation directory of the unit
 * that attribute is in: with LTO the unit holding the code is another one
 * (of another directory), and the name was joined to the wrong directory,
 * a file that does not exist, one function in two rows.  Index 0 too:
 * DWARF 5's primary file, which clang names the unit's own functions by
 * and libdw 0.188's dwarf_decl_file refuses.  Into buf; NULL if none.
 */
static const char *decl_file_of(Dwarf_Die *d, char *buf, size_t n)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu, other;
	Dwarf_Files *files;
	size_t nfiles;
	if (!dwarf_attr_integrate(d, DW_AT_decl_file, &a) || dwarf_formudata(&a, &idx) != 0 ||
	    !dwarf_cu_die(a.cu, &cu, NULL, NULL, NULL, NULL, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	/* (a split unit's directory is its skeleton's) */
	int skel = dwarf_cu_info(a.cu, NULL, NULL, NULL, &other, NULL, NULL, NULL) == 0 && other.addr;
	return unit_path(unit_comp_dir(&cu, skel ? &other : &cu), dwarf_filesrc(files, idx, NULL, NULL), buf, n);
}

/*
 * Where the function starting at addr (in m's terms) is defined, from its
 * DWARF declaration: the place its inlined copies give too (inl_name's
 * callers), so that two static functions of one name in two files stay
 * two functions and one function is one, wherever its first instruction's
 * line row points (an inlined callee's header, at -O2).
 */
static int decl_in(struct sym_proc *sp, Dwfl_Module *m, uint64_t addr, const char **file, uint32_t *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = unit_at(sp, m, addr, &bias), split;
	Dwarf_Die *code = cu ? unit_code(cu, &split) : NULL;
	Dwarf_Die *fn = code ? cu_function_at(sp, code, addr - bias) : NULL;
	int dl = 0;
	const char *df = fn ? decl_file_of(fn, sp->path_buf, sizeof(sp->path_buf)) : NULL;
	if (!df || !*df || dwarf_decl_line(fn, &dl) != 0 || dl <= 0)
		return -1;
	*file = df;
	*line = (uint32_t)dl;
	return 0;
}

uint32_t sym_proc_inlines(struct sym_proc *sp, uint64_t addr, struct sym_inline **out)
{
	*out = NULL;
	struct sym_at at = locate(sp, addr);
	Dwfl_Module *m = at.dm;
	addr = at.addr;
	Dwarf_Addr bias = 0;
	Dwarf_Die *skel = unit_at(sp, m, addr, &bias), split;
	if (!skel)
		return 0;
	Dwarf_Die *cu = unit_code(skel, &split);
	Dwarf_Die path[SYM_INLINE_MAX + 1];
	int n = 0;
	Dwarf_Die *fn = cu_function_at(sp, cu, addr - bias);
	if (fn) { /* the function holding the code, then what was inlined in it */
		path[n++] = *fn;
		inl_walk(fn, addr - bias, path, &n, 1);
	} else { /* (a function nested in another: look through the whole unit) */
		inl_walk(cu, addr - bias, path, &n, 0);
	}
	/* path[0] is the function holding the code; the rest were inlined */
	int first = n > 0 && dwarf_tag(&path[0]) == DW_TAG_subprogram ? 1 : 0;
	if (n - first <= 0)
		return 0;
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	const char *comp_dir = unit_comp_dir(cu, skel);
	char joined[8192];
	struct sym_inline *v = calloc((size_t)(n - first), sizeof(*v));
	if (!v)
		return 0;
	uint32_t k = 0;
	for (int i = first; i < n; i++, k++) {
		Dwarf_Die *d = &path[i];
		Dwarf_Attribute a;
		Dwarf_Word w = 0;
		v[k].name = inl_name(d);
		if (!has_params(v[k].name) && lang_cxx(dwarf_srclang(cu))) { /* a C++ name without its parameters */
			char *full = out_of_line_name(sp, m, bias, cu, d);
			if (!full && strstr(v[k].name, "operator()"))
				full = scoped_name(d, v[k].name);
			if (full) {
				free(v[k].name);
				v[k].name = full;
			}
		}
		const char *df = decl_file_of(d, joined, sizeof(joined));
		v[k].file = strdup(df ? df : "");
		int dl = 0;
		if (dwarf_decl_line(d, &dl) == 0)
			v[k].line = (uint32_t)dl;
		const char *cf = NULL;
		if (files && dwarf_formudata(dwarf_attr(d, DW_AT_call_file, &a), &w) == 0 && w < nfiles)
			cf = unit_path(comp_dir, dwarf_filesrc(files, w, NULL, NULL), joined, sizeof(joined));
		v[k].call_file = strdup(cf ? cf : "");
		if (dwarf_formudata(dwarf_attr(d, DW_AT_call_line, &a), &w) == 0)
			v[k].call_line = (uint32_t)w;
	}
	*out = v;
	return k;
}

void sym_inline_free(struct sym_inline *v, uint32_t n)
{
	for (uint32_t k = 0; v && k < n; k++) {
		free(v[k].name);
		free(v[k].file);
		free(v[k].call_file);
	}
	free(v);
}

void sym_info_free(struct sym_info *si)
{
	free(si->name);
	free(si->file);
	memset(si, 0, sizeof(*si));
}

void sym_proc_close(struct sym_proc *sp)
{
	if (!sp)
		return;
	if (sp->dwfl)
		dwfl_end(sp->dwfl);
	for (uint32_t i = 0; sp->plt && i < sp->nmods; i++) {
		for (size_t k = 0; k < sp->plt[i].n; k++)
			free(sp->plt[i].e[k].name);
		free(sp->plt[i].e);
	}
	free(sp->plt);
	for (uint32_t i = 0; sp->tables && i < sp->nmods; i++)
		sym_table_free(sp->tables[i].table);
	free(sp->tables);
	for (size_t i = 0; i < sp->ncus; i++)
		free(sp->cus[i].e);
	free(sp->cus);
	for (size_t i = 0; i < sp->nunits; i++)
		free(sp->units[i].e);
	free(sp->units);
	for (uint32_t i = 0; i < sp->nmods; i++) {
		free(sp->mods[i].path);
		free(sp->mods[i].build_id);
	}
	free(sp->mods);
	free(sp->exec.r);
	free(sp);
}

/* ------------------------------------------------------------------------
 * Unwinding sampled stacks
 * --------------------------------------------------------------------- */

static pid_t unw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	struct sym_unwind_ctx *u = arg;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool unw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	struct sym_unwind_ctx *u = arg;
	uint64_t sp = u->regs[ARCH_PERF_REG_SP];
	if (addr < sp || addr + 8 > sp + u->stack_len || addr + 8 < addr) {
		/* above the copy, by no more than a stack's size: the caller's
		 * frames are there, but were not copied (libdwfl then takes the
		 * frame for the outermost one, without an error) */
		if (addr >= sp && addr + 8 > sp + u->stack_len && addr - sp < (64u << 20))
			u->ran_out = 1;
		return false;
	}
	memcpy(result, u->stack + (addr - sp), 8);
	return true;
}

static bool unw_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct sym_unwind_ctx *u = thread_arg;
	Dwarf_Word d[ARCH_DWARF_NREGS];
	arch_perf_to_dwarf(u->regs, d); /* perf's order to DWARF's */
	return dwfl_thread_state_registers(thread, 0, ARCH_DWARF_NREGS, d);
}

static const Dwfl_Thread_Callbacks unw_callbacks = {
	.next_thread = unw_next_thread,
	.get_thread = unw_get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_initial_registers,
};

static int unw_frame(Dwfl_Frame *state, void *arg)
{
	struct sym_unwind_ctx *u = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->n > 0 && pc == 0)
		return DWARF_CB_ABORT;
	if (u->n >= u->max) {
		u->full = 1;
		return DWARF_CB_ABORT;
	}
	/* the first page is never mapped: a return address there is the
	 * unwinder reading what is not one (through _Unwind_RaiseException's
	 * frames: 0x3e7 [unknown] as the outermost frame) */
	if (u->n > 0 && pc < 4096) {
		u->bogus = 1;
		return DWARF_CB_ABORT;
	}
	/* Nor is a return address outside every executable mapping: where a
	 * function has no call-frame information (hand-written assembly, as
	 * x264's), libdwfl falls back to the frame pointer, and in code that
	 * does not keep one it reads whatever %rbp points at (0x1010101010101010
	 * [unknown] as a caller).  The stack ends at the last real frame. */
	if (u->n > 0 && u->exec && u->exec->n && !in_exec_range(u->exec, pc - 1)) {
		u->bogus = 1;
		return DWARF_CB_ABORT;
	}
	u->pcs[u->n++] = pc;
	return DWARF_CB_OK;
}

/* Whether pc lies in the first bytes of its module's entry point: the
 * dynamic loader's _start and _dl_start_user, hand-written without
 * call-frame information, where the unwinder stops with an error; nothing
 * calls them, so a stack that ends there is whole (a process's first
 * milliseconds, in ld.so, and the constructors it calls through _dl_init,
 * whose return address is 48 bytes past the entry in glibc 2.36). */
static int at_entry_point(struct sym_proc *sp, uint64_t pc)
{
	Dwarf_Addr bias;
	Elf *e = module_elf_at(sp, pc, &bias);
	GElf_Ehdr eh;
	return e && gelf_getehdr(e, &eh) && eh.e_entry && pc - bias >= eh.e_entry && pc - bias < eh.e_entry + 64;
}

/* Whether the code at pc has call-frame information (.eh_frame or
 * .debug_frame): without it the unwinder cannot go past the frame. */
static int has_cfi(struct sym_proc *sp, uint64_t pc)
{
	Dwfl_Module *m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, pc) : NULL;
	if (!m)
		return 0;
	Dwarf_Addr bias;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(m, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
		free(frame);
		return 1;
	}
	cfi = dwfl_module_dwarf_cfi(m, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
		free(frame);
		return 1;
	}
	return 0;
}

int sym_proc_unwind(struct sym_proc *sp, int tid, const uint64_t regs[ARCH_PERF_NREGS], const uint8_t *stack,
		    size_t stack_len, uint64_t *pcs, int max, int *truncated)
{
	struct sym_unwind_ctx *u = &sp->u;
	u->tid = tid > 0 ? tid : 1;
	memcpy(u->regs, regs, sizeof(u->regs));
	u->stack = stack;
	u->stack_len = stack_len;
	u->pcs = pcs;
	u->n = 0;
	u->max = max;
	u->ran_out = 0;
	u->bogus = 0;
	u->full = 0;
	u->exec = &sp->exec;
	*truncated = 0;
	if (!sp->dwfl || max <= 0)
		goto fallback;
	if (!sp->attached) {
		if (!dwfl_attach_state(sp->dwfl, NULL, u->tid, &unw_callbacks, u))
			goto fallback;
		sp->attached = 1;
	}
	int rc = dwfl_getthread_frames(sp->dwfl, u->tid, unw_frame, u);
	if (rc != 0 && u->n < max) {
		/* stopped early: an outermost frame ends with pc 0 or no CFI;
		 * anything else (the stack copy ran out) is a cut */
		int e = dwfl_errno();
		if (e != 0 && !(u->n > 1 && at_entry_point(sp, u->pcs[u->n - 1])))
			*truncated = 1;
		if (getenv("STINT_DEBUG_UNWIND"))
			fprintf(stderr, "unwind: %d frames, rc %d: %s\n", u->n, rc, dwfl_errmsg(e));
	}
	if (u->ran_out && u->n < max)
		*truncated |= 2;
	if (u->bogus || u->full)
		*truncated |= 1; /* (a stack deeper than pcs holds: its outer frames are cut) */
	if ((*truncated & 1) && u->n > 0 && !has_cfi(sp, u->pcs[u->n - 1] - (u->n > 1)))
		*truncated |= 4;
	if (u->n > 0)
		return u->n;
fallback:
	pcs[0] = regs[ARCH_PERF_REG_IP];
	*truncated = 1;
	return max > 0 ? 1 : 0;
}
