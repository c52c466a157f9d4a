/*
 * rec_patch.c - which functions of a program not built with
 * -finstrument-functions the runtime can instrument at load, through the
 * patch sites compilers leave on purpose (runtime/rt_patch.c does the
 * patching; this only reads the file, so that stint record can accept the
 * program and the report can say what is covered).
 *
 * A function is counted as instrumented when its first instruction (after
 * an endbr64) is one of:
 *   - call *GOT(%rip) or a call to a PLT stub, the GOT slot being the one of
 *     __fentry__ (-pg -mfentry: the preloaded runtime defines __fentry__);
 *   - five bytes of NOPs listed in __patchable_function_entries or
 *     __mcount_loc (-fpatchable-function-entry=N with N >= 5, -mnop-mcount).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "recorder.h"
#include "../lib/util.h"

struct rp_text {
	uint64_t addr, size;
	Elf_Data *data;
};

struct rp_scan {
	struct rp_text text[16];
	unsigned ntext;
	uint64_t *got;      /* GOT slots of __fentry__ */
	size_t ngot;
	uint64_t *listed;   /* addresses in __patchable_function_entries / __mcount_loc */
	size_t nlisted;
};

static const uint8_t *rp_bytes(const struct rp_scan *s, uint64_t addr, size_t len)
{
	for (unsigned i = 0; i < s->ntext; i++) {
		const struct rp_text *t = &s->text[i];
		if (addr >= t->addr && addr + len <= t->addr + t->size && t->data && t->data->d_buf &&
		    addr - t->addr + len <= t->data->d_size)
			return (const uint8_t *)t->data->d_buf + (addr - t->addr);
	}
	return NULL;
}

static int rp_is_fentry_got(const struct rp_scan *s, uint64_t slot)
{
	for (size_t i = 0; i < s->ngot; i++)
		if (s->got[i] == slot)
			return 1;
	return 0;
}

static int rp_listed(const struct rp_scan *s, uint64_t a)
{
	for (size_t i = 0; i < s->nlisted; i++)
		if (s->listed[i] == a)
			return 1;
	return 0;
}

static int32_t rp_i32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* A PLT stub at addr jumping through a GOT slot of __fentry__. */
static int rp_fentry_plt(const struct rp_scan *s, uint64_t addr)
{
	const uint8_t *p = rp_bytes(s, addr, 11);
	if (!p)
		return 0;
	uint64_t a = addr;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) /* endbr64 */
		p += 4, a += 4;
	if (p[0] == 0xf2) /* bnd */
		p++, a++;
	return p[0] == 0xff && p[1] == 0x25 && rp_is_fentry_got(s, a + 6 + (uint64_t)(int64_t)rp_i32(p + 2));
}

/* Whether the function at addr starts with a patch site the runtime uses. */
static int rp_has_site(const struct rp_scan *s, uint64_t addr)
{
	const uint8_t *p = rp_bytes(s, addr, 5);
	if (!p)
		return 0;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) {
		addr += 4;
		if (!(p = rp_bytes(s, addr, 5)))
			return 0;
	}
	if (p[0] == 0xff && p[1] == 0x15 && rp_bytes(s, addr, 6))
		return rp_is_fentry_got(s, addr + 6 + (uint64_t)(int64_t)rp_i32(p + 2));
	if (p[0] == 0xe8)
		return rp_fentry_plt(s, addr + 5 + (uint64_t)(int64_t)rp_i32(p + 1));
	static const uint8_t nopl[4] = {0x0f, 0x1f, 0x44, 0x00}; /* (any disp8: LLVM's is 8) */
	if (memcmp(p, nopl, 4) == 0 || memcmp(p, "\x90\x90\x90\x90\x90", 5) == 0)
		return rp_listed(s, addr);
	return 0;
}

static void rp_add(uint64_t **v, size_t *n, uint64_t x)
{
	UTIL_GROW1(*v, *n);
	(*v)[(*n)++] = x;
}

static int rp_cmp_addr(const void *a, const void *b)
{
	const GElf_Sym *x = a, *y = b;
	return x->st_value < y->st_value ? -1 : x->st_value > y->st_value;
}

