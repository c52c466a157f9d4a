/*
 * deep_recursion.c - e2e target: recursion 200,000 calls deep (test
 * e2e.deep_recursion_views): every view and export of its recording must
 * stay linear in the data (no C-stack recursion over the tree, no output
 * growing with the square of the depth).  recurse goes 200,000 deep once,
 * then ping and pong call each other 20,000 deep (indirect recursion).
 * Runs in a thread with a 256 MiB stack.  Built at -O0.
 */
#include <pthread.h>

#include "e2e_prog.h"

#define DEPTH 200000
#define PINGPONG 20000

static volatile uint64_t sink;

E2E_FN uint64_t recurse(int depth)
{
	if (depth == 0)
		return e2e_burn(1000, 3);
	return recurse(depth - 1) + 1;
}

E2E_FN uint64_t pong(int depth);

E2E_FN uint64_t ping(int depth)
{
	return depth == 0 ? e2e_burn(1000, 4) : pong(depth - 1) + 1;
}

E2E_FN uint64_t pong(int depth)
{
	return depth == 0 ? e2e_burn(1000, 5) : ping(depth - 1) + 1;
}

E2E_FN void *deep(void *arg)
{
	(void)arg;
	sink += recurse(DEPTH);
	sink += ping(PINGPONG);
	return NULL;
}

int main(void)
{
	pthread_attr_t a;
	pthread_t t;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256u << 20);
	if (pthread_create(&t, &a, deep, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
