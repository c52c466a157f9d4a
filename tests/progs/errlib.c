/*
 * errlib.c - libe2e_errlib.so, a library NOT built for instrumentation that
 * handles errors the way libpng does: it longjmps itself to a jmp_buf the
 * program registered, out of its own frames and the program's callback
 * (test e2e.escape_errlib, with escapes.cpp).  The longjmp is the
 * library's own call, which stint does not see.
 */
#include <setjmp.h>

static jmp_buf *errlib_handler;

void errlib_set_handler(jmp_buf *jb) { errlib_handler = jb; }

/* Calls cb(0..n-1) and sums the results; a negative one is an error. */
int errlib_process(int (*cb)(int), int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++) {
		int v = cb(i);
		if (v < 0)
			longjmp(*errlib_handler, 1);
		sum += v;
	}
	return sum;
}
