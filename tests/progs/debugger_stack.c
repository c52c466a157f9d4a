/*
 * debugger_stack.c - e2e target (test e2e.debugger_backtrace): main calls
 * outer, which calls getpid, then sorts with qsort, whose comparator
 * aborts on its third call.  A debugger's backtrace at the abort must show
 * cmp, qsort, outer and main, with stint's probes in between: a library
 * call's return thunk and, patched at load, the functions' return stubs.
 * getpid's return (through rt_plt_thunk_common) and cmp's first (patched
 * at load: through rt_patch_return) are where the test also stops, in
 * stint's own trampolines.
 */
#include <stdlib.h>
#include <unistd.h>

#include "e2e_prog.h"

static int calls;

E2E_FN int cmp(const void *a, const void *b)
{
	if (++calls == 3)
		abort();
	return *(const int *)a - *(const int *)b;
}

E2E_FN void outer(void)
{
	int v[8] = {3, 1, 2, 0, 7, 5, 6, 4};
	if (getpid() <= 0)
		return;
	qsort(v, 8, sizeof v[0], cmp);
}

int main(void)
{
	outer();
	return 0;
}
