/*
 * cmd_common.c - what the reading commands share: loading a data file and
 * running its method's analysis, with one warning line for damage.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cmd.h"
#include "../lib/util.h"
#include "../recorder/recorder.h"

int cmd_damaged;
int cmd_exit_signal;

int cmd_width_arg(const char *cmd, const char *arg)
{
	char *end;
	long w = strtol(arg, &end, 10);
	if (end == arg || *end || w < 0 || w > 100000)
		die("%s: --width wants a number of columns (0: no limit), not '%s'", cmd, arg);
	return (int)w;
}

int cmd_program_exit_code(int status)
{
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT)
		cmd_exit_signal = SIGINT;
	return rec_exit_code(status);
}

void cmd_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	if (cmd_exit_signal) {
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, cmd_exit_signal);
		signal(cmd_exit_signal, SIG_DFL);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(cmd_exit_signal);
	}
	exit(code);
}

static void cmd_write_all(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* SIGBUS: a data file truncated while mapped (fmt_mapped_file_at) ends the
 * command with one line and exit 2, its temporary output removed; any
 * other cause gets the default action when the fault repeats. */
static void cmd_on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	const char *path = fmt_mapped_file_at(si->si_addr);
	if (!path) {
		signal(sig, SIG_DFL);
		return;
	}
	cmd_write_all("stint: cannot read '");
	cmd_write_all(path);
	cmd_write_all("': it was truncated while being read (by a program writing it, or a full disk)\n");
	util_tmp_remove_all();
	_exit(2);
}

void cmd_unexpected(const char *cmd, const char *arg)
{
	struct stat st;
	if (!stat(arg, &st) && S_ISREG(st.st_mode))
		die("%s: unexpected argument '%s' (a data file is read with -i FILE)", cmd, arg);
	die("%s: unexpected argument '%s'", cmd, arg);
}

/*
 * getopt_long found an option it does not know, or one without its value
 * (opterr is 0: getopt says nothing itself): one line naming it, not the
 * whole usage, which --help prints.
 */
void cmd_bad_option(const char *cmd, char **argv, const char *shorts, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	if (optopt > 0 && optopt < 128 && isprint(optopt) && !(arg[0] == '-' && arg[1] == '-')) {
		const char *at = strchr(shorts, optopt);
		if (at && at[1] == ':')
			die("%s: option -%c needs a value (stint %s --help)", cmd, optopt, cmd);
		die("%s: unknown option -%c (stint %s --help lists them)", cmd, optopt, cmd);
	}
	if (arg[0] == '-' && arg[1] == '-') {
		size_t n = strcspn(arg + 2, "=");
		for (const struct option *o = longopts; o->name; o++)
			if (strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0) {
				if (o->has_arg == required_argument && !arg[2 + n])
					die("%s: option --%s needs a value (stint %s --help)", cmd, o->name, cmd);
				if (o->has_arg == no_argument && arg[2 + n])
					die("%s: option --%s takes no value (stint %s --help)", cmd, o->name, cmd);
			}
	}
	die("%s: unknown option '%s' (stint %s --help lists them)", cmd, arg, cmd);
}

void cmd_read(const char *input, struct fmt_data *d)
{
	static int installed;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = cmd_on_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = 1;
	}
	char err[1024];
	if (fmt_read(input, d, err, sizeof(err)) < 0)
		die("%s", err);
	/* the sources it names are read as its owner could (util_read_source) */
	struct stat st;
	if (stat(input, &st) == 0)
		util_source_reader(st.st_uid);
}

/*
 * An output file that is the data file being read (export -o run.data, a
 * link to it as input) would replace the recording with its own export:
 * refused.  A link given as output is replaced, not followed (util_out), so
 * the output is compared without following it.
 */
void cmd_output_not_input(const char *output, const char *input)
{
	struct stat in, out;
	/* (a descriptor's name is followed: /dev/fd/3 with 3>>run.data appended
	 * to the file being read) */
	if (!output || strcmp(output, "-") == 0 || stat(input, &in) != 0 ||
	    (util_names_descriptor(output) ? stat(output, &out) : lstat(output, &out)) != 0)
		return;
	if (S_ISREG(out.st_mode) && out.st_dev == in.st_dev && out.st_ino == in.st_ino)
		die("'%s' is the data file being read: give another output file", output);
}

char *cmd_split_function(const char *want, char **module, char **file)
{
	char *name = xstrdup(want);
	size_t l = strlen(name);
	char *br = l > 3 && name[l - 1] == ']' ? strrchr(name, '[') : NULL;
	*module = NULL;
	*file = NULL;
	if (br && br > name + 1 && br[-1] == ' ' && br[1] != ']') {
		name[l - 1] = 0;
		*module = xstrdup(br + 1);
		br[-1] = 0;
	}
	size_t len = an_file_prefix(name); /* ("a.c:helper") */
	if (len) {
		*file = xstrndup(name, len);
		memmove(name, name + len + 1, strlen(name + len + 1) + 1);
	}
	return name;
}

