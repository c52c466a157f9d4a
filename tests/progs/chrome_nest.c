/*
 * chrome_nest.c - export target (test export.chrome_nesting): calls whose
 * callers keep no time of their own once the probe cost is subtracted.
 *
 * fact(8) recurses down to fact(1), which calls leaf: each fact around its
 * one call has (compensated) the same start and end as the call, so a
 * trace whose nesting rests on times alone is ambiguous.  run calls leaf
 * many times in a row, each call starting as the one before ends; nap
 * sleeps, an interval off the CPU that is a whole call.
 */
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) double leaf(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += i * 0.5;
	return s;
}

__attribute__((noinline)) long fact(int n)
{
	if (n <= 1) {
		sink += leaf(2000);
		return 1;
	}
	return n * fact(n - 1);
}

__attribute__((noinline)) void run(void)
{
	for (int i = 0; i < 2000; i++)
		sink += leaf(20);
}

__attribute__((noinline)) void nap(void)
{
	usleep(2000);
}

int main(void)
{
	for (int i = 0; i < 2000; i++)
		sink += (double)fact(8);
	run();
	for (int i = 0; i < 3; i++)
		nap();
	return 0;
}
