/*
 * fib.c - call-heavy workloads for bench/bench-instrument.sh.
 *
 * Built three ways from this one file (see the script): plain -O2, -O2
 * -finstrument-functions (what stint, uftrace and the floor probe record)
 * and -O2 -pg (gprof).  Two workloads:
 *
 *   fib N      recursive Fibonacci: fib(N) makes 2*F(N+1)-1 calls of fib(),
 *              nothing else, so it is pure probe overhead (~1 ns of work
 *              per call).
 *   lib N      N iterations of a loop calling one small instrumented
 *              function, which calls strlen() and memcpy() in libc: a mix of
 *              instrumented calls and library calls (which a profiler may
 *              or may not probe at the PLT).
 *
 * It prints one line: "<workload> N result R calls C" where C is the number
 * of calls of instrumented functions the run makes, main included (library
 * calls not counted), computed without instrumenting anything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINST __attribute__((no_instrument_function))

/* noinline/noclone: every call must stay a real call, with its probes */
__attribute__((noinline, noclone)) static long fib(int n)
{
	if (n < 2)
		return n;
	long a = fib(n - 1);
	long b = fib(n - 2);
	/* keeps gcc from turning the second call into a loop (it does at -O2
	 * when no probe follows the call), so all three builds make the same calls */
	__asm__("" : "+r"(b));
	return a + b;
}

/* 2*F(n+1)-1 calls of fib() for fib(n) */
NOINST static unsigned long long fib_calls(int n)
{
	unsigned long long a = 0, b = 1; /* F(0), F(1) */
	for (int i = 0; i < n + 1; i++) {
		unsigned long long c = a + b;
		a = b;
		b = c;
	}
	return 2 * a - 1; /* a = F(n+1) */
}

static char lib_src[64];
static char lib_dst[64];

/* one small instrumented function calling two libc functions */
__attribute__((noinline, noclone)) static size_t lib_step(const char *s, size_t i)
{
	size_t n = strlen(s + (i & 7));
	memcpy(lib_dst, s, n);
	return n + (unsigned char)lib_dst[i & 15];
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "fib";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 32;
	if (strcmp(what, "fib") == 0) {
		long r = fib((int)n);
		printf("fib %ld result %ld calls %llu\n", n, r, fib_calls((int)n) + 1);
	} else if (strcmp(what, "lib") == 0) {
		/* the string comes from argv so nothing can be folded at build time */
		snprintf(lib_src, sizeof(lib_src), "%s-0123456789abcdefghijklmnopq", argv[0]);
		lib_src[40] = 0;
		size_t acc = 0;
		for (long i = 0; i < n; i++)
			acc += lib_step(lib_src, (size_t)i);
		printf("lib %ld result %zu calls %llu\n", n, acc, (unsigned long long)n + 1);
	} else {
		fprintf(stderr, "usage: %s fib|lib N\n", argv[0]);
		return 2;
	}
	return 0;
}
