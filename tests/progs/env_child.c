/*
 * env_child.c - e2e target started by spawn_env.c with environments of its
 * own (test e2e.children_with_own_environment).
 *
 * Calls env_child_work once, then checks its environment: E2E_MARK is set,
 * E2E_PRELOAD_ALSO (when set) still names its entry in LD_PRELOAD, and
 * nothing is there but E2E_*, LD_PRELOAD and the profiler's STINT_*
 * variables.  Exit status 0 when so, 3 (and a line on stderr) when not.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void env_child_work(void) { sink += e2e_burn(1000, 11); }

int main(void)
{
	env_child_work();
	const char *mark = getenv("E2E_MARK");
	if (!mark) {
		fprintf(stderr, "env_child: no E2E_MARK\n");
		return 3;
	}
	const char *also = getenv("E2E_PRELOAD_ALSO");
	const char *pre = getenv("LD_PRELOAD");
	if (also && (!pre || !strstr(pre, also))) {
		fprintf(stderr, "env_child %s: LD_PRELOAD %s lost %s\n", mark, pre ? pre : "(unset)", also);
		return 3;
	}
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "E2E_", 4) && strncmp(*e, "STINT_", 6) && strncmp(*e, "LD_PRELOAD=", 11)) {
			fprintf(stderr, "env_child %s: unexpected variable %s\n", mark, *e);
			return 3;
		}
	return 0;
}
