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
 * the hottest call at each level.
 */
void out_tree(FILE *f, const struct an_view *v, double threshold, int hot_path, int json);

/* Callers and callees of fn (the butterfly). */
void out_butterfly(FILE *f, const struct an_view *v, uint32_t fn, int callees_first, int json);

#endif
