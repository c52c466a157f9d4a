/*
 * chdir_threads.c - e2e target: the program changes directory, then starts
 * a thread and makes enough calls to fill several spool chunks
 * (tests e2e.program_changes_directory, sample.inproc_after_chdir).
 *
 *   chdir_threads          main: chdir("/"), then a thread calls
 *                          worker_step 300000 times while main calls
 *                          main_step 300000 times; then forks a child that
 *                          calls child_step 10 times.
 *   chdir_threads spin     the same shape, but each thread computes
 *                          ~300 ms in worker_spin / main_spin (for sampling).
 */
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_prog.h"

#define CALLS 300000

static volatile uint64_t sink;
static int spin;

E2E_FN void worker_step(void) { sink += e2e_burn(2, 1); }
E2E_FN void main_step(void) { sink += e2e_burn(2, 2); }
E2E_FN void child_step(void) { sink += e2e_burn(2, 3); }
E2E_FN void worker_spin(void) { e2e_spin_ms(300); }
E2E_FN void main_spin(void) { e2e_spin_ms(300); }

E2E_FN void *worker_main(void *arg)
{
	(void)arg;
	if (spin)
		worker_spin();
	else
		for (int i = 0; i < CALLS; i++)
			worker_step();
	return NULL;
}

int main(int argc, char **argv)
{
	spin = argc > 1 && strcmp(argv[1], "spin") == 0;
	if (chdir("/") < 0)
		return 2;
	pthread_t t;
	if (pthread_create(&t, NULL, worker_main, NULL))
		return 1;
	if (spin)
		main_spin();
	else
		for (int i = 0; i < CALLS; i++)
			main_step();
	pthread_join(t, NULL);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 10; i++)
			child_step();
		_exit(0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}
