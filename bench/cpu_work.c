/*
 * cpu_work.c - a CPU-bound workload for bench/bench-sample.sh (the sampling
 * benchmark: stint record -m sample against perf record).
 *
 * Built twice from this one file (see the script): -O2 -g
 * -fno-omit-frame-pointer (for frame-pointer unwinding) and -O2 -g
 * -fomit-frame-pointer (for DWARF unwinding).  No system calls, no memory
 * traffic: pure computation, so a profiler's cost shows up only as time
 * taken from the program (interrupts, stack copies) and nothing else.
 *
 *   cpu_work ROUNDS          ROUNDS rounds of work; prints
 *                            "work_ns=N rounds=R checksum=C"
 *   cpu_work --shares ROUNDS times each hot function on its own and prints
 *                            "share hot_a=P hot_b=P hot_c=P" (percent of
 *                            the three): the ground truth of the exclusive
 *                            percentages a profiler should find
 *
 * work_ns is the program's own measure of its work: CLOCK_MONOTONIC read
 * just before and just after the work loop, so the start-up and tear-down
 * of the process (and of a profiler around it) are left out.
 *
 * The call tree (each round; the numbers are the units of work, out of 10):
 *
 *   main
 *   └─ run_work                       (the timed loop)
 *      └─ do_round
 *         ├─ stage_parse
 *         │  └─ parse_fields
 *         │     └─ hot_a              5 units: 50 %
 *         └─ stage_solve
 *            ├─ solve_step
 *            │  └─ hot_b              3 units: 30 %
 *            └─ solve_step
 *               └─ refine
 *                  └─ hot_c           2 units: 20 %
 *
 * hot_a, hot_b and hot_c run the same inner loop (a dependency chain of
 * multiplies and shifts, so the cost per iteration is the same in all
 * three), for 5, 3 and 2 units of UNIT iterations: the time splits
 * 50/30/20 between them, and the functions above them have (almost) no
 * self time.  Every call is followed by an empty asm, so gcc cannot turn
 * it into a tail call (a jump) and every level keeps its frame on the
 * stack.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define UNIT 8000L /* iterations per unit of work: ~10 µs or so */
#define KEEP() __asm__ volatile("" ::: "memory")
#define NOINLINE __attribute__((noinline, noclone))

/* the shared kernel: a serial chain, the compiler cannot shorten it */
static inline __attribute__((always_inline)) uint64_t spin(uint64_t x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x ^= x >> 29;
		__asm__("" : "+r"(x));
	}
	return x;
}

NOINLINE uint64_t hot_a(uint64_t x) { x = spin(x, 5 * UNIT); KEEP(); return x; }
NOINLINE uint64_t hot_b(uint64_t x) { x = spin(x, 3 * UNIT); KEEP(); return x; }
NOINLINE uint64_t hot_c(uint64_t x) { x = spin(x, 2 * UNIT); KEEP(); return x; }

NOINLINE uint64_t parse_fields(uint64_t x) { x = hot_a(x); KEEP(); return x + 1; }
NOINLINE uint64_t stage_parse(uint64_t x) { x = parse_fields(x); KEEP(); return x + 1; }
NOINLINE uint64_t refine(uint64_t x) { x = hot_c(x); KEEP(); return x + 1; }

NOINLINE uint64_t solve_step(uint64_t x, int fine)
{
	x = fine ? refine(x) : hot_b(x);
	KEEP();
	return x + 1;
}

NOINLINE uint64_t stage_solve(uint64_t x)
{
	x = solve_step(x, 0);
	KEEP();
	x = solve_step(x, 1);
	KEEP();
	return x + 1;
}

NOINLINE uint64_t do_round(uint64_t x)
{
	x = stage_parse(x);
	KEEP();
	x = stage_solve(x);
	KEEP();
	return x;
}

NOINLINE uint64_t run_work(long rounds)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (long r = 0; r < rounds; r++) {
		x = do_round(x);
		KEEP();
	}
	return x;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --shares: each hot function alone, in turn, several times; the minimum
 * per call of each is its cost, and the shares follow */
static int shares(long rounds)
{
	uint64_t (*fn[3])(uint64_t) = {hot_a, hot_b, hot_c};
	const char *name[3] = {"hot_a", "hot_b", "hot_c"};
	int64_t best[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
	uint64_t x = 1;
	for (int rep = 0; rep < 5; rep++)
		for (int f = 0; f < 3; f++) {
			int64_t t0 = now_ns();
			for (long r = 0; r < rounds; r++)
				x = fn[f](x);
			int64_t dt = now_ns() - t0;
			if (dt < best[f])
				best[f] = dt;
		}
	double sum = (double)best[0] + best[1] + best[2];
	printf("share");
	for (int f = 0; f < 3; f++)
		printf(" %s=%.2f", name[f], 100.0 * best[f] / sum);
	printf(" checksum=%llu\n", (unsigned long long)(x & 0xffff));
	return 0;
}

int main(int argc, char **argv)
{
	int share_mode = argc > 1 && strcmp(argv[1], "--shares") == 0;
	const char *arg = argc > 1 + share_mode ? argv[1 + share_mode] : NULL;
	char *end = NULL;
	long rounds = arg ? strtol(arg, &end, 10) : 0;
	if (!arg || *end || rounds < 1) {
		fprintf(stderr, "usage: cpu_work [--shares] ROUNDS\n");
		return 2;
	}
	if (share_mode)
		return shares(rounds);
	int64_t t0 = now_ns();
	uint64_t x = run_work(rounds);
	int64_t t1 = now_ns();
	printf("work_ns=%lld rounds=%ld checksum=%llu\n", (long long)(t1 - t0), rounds,
	       (unsigned long long)(x & 0xffff));
	return 0;
}
