/*
 * dataref_lib.c - e2e library (test e2e.unprobed_library_calls), built
 * -finstrument-functions and linked without its host, as a Python
 * extension is without libpython: host_counter, a variable the host
 * program defines, is an undefined symbol of no type here, reached through
 * a GOT entry the code reads.  It is data, not a function whose calls go
 * unrecorded: stint must not name it.
 */
extern int host_counter;

int dataref_bump(void)
{
	return ++host_counter;
}