uint32_t cmd_pick_function(const struct an_result *r, const char *want, const char *prefer, const char *input,
			   const char *what)
{
	char *module, *file;
	char *name = cmd_split_function(want, &module, &file);
	uint32_t found[64];
	uint32_t n = an_find_functions(r, name, found, 64), k = 0;
	/* "NAME [MODULE]" keeps that module's, "FILE:NAME" that file's;
	 * --module prefers its matches */
	for (uint32_t i = 0; i < n; i++) {
		const struct an_module *m = &r->mods[r->funcs[found[i]].module];
		if ((!module || strcmp(m->base, module) == 0 || strcmp(m->path, module) == 0 ||
		     strcmp(util_file_name(m->path), module) == 0) &&
		    (!file || an_file_named(r->funcs[found[i]].file, file)))
			found[k++] = found[i];
	}
	n = k;
	if (!module && prefer) {
		k = 0;
		for (uint32_t i = 0; i < n; i++) {
			const char *base = r->mods[r->funcs[found[i]].module].base;
			if (fnmatch(prefer, base, 0) == 0 || strstr(base, prefer))
				found[k++] = found[i];
		}
		if (k)
			n = k;
	}
	if (n == 0)
		die("%s: no function '%s' in '%s'", what, want, input);
	/* one function, or copies of it in several processes (one name,
	 * one module file); else the user names one, two programs of one
	 * file name (op and v2/op) by their paths, two static functions of
	 * one name by their source files */
	int several = 0, same_base = 0, other_file = 0;
	for (uint32_t i = 1; i < n; i++) {
		const struct an_func *fa = &r->funcs[found[i]], *fb = &r->funcs[found[0]];
		const struct an_module *a = &r->mods[fa->module], *b = &r->mods[fb->module];
		int other_path = strcmp(a->path, b->path) != 0;
		several |= strcmp(fa->name, fb->name) != 0 || other_path;
		same_base |= other_path && strcmp(a->base, b->base) == 0;
		other_file |= !other_path && strcmp(fa->name, fb->name) == 0 && strcmp(fa->file, fb->file) != 0;
	}
	if (several || other_file) {
		warn("'%s' matches several functions:", want);
		for (uint32_t i = 0; i < n; i++) {
			const struct an_func *f = &r->funcs[found[i]];
			const struct an_module *m = &r->mods[f->module];
			const char *src = util_file_name(f->file);
			for (uint32_t j = 0; j < n && src != f->file; j++) /* (a.c of two directories) */
				if (j != i && strcmp(r->funcs[found[j]].file, f->file) != 0 &&
				    an_file_named(r->funcs[found[j]].file, src))
					src = f->file;
			if (other_file && *src)
				fprintf(stderr, "  %s:%s [%s]\n", src, f->name, same_base ? m->path : m->base);
			else
				fprintf(stderr, "  %s [%s]\n", f->name, same_base ? m->path : m->base);
		}
		die("%s: name one exactly, as %s", what,
		    !several ? "'FILE:NAME'" : other_file ? "'FILE:NAME [MODULE]'" : "'NAME [MODULE]'");
	}
	free(name);
	free(module);
	free(file);
	return found[0];
}

/* A pattern that names nothing is a mistake (a typo, another program's
 * data file): an empty report would look like a measurement. */
int cmd_filter_names_match(const struct an_result *r, const struct an_filter *f)
{
	if (!f || (!f->function && !f->module))
		return 1;
	for (uint32_t fn = 0; fn < r->nfuncs; fn++)
		if (an_filter_match(r, f, fn))
			return 1;
	return 0;
}

void cmd_filter_names_check(const struct an_result *r, const struct an_filter *f, const char *input)
{
	if (!cmd_filter_names_match(r, f)) {
		char *where = xasprintf("'%s'", input);
		cmd_filter_names_die(f, where);
	}
}

void cmd_filter_names_die(const struct an_filter *f, const char *where)
{
	if (f->module && f->function)
		die("no function matches --module '%s' --function '%s' in %s (stint report lists them)", f->module,
		    f->function, where);
	if (f->module)
		die("no module matches --module '%s' in %s (stint report --by module lists them)", f->module, where);
	die("no function matches --function '%s' in %s (stint report lists them)", f->function, where);
}

void cmd_load(const char *input, struct fmt_data *d, struct an_result *r, int no_compensation,
	      const struct an_filter *f)
{
	cmd_load_any(input, d, r, no_compensation, f);
	cmd_filter_names_check(r, f, input);
	cmd_load_warn(input, d, r);
}

