/*
 * patch_mix.c - e2e target for programs instrumented through their patch
 * sites (tests e2e.patched_*): built with -finstrument-functions, with
 * -pg -mfentry and with -fpatchable-function-entry=5, it must print the
 * same lines under stint as without it, and give the same call counts.
 *
 * It exercises what a swapped return address could break: arguments and
 * return values in every register class (integers, doubles, long double
 * in x87, a struct in memory, varargs), tail calls between patched
 * functions, recursion, function pointers, longjmp out of patched frames,
 * a signal handler that calls patched functions (also on a signal stack
 * above the interrupted frames), threads and fork.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

struct big { long a, b, c, d; };

E2E_FN double scale(double x, double y) { return x * y + 0.5; }
E2E_FN long double widen(long double x) { return x * 3.0L; }
E2E_FN struct big make_big(long s) { struct big b = {s, s + 1, s + 2, s + 3}; return b; }
E2E_FN long sum_va(int n, ...)
{
	va_list ap;
	va_start(ap, n);
	long s = 0;
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}
E2E_FN long many_args(long a, long b, long c, long d, long e, long f, long g, long h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}
E2E_FN long tail_b(long x);
E2E_FN long tail_a(long x) { return x <= 0 ? 1 : tail_b(x - 1); }      /* a tail call at -O2 */
E2E_FN long tail_b(long x) { return x <= 0 ? 2 : tail_a(x - 1) + 0; }
/* recursion kept as calls: -finstrument-functions keeps it so (the exit
 * probe follows each call), at -O2 a plain build would make loops of it */
#define E2E_RECURSE E2E_FN __attribute__((optimize("no-optimize-sibling-calls")))
E2E_RECURSE long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
E2E_FN long via_pointer(long (*fn)(long), long x) { return fn(x) + 1; }

static jmp_buf back;
E2E_RECURSE void jump_deep(int d)
{
	if (d < 0)
		return;
	if (d == 0)
		longjmp(back, 1);
	jump_deep(d - 1);
}
E2E_FN int jumper(void)
{
	volatile int n = 0;
	for (volatile int i = 0; i < 5; i++)
		if (setjmp(back) == 0)
			jump_deep(3);
		else
			n++;
	return n;
}

static volatile long handled;
E2E_FN void on_signal_work(int sig) { handled += sig; }
E2E_FN void on_signal(int sig) { on_signal_work(sig); }

/* a handler on a signal stack that lies above the interrupted patched
 * frames (inside main's frame): its frames must not end theirs */
E2E_FN long alt_work(long x) { return x * 7; }
E2E_FN void on_alt_signal(int sig) { handled += alt_work(sig); }
E2E_FN long alt_inner(long x)
{
	raise(SIGUSR2);
	return x + 1;
}
E2E_FN long alt_outer(long x) { return alt_inner(x) * 2; }

E2E_FN void *thread_body(void *arg)
{
	long n = (long)(intptr_t)arg;
	return (void *)(intptr_t)fib(n);
}

int main(void)
{
	printf("scale %.3f\n", scale(1.25, 4.0));
	printf("widen %.3Lf\n", widen(1.5L));
	struct big b = make_big(10);
	printf("big %ld %ld %ld %ld\n", b.a, b.b, b.c, b.d);
	printf("va %ld\n", sum_va(4, 1L, 2L, 3L, 4L));
	printf("args %ld\n", many_args(1, 2, 3, 4, 5, 6, 7, 8));
	printf("tail %ld %ld\n", tail_a(9), tail_a(10));
	printf("fib %ld\n", fib(15));
	printf("pointer %ld\n", via_pointer(fib, 10));
	printf("jumps %d\n", jumper());
	signal(SIGUSR1, on_signal);
	for (int i = 0; i < 3; i++)
		raise(SIGUSR1);
	printf("handled %ld\n", handled);
	static char alt_fallback[1];
	char alt[65536];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof(alt), .ss_flags = 0};
	struct sigaction sa = {.sa_handler = on_alt_signal, .sa_flags = SA_ONSTACK};
	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) == 0 && sigaction(SIGUSR2, &sa, NULL) == 0) {
		long r = alt_outer(4);
		printf("alt %ld handled %ld\n", r, handled);
	}
	ss.ss_flags = SS_DISABLE;
	ss.ss_sp = alt_fallback;
	sigaltstack(&ss, NULL);
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, thread_body, (void *)(intptr_t)(10 + i));
	for (int i = 0; i < 3; i++) {
		void *r;
		pthread_join(t[i], &r);
		printf("thread %d %ld\n", i, (long)(intptr_t)r);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child fib %ld\n", fib(12));
		fflush(stdout);
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
