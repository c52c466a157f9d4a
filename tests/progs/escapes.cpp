/*
 * escapes.cpp - e2e target: jumping out of library calls (tests
 * e2e.escape_*).  Usage: e2e_escapes MODE [ROUNDS]
 *
 *   qsort     longjmp out of a qsort comparator, ROUNDS times (default 300,
 *             more than the 256 calls in flight stint once kept per thread)
 *   signal    siglongjmp out of a SIGUSR1 handler run inside raise()
 *   errlib    libpng-style: libe2e_errlib.so (not instrumented) longjmps by
 *             itself out of its frames and the program's callback
 *   ucontext  two generators on ucontext stacks side by side, each sorting
 *             with qsort and yielding from its comparator, driven from the
 *             comparator of main's own qsort; then a loop of 3 rounds made
 *             with getcontext and setcontext (ROUNDS ignored)
 *
 * Then every mode sorts once more normally (library calls must still be
 * recorded) and throws a C++ exception through 3 frames 5 times, caught in
 * a frame whose locals cover the stack where the escaped calls were: a
 * profiler that writes to stale return slots changes their checksum.  It
 * prints what it computed, the same with and without stint, and lines
 * "calls NAME N" with the calls of its instrumented functions.
 */
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <ucontext.h>

#include "e2e_prog.h"

extern "C" {
void errlib_set_handler(jmp_buf *jb);
int errlib_process(int (*cb)(int), int n);
}

static int n_cmp_escape, n_escape_round, n_on_usr1, n_signal_round, n_errcb, n_errlib_round;
static int n_cmp_main, n_cmp_gen, n_gen_body, n_cmp_plain, n_throw_level, n_catch_level;
static int escaped;

static int icmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void fill(int *a, int n, int seed)
{
	for (int i = 0; i < n; i++)
		a[i] = (i * 37 + seed * 11) % (n + 3);
}

/* --- qsort ---------------------------------------------------------------- */
static jmp_buf qjb;
static int qsteps;

E2E_FN int cmp_escape(const void *a, const void *b)
{
	n_cmp_escape++;
	if (++qsteps == 3)
		longjmp(qjb, 1);
	return icmp(a, b);
}

E2E_FN void escape_round(int r)
{
	n_escape_round++;
	int arr[16];
	fill(arr, 16, r);
	qsteps = 0;
	if (setjmp(qjb) == 0)
		qsort(arr, 16, sizeof(int), cmp_escape);
	else
		escaped++;
}

/* --- signal --------------------------------------------------------------- */
static sigjmp_buf sjb;

E2E_FN void on_usr1(int sig)
{
	(void)sig;
	n_on_usr1++;
	siglongjmp(sjb, 1);
}

E2E_FN void signal_round(void)
{
	n_signal_round++;
	if (sigsetjmp(sjb, 1) == 0)
		raise(SIGUSR1);
	else
		escaped++;
}

/* --- errlib --------------------------------------------------------------- */
E2E_FN int errcb(int i)
{
	n_errcb++;
	return i == 5 ? -1 : i;
}

E2E_FN void errlib_round(void)
{
	n_errlib_round++;
	jmp_buf jb;
	errlib_set_handler(&jb);
	if (setjmp(jb) == 0)
		printf("errlib sum %d\n", errlib_process(errcb, 10));
	else
		escaped++;
}

/* --- ucontext ------------------------------------------------------------- */
static ucontext_t main_uc, gen_uc[2];
static char gen_stack[2][64 * 1024]; /* side by side */
static int gen_arr[2][24], main_arr[12];
static volatile int gen_done[2];
static int cur_gen, gen_yields[2];

E2E_FN int cmp_gen(const void *a, const void *b)
{
	n_cmp_gen++;
	int g = cur_gen;
	gen_yields[g]++;
	swapcontext(&gen_uc[g], &main_uc);
	return icmp(a, b);
}

E2E_FN void gen_body(int g)
{
	n_gen_body++;
	qsort(gen_arr[g], 24, sizeof(int), cmp_gen);
	gen_done[g] = 1;
}

static void resume(int g)
{
	cur_gen = g;
	swapcontext(&main_uc, &gen_uc[g]);
}

