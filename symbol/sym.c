/*
 * sym.c - symbolization with elfutils' libdwfl (see symbol.h).
 *
 * The process is rebuilt from its saved maps text with
 * dwfl_linux_proc_maps_report, so the files are opened by path, as they are
 * on disk when `stint record` finishes; the recorder calls this right after
 * the program exits.  Names come from the ELF symbol tables (.symtab, else
 * .dynsym), source lines from DWARF when the module has it, C++ names are
 * demangled with libstdc++'s __cxa_demangle.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbol.h"

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct sym_proc {
	Dwfl *dwfl;
	struct fmt_module *mods;
	uint32_t nmods;
};

static char *sym_debuginfo_path = NULL;
static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &sym_debuginfo_path,
};

char *sym_demangle(const char *name)
{
	if (name[0] == '_' && name[1] == 'Z') {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return strdup(name);
}

/* Collect the executable, file-backed mappings of the maps text, by path. */
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
		if (perms[2] != 'x' || (path[0] != '/' && strcmp(path, "[vdso]") != 0))
			continue;
		uint32_t i;
		for (i = 0; i < sp->nmods; i++)
			if (strcmp(sp->mods[i].path, path) == 0)
				break;
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

static void fill_build_ids(struct sym_proc *sp)
{
	for (uint32_t i = 0; i < sp->nmods; i++) {
		Dwfl_Module *m = dwfl_addrmodule(sp->dwfl, sp->mods[i].start);
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = m ? dwfl_module_build_id(m, &bits, &vaddr) : -1;
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

struct sym_proc *sym_proc_open(const char *maps, size_t len)
{
	struct sym_proc *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	parse_maps(sp, maps, len);
	sp->dwfl = dwfl_begin(&sym_callbacks);
	if (sp->dwfl) {
		FILE *f = fmemopen((void *)maps, len ? len : 1, "r");
		dwfl_report_begin(sp->dwfl);
		if (f && len) {
			dwfl_linux_proc_maps_report(sp->dwfl, f);
		}
		if (f)
			fclose(f);
		dwfl_report_end(sp->dwfl, NULL, NULL);
		fill_build_ids(sp);
	}
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

int sym_proc_line(struct sym_proc *sp, uint64_t addr, const char **file, uint32_t *line)
{
	Dwfl_Module *m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, addr) : NULL;
	Dwfl_Line *l = m ? dwfl_module_getsrc(m, addr) : NULL;
	int ln = 0;
	const char *f = l ? dwfl_lineinfo(l, NULL, &ln, NULL, NULL, NULL) : NULL;
	if (!f)
		return -1;
	*file = f;
	*line = (uint32_t)ln;
	return 0;
}

int sym_proc_lookup(struct sym_proc *sp, uint64_t addr, struct sym_info *out)
{
	memset(out, 0, sizeof(*out));
	out->module = module_index(sp, addr);
	Dwfl_Module *m = sp->dwfl ? dwfl_addrmodule(sp->dwfl, addr) : NULL;
	if (!m)
		return out->module >= 0 ? 0 : -1;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	if (name) {
		out->name = sym_demangle(name);
		out->start = addr - off;
		out->size = sym.st_size;
	}
	const char *file;
	uint32_t line;
	if (sym_proc_line(sp, name ? out->start : addr, &file, &line) == 0) {
		out->file = strdup(file);
		out->line = line;
	}
	return 0;
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
	for (uint32_t i = 0; i < sp->nmods; i++) {
		free(sp->mods[i].path);
		free(sp->mods[i].build_id);
	}
	free(sp->mods);
	free(sp);
}
