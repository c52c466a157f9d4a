/*
 * recursion.c - e2e target: deep recursion (test e2e.deep_recursion).
 *
 * main calls recurse(4999) 3 times: recurse is called 3 x 5000 = 15000
 * times, far deeper than any fixed-size shadow stack, and leaf_work 3
 * times at the bottom.  Built at -O0.
 */
#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN uint64_t leaf_work(void) { return e2e_burn(200000, 5); }

E2E_FN uint64_t recurse(int depth)
{
	if (depth == 0)
		return leaf_work();
	return recurse(depth - 1) + 1;
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		sink += recurse(4999);
	return 0;
}