E2E_FN int cmp_main(const void *a, const void *b)
{
	n_cmp_main++;
	for (int g = 0; g < 2; g++)
		if (!gen_done[g])
			resume(g);
	return icmp(a, b);
}

static void run_ucontext(void)
{
	for (int g = 0; g < 2; g++) {
		fill(gen_arr[g], 24, g + 1);
		getcontext(&gen_uc[g]);
		gen_uc[g].uc_stack.ss_sp = gen_stack[g];
		gen_uc[g].uc_stack.ss_size = sizeof(gen_stack[g]);
		gen_uc[g].uc_link = &main_uc;
		makecontext(&gen_uc[g], (void (*)(void))gen_body, 1, g);
	}
	fill(main_arr, 12, 7);
	qsort(main_arr, 12, sizeof(int), cmp_main);
	for (int g = 0; g < 2; g++)
		while (!gen_done[g])
			resume(g);
	/* a loop through setcontext: getcontext returns 4 times, called once */
	static ucontext_t loop_uc;
	static volatile int loop_rounds;
	getcontext(&loop_uc);
	if (loop_rounds < 3) {
		loop_rounds++;
		setcontext(&loop_uc);
	}
	printf("setcontext rounds %d\n", loop_rounds);
	for (int g = 0; g < 2; g++) {
		printf("gen %d yields %d:", g, gen_yields[g]);
		for (int i = 0; i < 24; i++)
			printf(" %d", gen_arr[g][i]);
		printf("\n");
	}
}

/* --- after the escapes ---------------------------------------------------- */
E2E_FN int cmp_plain(const void *a, const void *b)
{
	n_cmp_plain++;
	return icmp(a, b);
}

E2E_FN int throw_level(int d)
{
	n_throw_level++;
	volatile int pad[8] = {d, d, d, d, d, d, d, d};
	if (d == 0)
		throw std::runtime_error("deep");
	return throw_level(d - 1) + pad[3];
}

E2E_FN unsigned catch_level(int round)
{
	n_catch_level++;
	volatile unsigned locals[2048];
	for (unsigned i = 0; i < 2048; i++)
		locals[i] = i * 2654435761u + (unsigned)round;
	try {
		throw_level(2);
	} catch (const std::exception &e) {
		locals[0] += (unsigned)strlen(e.what());
	}
	unsigned sum = 0;
	for (unsigned i = 0; i < 2048; i++)
		sum = sum * 31 + locals[i];
	return sum;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: e2e_escapes qsort|signal|errlib|ucontext [ROUNDS]\n");
		return 2;
	}
	int rounds = argc > 2 ? atoi(argv[2]) : 300;
	if (strcmp(argv[1], "qsort") == 0) {
		for (int r = 0; r < rounds; r++)
			escape_round(r);
	} else if (strcmp(argv[1], "signal") == 0) {
		signal(SIGUSR1, on_usr1);
		for (int r = 0; r < rounds; r++)
			signal_round();
	} else if (strcmp(argv[1], "errlib") == 0) {
		for (int r = 0; r < rounds; r++)
			errlib_round();
	} else if (strcmp(argv[1], "ucontext") == 0) {
		run_ucontext();
	} else {
		return 2;
	}
	printf("escaped %d\n", escaped);
	int arr[40];
	fill(arr, 40, 3);
	qsort(arr, 40, sizeof(int), cmp_plain);
	for (int i = 0; i < 40; i++)
		printf("%d%c", arr[i], i == 39 ? '\n' : ' ');
	for (int r = 0; r < 5; r++)
		printf("checksum %u\n", catch_level(r));
	printf("calls cmp_escape %d\ncalls escape_round %d\ncalls on_usr1 %d\ncalls signal_round %d\n"
	       "calls errcb %d\ncalls errlib_round %d\ncalls cmp_main %d\ncalls cmp_gen %d\n"
	       "calls gen_body %d\ncalls cmp_plain %d\ncalls throw_level %d\ncalls catch_level %d\n",
	       n_cmp_escape, n_escape_round, n_on_usr1, n_signal_round, n_errcb, n_errlib_round,
	       n_cmp_main, n_cmp_gen, n_gen_body, n_cmp_plain, n_throw_level, n_catch_level);
	return 0;
}
