/*
 * chdir_thread.c - e2e target (run_safety.py chdir_then_thread): changes
 * its directory to "/", then starts a thread that calls step() 5 times;
 * main calls step() 5 times too.  Both threads must be recorded although
 * the data file was given by a relative path.
 */
#include <pthread.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void step(void) { sink += e2e_burn(20000, 1); }

static void *worker(void *arg)
{
	for (int i = 0; i < 5; i++)
		step();
	return arg;
}

int main(void)
{
	if (chdir("/") < 0)
		return 2;
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 5; i++)
		step();
	pthread_join(t, NULL);
	return 0;
}
