/*
 * cmd.h - the subcommands; each is int cmd_<name>(argc, argv) in its own
 * file under cmd/, and is listed once in the command table of stint.c.
 */
#ifndef STINT_CMD_H
#define STINT_CMD_H

#include <stdlib.h>
#include "../analysis/an_lines.h"
#include "../analysis/an_view.h"
#include "../format/format.h"

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_recover(int argc, char **argv);

int cmd_callers(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_html(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_callees(int argc, char **argv);

/*
 * Read input and analyse it into d and r, of the selection of filter f (NULL:
 * the whole run; --pid/--tid naming no thread die), or die with one line (exit 2).
 * A damaged file is read as far as it can be, with one warning line, and
 * sets cmd_damaged: the command then exits CMD_EXIT_DAMAGED when it is done.
 */
#define CMD_EXIT_DAMAGED 3
extern int cmd_damaged;

/* The program record ran died of SIGINT (Ctrl-C): stint ends by the same
 * signal once its output is written, so that a shell's loop, make or xargs
 * around it stops as it would around the program (an exit status of 130
 * tells them the program handled the signal and went on). */
extern int cmd_exit_signal;

/* --width's value, or one line and exit 2 ("cmd: --width wants ..."). */
int cmd_width_arg(const char *cmd, const char *arg);

/* status as record exits with it (128 + N for a signal), cmd_exit_signal set */
int cmd_program_exit_code(int status);

/* End by cmd_exit_signal if set, else exit(code). */
void cmd_exit(int code) __attribute__((noreturn));

/*
 * Read input into d, or die with one line (exit 2).  The file stays mapped
 * until fmt_data_free: if it is truncated meanwhile (a program writing it, a
 * full disk), the command ends with one line naming it and exit 2, not with
 * "Bus error".
 */
void cmd_read(const char *input, struct fmt_data *d);
/* cmd_read, then the analysis of the filter's selection (f may be NULL),
 * then one line of warning if the file is damaged.  cmd_load dies when
 * --function or --module names nothing in the file; cmd_load_any leaves
 * that and the warning (cmd_load_warn) to the caller (diff: a function may
 * be in one file only), which asks cmd_filter_names_match. */
void cmd_load(const char *input, struct fmt_data *d, struct an_result *r, int no_compensation,
	      const struct an_filter *f);
void cmd_load_any(const char *input, struct fmt_data *d, struct an_result *r, int no_compensation,
		  const struct an_filter *f);
/* "NAME [MODULE]", as the reports print a function, or "FILE:NAME" (gdb's
 * way to name one of two static functions): the name (malloc'd), *module
 * and *file (malloc'd, NULL without one). */
char *cmd_split_function(const char *want, char **module, char **file);

/* The function want names in r, exactly or as the one match, "NAME [MODULE]"
 * choosing the module, prefer (--module's pattern) preferring its matches;
 * dies naming the candidates when several functions match. */
uint32_t cmd_pick_function(const struct an_result *r, const char *want, const char *prefer, const char *input,
			   const char *what);
/* Die when output (not "-") is the file input names. */
void cmd_output_not_input(const char *output, const char *input);
void cmd_load_warn(const char *input, const struct fmt_data *d, const struct an_result *r);
int cmd_filter_names_match(const struct an_result *r, const struct an_filter *f);
void cmd_filter_names_die(const struct an_filter *f, const char *where) __attribute__((noreturn));
/* cmd_filter_names_die (where: input) unless cmd_filter_names_match. */
void cmd_filter_names_check(const struct an_result *r, const struct an_filter *f, const char *input);

/* Die on an argument a command takes no such: naming -i when it is a file. */
void cmd_unexpected(const char *cmd, const char *arg) __attribute__((noreturn));
struct option;
/* getopt_long returned '?' (opterr 0): one line naming the option. */
void cmd_bad_option(const char *cmd, char **argv, const char *shorts, const struct option *longopts)
	__attribute__((noreturn));

/* The filter options every view takes (getopt_long values). */
enum { CMD_OPT_PID = 1000, CMD_OPT_TID, CMD_OPT_MODULE, CMD_OPT_FUNCTION, CMD_OPT_JMC };
#define CMD_FILTER_OPTIONS                                                                          \
	{"pid", required_argument, NULL, CMD_OPT_PID}, {"tid", required_argument, NULL, CMD_OPT_TID},   \
		{"module", required_argument, NULL, CMD_OPT_MODULE},                                    \
		{"function", required_argument, NULL, CMD_OPT_FUNCTION},                                \
		{"just-my-code", no_argument, NULL, CMD_OPT_JMC}
#define CMD_FILTER_HELP                                                                             \
	"      --pid PID        only this process      --tid TID   only this thread\n"                 \
	"      --module PAT     only call paths through functions of matching modules\n"            \
	"      --function PAT   only call paths through matching functions (glob or substring)\n"   \
	"      --just-my-code   hide system-library frames, charging their time to the caller\n"

/*
 * With just-my-code, r's function and module rows as view v folds them
 * (system-library frames charged to their callers).  Everything else in r
 * is already the filter's selection: cmd_load() ran the analysis with it.
 */
void cmd_filter_rows(struct an_result *r, const struct an_filter *f, const struct an_view *v);

/*
 * Instrumentation: d's values per source line and call-site address
 * (an_lines.h, mode AN_LINES_ALL) into l, and copied into r->lines and
 * r->addresses for out_report.  Dies with one line for a file whose entries
 * carry no call sites (format version 1).
 */
void cmd_instr_lines(const char *input, const struct fmt_data *d, struct an_result *r, int no_compensation,
		     const struct an_filter *f, struct an_lines *l);

/* Die with one line if d's entries carry no call sites (format version 1). */
void cmd_need_sites(const char *input, const struct fmt_data *d, const char *what);

/* The filter in words ("pid 12 function poly"), malloc'd; NULL for none. */
char *cmd_filter_describe(const struct an_filter *f);

/* Die with one line if --pid/--tid select no thread of d. */
void cmd_filter_check(const struct fmt_data *d, const struct an_filter *f, const char *input);

/* A --pid/--tid argument: a positive decimal number, or die with one line. */
uint32_t cmd_parse_id(const char *opt, const char *arg);

/* Apply a filter option; 1 if c was one. */
int cmd_filter_option(int c, const char *arg, struct an_filter *f);

#endif
