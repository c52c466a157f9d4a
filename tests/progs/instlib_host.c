/*
 * instlib_host.c - e2e target linked against the instrumented
 * libe2e_instlib.so (test e2e.instrumented_library): main calls
 * instlib_work 7 times and usleep (an uninstrumented library's) once.
 */
#include <unistd.h>

#include "e2e_prog.h"

int instlib_work(int i);

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 7; i++)
		sum += instlib_work(i);
	usleep(100);
	return sum == 4 * 5 + 3 * 9 ? 0 : 1;
}
