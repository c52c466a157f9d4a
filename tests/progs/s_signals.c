/*
 * s_signals.c - sampling e2e target for the in-process sampler and the
 * program's own signals (tests sample.inproc_blocked_threads and
 * sample.inproc_own_handlers).
 *
 *   s_signals blocked   as liblzma starts its workers: every signal blocked
 *                       (pthread_sigmask) around pthread_create, so the
 *                       workers start with all blocked.  blocked_light burns
 *                       1 part and blocked_heavy 3 parts of CPU; a third
 *                       worker blocks every signal with the raw system call
 *                       (no library function the sampler could interpose)
 *                       and burns 2 parts in raw_blocked: it cannot be
 *                       sampled and must be counted so.  The program checks
 *                       that the mask it set reads back as it set it (but
 *                       for real-time signals, which it does not use).
 *   s_signals exiting   a worker named s_rawspin blocks every signal with the
 *                       raw system call and spins until the process exits
 *                       (main burns 2 parts in blocked_light, then exit):
 *                       counted as not sampled from its CPU time at exit.
 *   s_signals handlers  as GNU sort: a SIGPROF handler that cleans up and
 *                       re-raises with the default action, installed before
 *                       it burns CPU in handlers_burn; then its own profiling
 *                       timer (setitimer ITIMER_PROF) on a counting handler,
 *                       which must tick; then a handler on every real-time
 *                       signal, each raised once, each handler run once
 *                       (the sampler's own signal among them).
 *
 * Prints "blocked ok" / "handlers ok" and exits 0 when all went as asked.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "s_sample.h"

static volatile uint64_t sink;

#define S_BURN(name)                                          \
	S_FN uint64_t name(uint64_t n)                        \
	{                                                     \
		volatile uint64_t x = 1;                      \
		for (uint64_t i = 0; i < n; i++)              \
			x = x * S_MUL + S_ADD;                \
		return x;                                     \
	}
S_BURN(blocked_light)
S_BURN(blocked_heavy)
S_BURN(raw_blocked)
S_BURN(handlers_burn)

static void *light(void *arg)
{
	(void)arg;
	sink = blocked_light(s_iters(2.0));
	return NULL;
}

static void *heavy(void *arg)
{
	(void)arg;
	sink = blocked_heavy(s_iters(6.0));
	return NULL;
}

static void *raw(void *arg)
{
	(void)arg;
	uint64_t all = ~0ull;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	sink = raw_blocked(s_iters(4.0));
	return NULL;
}

static void *raw_spin(void *arg)
{
	(void)arg;
	uint64_t all = ~0ull;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
	pthread_setname_np(pthread_self(), "s_rawspin");
	for (;;)
		sink = raw_blocked(s_iters(1.0));
	return NULL;
}

static int run_exiting(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, raw_spin, NULL))
		return 1;
	sink = blocked_light(s_iters(2.0));
	printf("exiting ok\n");
	fflush(stdout);
	exit(0);
}

static int run_blocked(void)
{
	sigset_t all, old, now;
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
		return 1;
	/* what the program blocked reads back as blocked (real-time signals
	 * aside: the sampler may keep one of them for itself) */
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	for (int s = 1; s < SIGRTMIN; s++)
		if (s != SIGKILL && s != SIGSTOP && s != 32 && s != 33 && sigismember(&now, s) != 1) {
			printf("signal %d not blocked\n", s);
			return 1;
		}
	pthread_t t[3];
	if (pthread_create(&t[0], NULL, light, NULL) || pthread_create(&t[1], NULL, heavy, NULL) ||
	    pthread_create(&t[2], NULL, raw, NULL))
		return 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("blocked ok\n");
	return 0;
}

static void cleanup_and_reraise(int sig)
{
	/* GNU sort's sighandler: remove temporary files, then die of sig */
	signal(sig, SIG_DFL);
	raise(sig);
}

static volatile sig_atomic_t prof_ticks;
static volatile sig_atomic_t rt_count[128];

static void count_prof(int sig)
{
	(void)sig;
	prof_ticks++;
}

static void count_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si && si->si_signo == sig && sig < 128)
		rt_count[sig]++;
}

static int run_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cleanup_and_reraise;
	sigfillset(&sa.sa_mask); /* sort blocks every signal it catches while it cleans up */
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return 1;
	sink = handlers_burn(s_iters(4.0));
	/* its own profiling timer ticks on its own handler */
	signal(SIGPROF, count_prof);
	struct itimerval it = {{0, 10000}, {0, 10000}};
	setitimer(ITIMER_PROF, &it, NULL);
	sink = handlers_burn(s_iters(1.0));
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_IGN);
	if (prof_ticks < 1) {
		printf("its own ITIMER_PROF never ticked\n");
		return 1;
	}
	/* a handler on every real-time signal, each raised once */
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		struct sigaction rt, back;
		memset(&rt, 0, sizeof(rt));
		rt.sa_sigaction = count_rt;
		rt.sa_flags = SA_SIGINFO;
		sigemptyset(&rt.sa_mask);
		if (sigaction(s, &rt, NULL) != 0 || sigaction(s, NULL, &back) != 0 ||
		    back.sa_sigaction != count_rt || !(back.sa_flags & SA_SIGINFO)) {
			printf("signal %d: its handler does not read back\n", s);
			return 1;
		}
		raise(s);
		if (rt_count[s] != 1) {
			printf("signal %d: handler ran %d times, expected once\n", s, (int)rt_count[s]);
			return 1;
		}
	}
	sink = handlers_burn(s_iters(1.0));
	printf("handlers ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "blocked") == 0)
		return run_blocked();
	if (argc == 2 && strcmp(argv[1], "exiting") == 0)
		return run_exiting();
	if (argc == 2 && strcmp(argv[1], "handlers") == 0)
		return run_handlers();
	fprintf(stderr, "usage: s_signals blocked|exiting|handlers\n");
	return 2;
}
