/*
 * out_patch.c - what the report says about programs instrumented at load
 * (not built with -finstrument-functions): per module, how many of its
 * functions got probes, and with --why the others and the reason.  Read
 * from the data file's notes, written by stint record from the runtime's
 * account (recorder/rec_patch.c): "patchmod=MOD:N/M" per module ("N/M/U"
 * when the record-time selection left U of the M functions out: not
 * patched, not refused) and "patchwhy=NAME:REASON:MOD,...".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output.h"

/* symbol/sym.c's, weak: a program linking the output code without the
 * symbolizer (the fuzz target) shows mangled names */
extern char *sym_demangle(const char *name) __attribute__((weak));

static char *op_demangle(const char *raw)
{
	return sym_demangle ? sym_demangle(raw) : strdup(raw);
}

/* The reasons' keywords (runtime/rt_patch_cs.c) in words. */
static const char *op_reason(const char *k, size_t n)
{
	static const char *const r[][2] = {
		{"short", "ends before 5 bytes, and no padding follows it"},
		{"jump", "a jump lands inside its first 5 bytes"},
		{"loop", "a jump inside it goes back to its first instruction (a loop)"},
		{"insn", "an instruction that cannot be moved (or that Capstone does not know)"},
		{"nosize", "its symbol has no size"},
		{"entry", "the program's entry point (no return address)"},
		{"far", "no memory for its trampoline within 2 GiB"},
		{"write", "its code could not be made writable"},
		{"nocapstone", "the Capstone disassembler was missing"},
		{"go", "Go code: Go's runtime walks its stacks by its own tables (stint record -m sample profiles it)"},
		{"v8", "V8 (node, Electron): its garbage collector looks return addresses up in its own tables "
		       "(stint record -m sample profiles it)"},
		{"jvm", "the Java virtual machine (HotSpot's libjvm.so): it walks its own frames by their return "
			"addresses (stint record -m sample profiles it)"},
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (strlen(r[i][0]) == n && strncmp(r[i][0], k, n) == 0)
			return r[i][1];
	return "unknown reason";
}

/* The next token of notes starting with key, as [*v, end). */
static const char *op_token(const char *p, const char *key, const char **end)
{
	size_t l = strlen(key);
	while (p && *p) {
		if (strncmp(p, key, l) == 0) {
			*end = strchrnul(p + l, ' ');
			return p + l;
		}
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return NULL;
}

/* Each refused function of module mod (n chars): fn(name, reason). */
static size_t op_each_why(const char *notes, const char *mod, size_t mn,
			  void (*fn)(void *, const char *, size_t, const char *, size_t), void *arg)
{
	const char *e, *v = op_token(notes, "patchwhy=", &e);
	size_t count = 0;
	while (v && v < e) {
		const char *c = memchr(v, ',', (size_t)(e - v));
		const char *ie = c ? c : e;
		const char *c1 = memchr(v, ':', (size_t)(ie - v));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(ie - c1 - 1)) : NULL;
		if (c1 && c2 && (size_t)(ie - c2 - 1) == mn && strncmp(c2 + 1, mod, mn) == 0) {
			count++;
			if (fn)
				fn(arg, v, (size_t)(c1 - v), c1 + 1, (size_t)(c2 - c1 - 1));
		}
		v = ie + 1;
	}
	return count;
}

static void op_print_why(void *arg, const char *nm, size_t nl, const char *r, size_t rl)
{
	char *raw = strndup(nm, nl), *name = op_demangle(raw);
	fprintf((FILE *)arg, "#   %-40s %s\n", name, op_reason(r, rl));
	free(name);
	free(raw);
}

/* One module patched at load, from its note "patchmod=MOD:N/M[/U]". */
struct op_mod {
	const char *name; /* (in the notes) */
	size_t len;
	unsigned long long n, m, u; /* patched, functions, not selected */
};

/* The next well-formed module note from *p on, into pm; *p moves past it.
 * 0 when there is none. */
static int op_next_mod(const char **p, struct op_mod *pm)
{
	const char *e, *v;
	while ((v = op_token(*p, "patchmod=", &e))) {
		*p = e;
		const char *colon = memrchr(v, ':', (size_t)(e - v));
		pm->n = pm->m = pm->u = 0;
		if (!colon || sscanf(colon + 1, "%llu/%llu/%llu", &pm->n, &pm->m, &pm->u) < 2)
			continue;
		pm->name = v;
		pm->len = (size_t)(colon - v);
		/* left out by stint record --function & co: not patched, and
		 * not refused either (--why does not list them) */
		if (pm->u > pm->m - pm->n)
			pm->u = 0;
		return 1;
	}
	return 0;
}

void out_patch_header(FILE *f, const char *notes, int why)
{
	const char *p = notes;
	struct op_mod pm;
	while (op_next_mod(&p, &pm)) {
		int ml = (int)pm.len;
		if (pm.m == 0) { /* stripped, and no .eh_frame to find functions in */
			fprintf(f, "# instrumented: no function of %.*s: it has no function symbols and no "
				   ".eh_frame; its calls into libraries are recorded\n", ml, pm.name);
			continue;
		}
		fprintf(f, "# instrumented: %llu of %llu functions of %.*s, patched at load", pm.n, pm.m, ml, pm.name);
		if (pm.u)
			fprintf(f, "; %llu not selected at record time", pm.u);
		if (pm.n + pm.u < pm.m && !why)
			fprintf(f, " (stint report --why lists the other %llu)", pm.m - pm.n - pm.u);
		fputc('\n', f);
		if (why && pm.n + pm.u < pm.m) {
			fprintf(f, "# not instrumented in %.*s:\n", ml, pm.name);
			op_each_why(notes, pm.name, pm.len, op_print_why, f);
		}
	}
}

struct op_json {
	FILE *f;
	int first;
};

static void op_json_why(void *arg, const char *nm, size_t nl, const char *r, size_t rl)
{
	struct op_json *j = arg;
	char *raw = strndup(nm, nl), *name = op_demangle(raw), *reason = strndup(r, rl);
	free(raw);
	fputs(j->first ? "{\"name\":" : ",{\"name\":", j->f);
	out_json_str(j->f, name);
	fputs(",\"reason\":", j->f);
	out_json_str(j->f, reason);
	fputc('}', j->f);
	j->first = 0;
	free(name);
	free(reason);
}

void out_patch_json(FILE *f, const char *notes)
{
	const char *p = notes;
	struct op_mod pm;
	int first = 1;
	while (op_next_mod(&p, &pm)) {
		char *mod = strndup(pm.name, pm.len);
		fputs(first ? ",\n\"patched_modules\":[\n {\"module\":" : ",\n {\"module\":", f);
		out_json_str(f, mod);
		fprintf(f, ",\"instrumented\":%llu,\"functions\":%llu,\"not_selected\":%llu,\"not_instrumented\":[",
			pm.n, pm.m, pm.u);
		struct op_json j = {f, 1};
		op_each_why(notes, pm.name, pm.len, op_json_why, &j);
		fputs("]}", f);
		free(mod);
		first = 0;
	}
	if (!first)
		fputs("]", f);
}
