/*
 * sym_table.c - a module's symbols sorted by address (see sym_table.h).
 *
 * libdwfl picks among the symbols holding an address by rules that have
 * changed between its versions (global before local, which binding wins a
 * tie, whether thread-local and undefined symbols take part).  Where only
 * one symbol holds the address no rule has anything to decide, so that is
 * the case answered here; symbols that share an address range under other
 * names (aliases: malloc and __libc_malloc) ask libdwfl once which name it
 * gives them and keep the answer.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_table.h"

struct sym_table_entry {
	uint64_t start, end; /* relative to the module's low address */
	uint64_t ends_before; /* the largest end of the entries sorted before */
	const char *name;    /* NULL: aliases whose name libdwfl has not given yet */
	uint32_t order;      /* position in the symbol table (sorting ties) */
	uint8_t dubious;     /* a symbol some libdwfl versions skip */
};

struct sym_table {
	struct sym_table_entry *e;
	size_t n;
	uint64_t *sizeless; /* the symbols without a size, sorted */
	size_t nsizeless;
	char *names;        /* every name, one block */
	char **given;       /* names libdwfl gave to aliases (copies) */
	size_t ngiven;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct sym_table_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t module_low(Dwfl_Module *m)
{
	Dwarf_Addr low = 0;
	dwfl_module_info(m, NULL, &low, NULL, NULL, NULL, NULL, NULL);
	return low;
}

/* Entries with the same range become one: its name if they all have the
 * same, else NULL (libdwfl is asked on first use); dubious if any is. */
static size_t merge_same_ranges(struct sym_table_entry *e, size_t n)
{
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		struct sym_table_entry m = e[i];
		for (; j < n && e[j].start == m.start && e[j].end == m.end; j++) {
			if (m.name && strcmp(m.name, e[j].name) != 0)
				m.name = NULL;
			m.dubious |= e[j].dubious;
		}
		e[out++] = m;
		i = j;
	}
	uint64_t top = 0;
	for (size_t i = 0; i < out; i++) {
		e[i].ends_before = top;
		if (e[i].end > top)
			top = e[i].end;
	}
	return out;
}

struct sym_table *sym_table_read(Dwfl_Module *m)
{
	int n = dwfl_module_getsymtab(m);
	if (n <= 1)
		return NULL;
	uint64_t low = module_low(m);
	struct sym_table *t = calloc(1, sizeof(*t));
	struct sym_table_entry *e = t ? malloc((size_t)n * sizeof(*e)) : NULL;
	uint64_t *sizeless = t ? malloc((size_t)n * sizeof(*sizeless)) : NULL;
	size_t nnames = 0;
	for (int pass = 0; pass < 2 && e && sizeless; pass++) {
		/* pass 0 measures the names, pass 1 copies them and fills e */
		size_t ne = 0, ns = 0, at = 0;
		for (int i = 1; i < n; i++) {
			GElf_Sym sym;
			GElf_Addr addr;
			GElf_Word shndx;
			Elf *elf;
			Dwarf_Addr bias;
			const char *name = dwfl_module_getsym_info(m, i, &sym, &addr, &shndx, &elf, &bias);
			int type = GELF_ST_TYPE(sym.st_info);
			if (!name || !name[0] || type == STT_SECTION || type == STT_FILE)
				continue;
			int dubious = sym.st_shndx == SHN_UNDEF || type == STT_TLS;
			if (addr < low) {
				if (sym.st_size == 0 || addr + sym.st_size <= low)
					continue;
				goto unusable; /* would hold addresses of the module from below it */
			}
			if (sym.st_size == 0) {
				if (pass == 1)
					sizeless[ns] = addr - low;
				ns++;
				continue;
			}
			size_t len = strlen(name) + 1;
			if (pass == 1) {
				memcpy(t->names + at, name, len);
				e[ne] = (struct sym_table_entry){.start = addr - low,
								 .end = addr - low + sym.st_size,
								 .name = t->names + at,
								 .order = (uint32_t)i,
								 .dubious = (uint8_t)dubious};
				if (e[ne].end < e[ne].start)
					goto unusable;
			}
			at += len;
			ne++;
		}
		if (pass == 0) {
			nnames = at;
			t->names = malloc(nnames ? nnames : 1);
			if (!t->names)
				goto unusable;
			continue;
		}
		if (at != nnames)
			goto unusable; /* the table changed under us */
		qsort(e, ne, sizeof(*e), cmp_entry);
		t->n = merge_same_ranges(e, ne);
		qsort(sizeless, ns, sizeof(*sizeless), cmp_u64);
		t->e = e;
		t->sizeless = sizeless;
		t->nsizeless = ns;
		return t;
	}
unusable:
	free(e);
	free(sizeless);
	if (t)
		free(t->names);
	free(t);
	return NULL;
}

/* Whether a symbol without a size lies in [from, to]. */
static int has_sizeless_in(const struct sym_table *t, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = t->nsizeless;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->sizeless[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nsizeless && t->sizeless[lo] <= to;
}

/* The name libdwfl gives to the aliases of entry x, kept in the table. */
static const char *alias_name(struct sym_table *t, struct sym_table_entry *x, Dwfl_Module *m, uint64_t low)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m, low + x->start, &off, &sym, NULL, NULL, NULL);
	if (!name || off != 0 || sym.st_size != x->end - x->start)
		return NULL;
	char **v = realloc(t->given, (t->ngiven + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->given = v;
	if (!(v[t->ngiven] = strdup(name)))
		return NULL;
	x->name = v[t->ngiven++];
	return x->name;
}

int sym_table_find(struct sym_table *t, Dwfl_Module *m, uint64_t addr, const char **name, uint64_t *start,
		   uint64_t *size)
{
	uint64_t low = module_low(m);
	if (!t || addr < low || t->n == 0)
		return 0;
	uint64_t rel = addr - low;
	size_t lo = 0, hi = t->n; /* the first entry starting after rel */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].start <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct sym_table_entry *x = lo ? &t->e[lo - 1] : NULL;
	uint64_t reach = x ? (x->end > x->ends_before ? x->end : x->ends_before) : 0;
	if (reach <= rel) {
		/* No sized symbol holds it.  libdwfl then takes the nearest
		 * sizeless symbol below (a label), past the end of every sized
		 * one; with none there, it has no name for it either. */
		return has_sizeless_in(t, reach, rel) ? 0 : -1;
	}
	if (rel >= x->end || x->ends_before > rel || x->dubious)
		return 0; /* more than one symbol holds it */
	/* a non-local sizeless symbol right at addr makes some versions skip
	 * the local symbols */
	if (has_sizeless_in(t, rel, rel))
		return 0;
	const char *n = x->name ? x->name : alias_name(t, x, m, low);
	if (!n)
		return 0;
	*name = n;
	*start = low + x->start;
	*size = x->end - x->start;
	return 1;
}

void sym_table_free(struct sym_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ngiven; i++)
		free(t->given[i]);
	free(t->given);
	free(t->e);
	free(t->sizeless);
	free(t->names);
	free(t);
}
