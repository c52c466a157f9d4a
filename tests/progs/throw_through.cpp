/*
 * throw_through.cpp - e2e target (test e2e.exception_closes_frames): an
 * exception thrown every tenth call, through a C function without cleanups
 * (throw_mid.c), caught in loop().  Every frame it leaves must be closed at
 * the catch: left open, the catching loop's later calls were charged to
 * the thrower (clang's -finstrument-functions calls no exit probe while
 * unwinding; C code has no cleanups to call one).
 */
#include <cstdio>
#include <stdexcept>

extern "C" long mid(long (*cb)(long), long x);

extern "C" __attribute__((noinline)) long thrower(long i)
{
	if (i % 10 == 9)
		throw std::runtime_error("ninth");
	return i & 3;
}

__attribute__((noinline)) long spin(long n)
{
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s = s + (i ^ (s >> 3));
	return s;
}

__attribute__((noinline)) long loop(int n)
{
	long acc = 0;
	for (int i = 0; i < n; i++) {
		try {
			acc += mid(thrower, i);
		} catch (const std::exception &) {
			acc++;
		}
		acc += spin(1000);
	}
	return acc;
}

int main()
{
	std::printf("%ld\n", loop(100));
	return 0;
}
