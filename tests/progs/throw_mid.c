/*
 * throw_mid.c - the C function an exception passes through in
 * throw_through.cpp: instrumented, compiled without -fexceptions, so no
 * cleanup calls its exit probe as the exception leaves it.
 */
__attribute__((noinline)) long mid(long (*cb)(long), long x)
{
	long r = cb(x);
	return r + 1;
}
