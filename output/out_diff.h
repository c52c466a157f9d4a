/*
 * out_diff.h - `stint diff`'s views of two runs' matched function rows
 * (out_diff.c).
 */
#ifndef STINT_OUT_DIFF_H
#define STINT_OUT_DIFF_H

#include <stdio.h>
#include "output.h"
#include "../analysis/an_diff.h"

/* One of the two runs, as the header names it. */
struct out_diff_run {
	const char *path, *method, *command;
};

/*
 * --sort of diff: the method's short name of a value or the diff's key of
 * it (ee, elapsed_exclusive; exclusive, exclusive_pct), or calls: the
 * an_diff_sort key (a value index, AN_NVALUES for calls); -1 if unknown.
 */
int out_diff_sort_key(int sampling, const char *key);

/* The rows (n of them, in their order) as a table, CSV or JSON (enum out_format). */
void out_diff(FILE *f, int sampling, const struct out_diff_run *a, const struct out_diff_run *b,
	      const struct an_diff_row *rows, uint32_t n, int format, int width);

#endif
