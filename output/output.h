/*
 * output.h - report views of an analysis: the table a person reads, CSV
 * and the JSON object of doc/numbers.md (the interface).
 */
#ifndef STINT_OUTPUT_H
#define STINT_OUTPUT_H

#include <stdio.h>
#include "../analysis/analysis.h"
#include "../format/format.h"

enum out_by { OUT_BY_FUNCTION, OUT_BY_MODULE, OUT_BY_THREAD, OUT_BY_PROCESS, OUT_BY_LINE, OUT_BY_ADDRESS };
enum out_format { OUT_TABLE, OUT_CSV, OUT_JSON };

struct out_opts {
	int by;            /* enum out_by */
	int format;        /* enum out_format */
	const char *sort;  /* column key, NULL for the view's default */
	long limit;        /* rows shown, 0 for all */
	int per_call;      /* table: add average/min/max per call */
	int no_compensation;
	int width;         /* table: shorten names to this many columns; 0 for no limit */
	int color;         /* table: colour the percentages of hot rows */
	const char *selection; /* the filter in words, NULL for none */
	int why;           /* list the functions not instrumented, with the reason */
};

/* Terminal conventions (out_term.c). */
enum { OUT_COLOR_AUTO, OUT_COLOR_ALWAYS, OUT_COLOR_NEVER };
int out_term_width(void);      /* stdout's columns; 0 when it is not a terminal */
int out_color_wanted(int mode); /* OUT_COLOR_AUTO: a colour terminal, NO_COLOR unset */
/* On a terminal, send stdout through $STINT_PAGER, $PAGER or less (LESS=FRSX);
 * an empty PAGER or "cat" means none.  The pager is waited for at exit. */
void out_pager_start(void);

/* Helpers every view shares. */
void out_fmt_time(char *buf, size_t n, double ns); /* "12.34 ms" */
/* A text row's label and its newline, cut with ".." to the width - used
 * columns left (width 0, or fewer than 8 left: whole). */
void out_put_label(FILE *f, int width, int used, const char *label);
/* A module after a function's name, in brackets ("main [app]"), but one
 * whose name has its own ([vdso], [unknown]) as it is: "%s " OUT_MOD_FMT
 * with the name, then OUT_MOD_ARGS(module). */
#define OUT_MOD_FMT "%s%s%s"
#define OUT_MOD_ARGS(m) ((m)[0] == '[' ? "" : "["), (m), ((m)[0] == '[' ? "" : "]")
double out_pct(double v, double total);           /* 0 when total is 0 */
/*
 * A JSON string literal, always valid JSON: control characters escaped,
 * each byte that is not part of valid UTF-8 written as \ufffd (U+FFFD,
 * the replacement character); for_html also escapes '<', '>' and '&' so
 * the literal is safe inside a <script> element.
 */
void out_json_text(FILE *f, const char *s, int for_html);
void out_json_str(FILE *f, const char *s);        /* out_json_text(f, s, 0) */
/* s with each byte that is not valid UTF-8 replaced by U+FFFD (CSV). */
void out_text_utf8(FILE *f, const char *s);
/* A CSV field: quoted when it holds a comma, quote or line break. */
void out_csv_str(FILE *f, const char *s);

/* Validate a --sort key; 0 if known. */
int out_sort_key_ok(const char *key);

/* Programs instrumented at load (out_patch.c): "N of M functions" per
 * module in the header (and with why, the others and the reason); the
 * same as the JSON member "patched_modules". */
void out_patch_header(FILE *f, const char *notes, int why);
void out_patch_json(FILE *f, const char *notes);

/* Print the report of d and its analysis r.  Returns 0, -1 on a bad key. */
int out_report(FILE *f, const struct fmt_data *d, const struct an_result *r,
	       const struct out_opts *o);

#endif