void cmd_load_any(const char *input, struct fmt_data *d, struct an_result *r, int no_compensation,
		  const struct an_filter *f)
{
	cmd_read(input, d);
	int sampling = strcmp(d->method, "sampling") == 0;
	if (!sampling && strcmp(d->method, "instrumentation") != 0)
		die("'%s' holds '%s' data, which this stint cannot report", input, d->method);
	if (f)
		cmd_filter_check(d, f, input);
	/* the filter selects samples or intervals in the analysis itself, so
	 * that every view is computed from the selection */
	struct an_opts ao = {.no_compensation = no_compensation, .filter = f};
	if (sampling)
		an_sample_run(d, &ao, r);
	else
		an_instr_run(d, &ao, r);
}

void cmd_load_warn(const char *input, const struct fmt_data *d, const struct an_result *r)
{
	/* one line, whatever is damaged */
	if (d->damage)
		warn("'%s' is damaged: %s; reporting what could be read", input, d->damage);
	else if (r->damaged_threads)
		warn("'%s' is damaged: events of %u thread%s are unreadable past some point; reporting "
		     "what precedes the damage",
		     input, r->damaged_threads, r->damaged_threads == 1 ? "" : "s");
	if (d->damage || r->damaged_threads)
		cmd_damaged = 1;
}

uint32_t cmd_parse_id(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v == 0 || v > INT32_MAX)
		die("%s wants a process or thread id (a positive number), not '%s'", opt, arg);
	return (uint32_t)v;
}

int cmd_filter_option(int c, const char *arg, struct an_filter *f)
{
	switch (c) {
	case CMD_OPT_PID:
		f->pid = cmd_parse_id("--pid", arg);
		return 1;
	case CMD_OPT_TID:
		f->tid = cmd_parse_id("--tid", arg);
		return 1;
	case CMD_OPT_MODULE:
		f->module = arg;
		return 1;
	case CMD_OPT_FUNCTION:
		f->function = arg;
		return 1;
	case CMD_OPT_JMC:
		f->just_my_code = 1;
		return 1;
	}
	return 0;
}

void cmd_filter_check(const struct fmt_data *d, const struct an_filter *f, const char *input)
{
	if (!f->pid && !f->tid)
		return;
	for (uint32_t i = 0; i < d->nthreads; i++) {
		const struct fmt_thread *t = &d->threads[i];
		if ((!f->pid || d->procs[t->proc].pid == f->pid) && (!f->tid || t->tid == f->tid))
			return;
	}
	if (f->tid && f->pid)
		die("no thread %u in process %u in '%s' (stint report --by thread lists them)", f->tid, f->pid, input);
	if (f->tid)
		die("no thread %u in '%s' (stint report --by thread lists them)", f->tid, input);
	die("no process %u in '%s' (stint report --by process lists them)", f->pid, input);
}

void cmd_filter_rows(struct an_result *r, const struct an_filter *f, const struct an_view *v)
{
	/* the analysis already holds only the selection (threads, processes,
	 * lines, addresses, session); just-my-code is the view's folding */
	if (!f->just_my_code)
		return;
	free(r->functions);
	free(r->modules);
	an_view_functions(v, &r->functions, &r->nfunctions);
	an_view_modules(v, &r->modules, &r->nmodules);
	for (int k = 0; k < AN_NVALUES; k++)
		r->session.v[k] = v->total[k];
}

void cmd_need_sites(const char *input, const struct fmt_data *d, const char *what)
{
	for (uint32_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].nosites)
			die("%s: '%s' is of data format version 1, whose calls have no call sites; record it "
			    "again with this stint for the values per line", what, input);
}

void cmd_instr_lines(const char *input, const struct fmt_data *d, struct an_result *r, int no_compensation,
		     const struct an_filter *f, struct an_lines *l)
{
	cmd_need_sites(input, d, "report");
	struct an_lines_opts lo = {.no_compensation = no_compensation, .filter = f, .mode = AN_LINES_ALL};
	if (an_lines_run(d, r, &lo, l) < 0)
		die("out of memory");
	an_lines_to_result(l, r);
}

char *cmd_filter_describe(const struct an_filter *f)
{
	if (!an_filter_active(f) && !f->just_my_code)
		return NULL;
	char pid[32] = "", tid[32] = "";
	if (f->pid)
		snprintf(pid, sizeof(pid), " pid %u", f->pid);
	if (f->tid)
		snprintf(tid, sizeof(tid), " tid %u", f->tid);
	char *s = xasprintf("%s%s%s%s%s%s%s", pid, tid, f->module ? " module " : "", f->module ? f->module : "",
			    f->function ? " function " : "", f->function ? f->function : "",
			    f->just_my_code ? " just-my-code" : "");
	memmove(s, s + 1, strlen(s)); /* the leading space */
	return s;
}
