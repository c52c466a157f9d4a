/*
 * backtrace_show.c - e2e target: walks its own stack from show(), called
 * by lvl2, lvl1 and main (test e2e.backtrace_same).
 *
 * It prints, for glibc's backtrace() and for _Unwind_Backtrace, how many
 * frames each found and which of show, lvl2, lvl1 and main the first four
 * lie in ("?" for another place): the same lines with and without stint,
 * whose probes swap return addresses that an unwinder must not see.
 */
#include <execinfo.h>
#include <stdio.h>
#include <unwind.h>

#include "e2e_prog.h"

E2E_FN void show(void);
E2E_FN void lvl2(void);
E2E_FN void lvl1(void);

/* which of the functions holds a: the nearest that starts before it,
 * within 1 KiB (each is smaller here) */
static const char *where(const void *a)
{
	extern int main(void);
	const struct {
		const char *name;
		const char *at;
	} fns[] = {{"show", (const char *)show}, {"lvl2", (const char *)lvl2}, {"lvl1", (const char *)lvl1},
		   {"main", (const char *)main}};
	const char *best = "?", *from = NULL;
	for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (fns[i].at < (const char *)a && (const char *)a - fns[i].at < 1024 && (!from || fns[i].at > from)) {
			best = fns[i].name;
			from = fns[i].at;
		}
	return best;
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *ctx, void *arg)
{
	unsigned *n = arg;
	if (*n < 4)
		printf(" %s", where((const void *)_Unwind_GetIP(ctx)));
	(*n)++;
	return _URC_NO_REASON;
}

static volatile int sink;

E2E_FN void show(void)
{
	void *b[32];
	int n = backtrace(b, 32);
	printf("backtrace %d:", n);
	for (int i = 0; i < n && i < 4; i++)
		printf(" %s", where(b[i]));
	printf("\nunwind:");
	unsigned k = 0;
	_Unwind_Backtrace(count_frame, &k);
	printf(" (%u frames)\n", k);
	sink++;
}

E2E_FN void lvl2(void)
{
	show();
	sink++;
}

E2E_FN void lvl1(void)
{
	lvl2();
	sink++;
}

int main(void)
{
	lvl1();
	return 0;
}
