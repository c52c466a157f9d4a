/*
 * preinit.c - e2e target: instrumented functions run from .preinit_array,
 * before any constructor, while libc has not yet set environ
 * (test e2e.preinit_array_functions).
 *
 * early_init runs from .preinit_array and calls early_step 3 times; then
 * main calls main_step 5 times.  Every one of these calls is recorded.
 */
#include "e2e_prog.h"

static volatile uint64_t sink;

E2E_FN void early_step(void) { sink += e2e_burn(1000, 3); }

E2E_FN void early_init(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	(void)envp;
	for (int i = 0; i < 3; i++)
		early_step();
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit)(int, char **,
									     char **) = early_init;

E2E_FN void main_step(void) { sink += e2e_burn(1000, 5); }

int main(void)
{
	for (int i = 0; i < 5; i++)
		main_step();
	return 0;
}
