/*
 * inline_site.c - e2e target (test e2e.inlined_call_site_line): an
 * instrumented function inlined into its caller still calls its probes,
 * with its caller's return address for a call site: a line of main (OUTER
 * CALL), which callers --by line and annotate gave as outer's.
 */
#include <stdio.h>
static volatile int sink;
static inline __attribute__((always_inline)) int helper(int x)
{
	return x * 3 + sink;
}
__attribute__((noinline)) int outer(int x)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += helper(x + i); /* HELPER CALL */
	return s;
}
int main(void)
{
	int t = outer(5); /* OUTER CALL */
	printf("%d\n", t);
	return 0;
}
