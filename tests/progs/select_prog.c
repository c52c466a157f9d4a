/*
 * select_prog.c - e2e target of record-time selection (stint record
 * --function, --not-function, --module, --depth, --min-duration; tests
 * e2e.select_*).
 *
 *   select_prog [N]
 *
 * main calls, in this order: alpha_one 10 times, alpha_two 20 times,
 * beta_one 30 times (tiny functions); chain_1 once (chain_1 -> chain_2 ->
 * chain_3 -> chain_4, each once); slow_sleep 3 times (a 20 ms sleep, never
 * shorter); tiny_loop once, which calls tiny_leaf N times (default 2000),
 * each a few nanoseconds of work.  Prints a checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void alpha_one(void) { sink += e2e_burn(3, 1); }
E2E_FN void alpha_two(void) { sink += e2e_burn(3, 2); }
E2E_FN void beta_one(void) { sink += e2e_burn(3, 3); }
E2E_FN void chain_4(void) { sink += e2e_burn(50, 4); }
E2E_FN void chain_3(void) { chain_4(); }
E2E_FN void chain_2(void) { chain_3(); }
E2E_FN void chain_1(void) { chain_2(); }

E2E_FN void slow_sleep(void)
{
	struct timespec ts = {0, 20000000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

E2E_FN void tiny_leaf(uint64_t i) { sink += e2e_burn(2, i); }

E2E_FN void tiny_loop(long n)
{
	for (long i = 0; i < n; i++)
		tiny_leaf((uint64_t)i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	for (int i = 0; i < 10; i++)
		alpha_one();
	for (int i = 0; i < 20; i++)
		alpha_two();
	for (int i = 0; i < 30; i++)
		beta_one();
	chain_1();
	for (int i = 0; i < 3; i++)
		slow_sleep();
	tiny_loop(n);
	printf("sum %llu\n", (unsigned long long)sink);
	return 0;
}
