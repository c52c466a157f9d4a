/*
 * dataref_host.c - e2e target (test e2e.unprobed_library_calls): defines
 * host_counter for libe2e_dataref.so (dataref_lib.c), which it calls 5
 * times.
 */
#include <stdio.h>

int host_counter;
int dataref_bump(void);

int main(void)
{
	for (int i = 0; i < 5; i++)
		dataref_bump();
	printf("counter %d\n", host_counter);
	return 0;
}
