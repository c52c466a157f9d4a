/*
 * instlib.c - libe2e_instlib.so, a shared library built WITH
 * -finstrument-functions (test e2e.instrumented_library, with
 * instlib_host.c): its functions have probes of their own, so calls into
 * it must not be probed a second time as library calls.
 *
 * instlib_work(i) calls instlib_leaf once and strlen (libc) once.
 */
#include <string.h>

#include "e2e_prog.h"

static volatile uint64_t sink;
static const char *volatile words[2] = {"alpha", "gamma ray"};

E2E_FN int instlib_leaf(int i) { sink += e2e_burn(200, (uint64_t)i); return i & 1; }

E2E_FN int instlib_work(int i)
{
	return (int)strlen(words[instlib_leaf(i)]);
}
