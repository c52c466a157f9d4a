/*
 * tail_chain.c - e2e target (test e2e.patched_tail_jumps): mutual
 * recursion by tail jumps.  At -O2 gcc makes is_even's call of is_odd and
 * is_odd's of is_even "jmp"s, so a function entered by one finds the
 * return address of the function that jumped already swapped by its probe.
 * main calls is_even(20) 3000 times: is_even -> is_odd -> is_even ... 21
 * frames deep, one return for all of them; is_even(0) calls leaf.  Then 10
 * times a chain of 7 ends in bail, which longjmps back to main past the
 * whole chain, and main calls landed: its caller is main.
 */
#include <setjmp.h>

#include "e2e_prog.h"

static volatile double sink;
static jmp_buf back;
static volatile int escape;

E2E_FN double leaf(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += i * 0.5;
	return s;
}

E2E_FN void bail(void) { longjmp(back, 1); }

E2E_FN int is_odd(int n);

E2E_FN int is_even(int n)
{
	if (n == 0) {
		if (escape)
			bail();
		sink += leaf(300);
		return 1;
	}
	return is_odd(n - 1); /* a tail jump at -O2 */
}

E2E_FN int is_odd(int n)
{
	if (n == 0)
		return 0;
	return is_even(n - 1); /* a tail jump at -O2 */
}

E2E_FN void landed(void) { sink += leaf(10); }

int main(void)
{
	for (int i = 0; i < 3000; i++)
		sink += is_even(20);
	for (volatile int k = 0; k < 10; k++) {
		if (setjmp(back) == 0) {
			escape = 1;
			sink += is_even(6);
		}
		escape = 0;
		landed();
	}
	return 0;
}