int rec_patch_scan(const char *path, struct rec_patch_info *out)
{
	memset(out, 0, sizeof(*out));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	struct rp_scan s;
	memset(&s, 0, sizeof(s));
	size_t shstr;
	elf_getshdrstrndx(e, &shstr);
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr symsh;
	memset(&symsh, 0, sizeof(symsh));
	int have_symtab = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *nm = elf_strptr(e, shstr, sh.sh_name);
		if (!nm)
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS && s.ntext < 16) {
			s.text[s.ntext].addr = sh.sh_addr;
			s.text[s.ntext].size = sh.sh_size;
			s.text[s.ntext].data = elf_getdata(scn, NULL);
			s.ntext++;
		}
		if ((strcmp(nm, "__patchable_function_entries") == 0 || strcmp(nm, "__mcount_loc") == 0) &&
		    sh.sh_type == SHT_PROGBITS) {
			Elf_Data *d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && d->d_buf && (i + 1) * 8 <= d->d_size; i++) {
				uint64_t a;
				memcpy(&a, (const char *)d->d_buf + i * 8, 8);
				rp_add(&s.listed, &s.nlisted, a);
			}
		}
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !have_symtab)) {
			symscn = scn;
			symsh = sh;
			have_symtab |= sh.sh_type == SHT_SYMTAB;
		}
	}
	/* the GOT slots of __fentry__, and whether mcount is imported */
	scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		Elf_Scn *ss = elf_getscn(e, sh.sh_link);
		GElf_Shdr ssh;
		if (!ss || !gelf_getshdr(ss, &ssh))
			continue;
		Elf_Data *rd = elf_getdata(scn, NULL), *sd = elf_getdata(ss, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; rd && sd && i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			if (!gelf_getrela(rd, (int)i, &r) || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			const char *nm = elf_strptr(e, ssh.sh_link, sym.st_name);
			if (nm && strcmp(nm, "__fentry__") == 0)
				rp_add(&s.got, &s.ngot, r.r_offset);
			if (nm && (strcmp(nm, "mcount") == 0 || strcmp(nm, "_mcount") == 0))
				out->mcount = 1;
		}
	}
	out->fentry = s.ngot > 0;
	out->patchable = s.nlisted > 0;
	/* the defined functions, once per address */
	GElf_Sym *fns = NULL;
	size_t nfns = 0;
	Elf_Data *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
	size_t n = symscn && symsh.sh_entsize ? symsh.sh_size / symsh.sh_entsize : 0;
	for (size_t i = 0; sd && i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(sd, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size == 0 || !rp_bytes(&s, sym.st_value, 1))
			continue;
		UTIL_GROW1(fns, nfns); /* (doubling: node has 77,000 functions) */
		fns[nfns++] = sym;
	}
	if (nfns)
		qsort(fns, nfns, sizeof(*fns), rp_cmp_addr);
	size_t cap = 0;
	for (size_t i = 0; i < nfns; i++) {
		if (i && fns[i].st_value == fns[i - 1].st_value)
			continue;
		out->functions++;
		if (rp_has_site(&s, fns[i].st_value)) {
			out->patched++;
			continue;
		}
		const char *nm = elf_strptr(e, symsh.sh_link, fns[i].st_name);
		if (out->nmissing == cap) {
			cap = cap ? cap * 2 : 16;
			out->missing = xrealloc(out->missing, cap * sizeof(char *));
		}
		out->missing[out->nmissing++] = xstrdup(nm ? nm : "?");
	}
	free(fns);
	free(s.got);
	free(s.listed);
	elf_end(e);
	close(fd);
	return 0;
}

