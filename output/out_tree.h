/*
 * out_tree.h - the call-tree and butterfly views (out_tree.c).
 */
#ifndef STINT_OUT_TREE_H
#define STINT_OUT_TREE_H

#include <stdio.h>
#include "../analysis/an_view.h"

/*
 * The call tree of v, hottest first; paths whose inclusive share is below
 * threshold percent fold into one line per parent.  hot_path: expand only
 * the hottest call at each level.  format: 0 table, 1 JSON, 2 CSV (one row
 * per call path, the path's names joined by ';').
 */
void out_tree(FILE *f, const struct an_view *v, double threshold, int hot_path, int format);

/* Callers and callees of fn (the butterfly); the table's names cut to
 * width columns (0: whole), as the report's are. */
void out_butterfly(FILE *f, const struct an_view *v, uint32_t fn, int callees_first, int format, int width);

#endif
