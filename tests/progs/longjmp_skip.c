/*
 * longjmp_skip.c - e2e target: longjmp skips the exits of instrumented
 * frames (test e2e.longjmp_skipping_frames).
 *
 * jump_driver runs 10 rounds of outer -> middle -> inner, and inner
 * longjmps back into jump_driver: outer, middle and inner are each called
 * 10 times and never return.  Each time it lands, jump_driver calls landed
 * (about 2 ms of CPU), whose caller is jump_driver, not the frames the jump
 * left.  Then main calls after_jump 3 times (about 20 ms of CPU each).  The
 * skipped frames must be closed no later than when jump_driver returns, so
 * none of after_jump's time is inner's.
 */
#include <setjmp.h>

#include "e2e_prog.h"

static jmp_buf back;
static volatile uint64_t sink;

E2E_FN void inner(int i)
{
	sink += e2e_burn(1000, (uint64_t)i);
	longjmp(back, 1);
}

E2E_FN void middle(int i) { inner(i); sink++; }
E2E_FN void outer(int i) { middle(i); sink++; }

E2E_FN void landed(void) { e2e_spin_ms(2); }

E2E_FN void jump_driver(void)
{
	for (volatile int i = 0; i < 10; i++)
		if (setjmp(back) == 0)
			outer(i);
		else
			landed();
}

E2E_FN void after_jump(void) { e2e_spin_ms(20); }

int main(void)
{
	jump_driver();
	for (int i = 0; i < 3; i++)
		after_jump();
	return 0;
}