void rec_patch_free(struct rec_patch_info *p)
{
	for (size_t i = 0; i < p->nmissing; i++)
		free(p->missing[i]);
	free(p->missing);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------------
 * Functions without a patch site: the runtime moves their first
 * instructions with Capstone (runtime/rt_patch_cs.c)
 * --------------------------------------------------------------------- */

const char *rec_patch_capstone_missing(void)
{
#ifdef STINT_HAVE_CAPSTONE
	const char *off = getenv("STINT_NO_CAPSTONE"); /* tests: as where it is missing */
	if (off && *off && strcmp(off, "0") != 0)
		return "the Capstone disassembler (libcapstone.so.4) is not installed: install it "
		       "(Debian: libcapstone4)";
	void *h = dlopen("libcapstone.so.4", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return "the Capstone disassembler (libcapstone.so.4) is not installed: install it "
		       "(Debian: libcapstone4)";
	dlclose(h);
	return NULL;
#else
	return "this stint was built without the Capstone disassembler: rebuild it with libcapstone-dev "
	       "installed (scripts/deps.sh)";
#endif
}

/* A note's word: no space, comma or colon. */
static void rp_word(char **w, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 2 > *cap) {
		*cap = (*len + n + 2) * 2;
		*w = xrealloc(*w, *cap);
	}
	for (size_t i = 0; i < n; i++)
		(*w)[(*len)++] = s[i] == ' ' || s[i] == ',' || s[i] == ':' || s[i] == '\t' ? '_' : s[i];
	(*w)[*len] = 0;
}

static int rp_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *rec_patch_notes(const char *dir)
{
	DIR *dh = opendir(dir);
	if (!dh)
		return NULL;
	char **names = NULL;
	size_t nnames = 0;
	struct dirent *de;
	while ((de = readdir(dh))) {
		const char *dot = strstr(de->d_name, ".patch.");
		if (de->d_name[0] != 'p' || !dot || strchr(dot + 7, '.'))
			continue;
		UTIL_GROW1(names, nnames);
		names[nnames++] = xstrdup(de->d_name);
	}
	closedir(dh);
	if (nnames > 1)
		qsort(names, nnames, sizeof(*names), rp_cmp_str);
	char *mods = xstrdup(""), *why = xstrdup("");
	size_t ml = 0, mc = 1, wl = 0, wc = 1;
	char **seen = NULL;
	size_t nseen = 0;
	for (size_t i = 0; i < nnames; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		size_t len = 0;
		char *text = util_read_regular(path, 64u << 20, 1, &len);
		free(path);
		if (!text)
			continue;
		/* "module\tPATH\tN\tM[\tU]\n" (U: left out by the record-time
		 * selection) then "NAME\tREASON\n" lines */
		char *line = text, *nl = strchr(line, '\n');
		if (!nl || strncmp(line, "module\t", 7) != 0) {
			free(text);
			continue;
		}
		*nl = 0;
		char *p = line + 7, *t1 = strchr(p, '\t');
		char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t1 || !t2) {
			free(text);
			continue;
		}
		*t1 = 0;
		int dup = 0; /* the same module in another process: told once */
		for (size_t k = 0; k < nseen && !dup; k++)
			dup = strcmp(seen[k], p) == 0;
		if (dup) {
			free(text);
			continue;
		}
		UTIL_GROW1(seen, nseen);
		seen[nseen++] = xstrdup(p);
		const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
		char *t3 = strchr(t2 + 1, '\t');
		unsigned long long n = strtoull(t1 + 1, NULL, 10), m = strtoull(t2 + 1, NULL, 10);
		unsigned long long u = t3 ? strtoull(t3 + 1, NULL, 10) : 0;
		if (ml) {
			rp_word(&mods, &ml, &mc, "", 0);
			mods[ml++] = ' ';
			mods[ml] = 0;
		}
		rp_word(&mods, &ml, &mc, "patchmod=", 9);
		rp_word(&mods, &ml, &mc, base, strlen(base));
		char nm[64];
		int k = u ? snprintf(nm, sizeof(nm), ":%llu/%llu/%llu", n, m, u) : snprintf(nm, sizeof(nm), ":%llu/%llu", n, m);
		if (ml + (size_t)k + 2 > mc) {
			mc = (ml + (size_t)k + 2) * 2;
			mods = xrealloc(mods, mc);
		}
		memcpy(mods + ml, nm, (size_t)k + 1);
		ml += (size_t)k;
		for (line = nl + 1; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			*nl = 0;
			char *tab = strchr(line, '\t');
			if (!tab)
				continue;
			if (wl) {
				rp_word(&why, &wl, &wc, "", 0);
				why[wl++] = ',';
			} else {
				rp_word(&why, &wl, &wc, "patchwhy=", 9);
			}
			rp_word(&why, &wl, &wc, line, (size_t)(tab - line));
			rp_word(&why, &wl, &wc, "", 0);
			why[wl++] = ':';
			rp_word(&why, &wl, &wc, tab + 1, strlen(tab + 1));
			rp_word(&why, &wl, &wc, "", 0);
			why[wl++] = ':';
			rp_word(&why, &wl, &wc, base, strlen(base));
		}
		free(text);
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	if (!ml) {
		free(mods);
		free(why);
		return NULL;
	}
	char *r = xasprintf("%s%s%s", mods, wl ? " " : "", why);
	free(mods);
	free(why);
	return r;
}
