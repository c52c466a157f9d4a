/*
 * fib_warm.c - the probes' own cost, apart from the memory and the kernel:
 * fib(N) timed by the TSC, B times, the fastest run kept, printed as ticks
 * per probe event.  fib(18) writes ~30 KB of events per run, so the buffer
 * stays in the caches and no chunk switch falls in the fastest run: what is
 * left is the probes' instructions.  bench/README.md ("Probe cost") says how
 * to compare stint with the floor probe and with no probes this way.
 *
 * Build: gcc -O2 -finstrument-functions -o fib_warm fib_warm.c
 * Run:   ./fib_warm 18 100            (glibc's no-op hooks)
 *        LD_PRELOAD=floor.so ./fib_warm 18 100
 *        stint record -o x.data -- ./fib_warm 18 100
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

__attribute__((noinline)) static long fib(int n)
{
	if (n < 2)
		return n;
	long a = fib(n - 1);
	__asm__ volatile(""); /* no tail call, as in fib.c */
	return a + fib(n - 2);
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 18;
	int runs = argc > 2 ? atoi(argv[2]) : 100;
	long (*volatile f)(int) = fib;
	long a = 0, b = 1; /* calls of fib(n): 2 F(n+1) - 1 */
	for (int i = 0; i < n; i++) {
		long c = a + b;
		a = b;
		b = c;
	}
	long calls = 2 * b - 1, sum = 0;
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < runs; r++) {
		uint64_t t0 = __rdtsc();
		sum += f(n);
		uint64_t d = __rdtsc() - t0;
		if (d < best)
			best = d;
	}
	printf("%.2f ticks per event (fib(%d), %ld calls, fastest of %d; sum %ld)\n",
	       (double)best / (2.0 * (double)calls), n, calls, runs, sum);
	return 0;
}
