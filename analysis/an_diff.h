/*
 * an_diff.h - two runs' function rows matched for `stint diff`: by name and
 * module, and by name alone for functions of the runs' executables (so that
 * app-v1 and app-v2 compare), ordered by the size of a change.
 */
#ifndef STINT_AN_DIFF_H
#define STINT_AN_DIFF_H

#include "analysis.h"

/* One function of either run; a[] and b[] hold the values, then calls. */
struct an_diff_row {
	const char *name, *module; /* borrowed from the rows given */
	const char *file;          /* the defining source file's name, "" unknown */
	int in_a, in_b;
	int same_name;             /* another row has its name and module (two static
				    * functions of one name in two files) */
	double a[AN_NVALUES + 1], b[AN_NVALUES + 1];
};

/*
 * The function rows of one run (d, analysed into r with filter f) as diff
 * compares them: from the view of f (just-my-code folded); sampling's as
 * percentages of the selection's samples, since sample counts grow with
 * the run's length.  *rows malloc'd, names point into r.
 */
void an_diff_rows(const struct fmt_data *d, const struct an_result *r, const struct an_filter *f,
		  struct an_row **rows, uint32_t *n);

/*
 * Matches run A's rows (of data da) with run B's (of db) into *out (malloc'd,
 * *n long): every function of either run once, with the values of each run
 * it appears in.  Linear after sorting: O((na + nb) log(na + nb)).
 * Returns 0, -1 when out of memory.
 */
int an_diff_match(const struct fmt_data *da, const struct an_row *ra, uint32_t na, const struct fmt_data *db,
		  const struct an_row *rb, uint32_t nb, struct an_diff_row **out, uint32_t *n);

/* Orders rows by |b - a| of value key (0 .. AN_NVALUES), largest first, then by name. */
void an_diff_sort(struct an_diff_row *rows, uint32_t n, int key);

#endif
