/*
 * patch_cxx.cpp - e2e target for C++ exceptions through patched frames
 * (test e2e.patched_cxx_rethrow): built with -finstrument-functions, with
 * -pg -mfentry and with -fpatchable-function-entry=5, it must print the same
 * lines under stint as without it, with the same call counts.
 *
 * A rethrow from a catch block (its cleanup calls __cxa_end_catch while the
 * exception is still in flight), a destructor that throws and catches
 * inside itself while an exception unwinds through it,
 * std::rethrow_exception, and calls made after each catch (the live frames
 * must have their return probes again).
 */
#include <cstdio>
#include <exception>
#include <stdexcept>

#define FN __attribute__((noipa))

static volatile long sink;

FN void leaf_throw(int i)
{
	if (i >= 0)
		throw std::runtime_error("leaf");
	sink++;
}
FN void mid(int i) { leaf_throw(i); sink++; }
FN int rethrower(int i)
{
	try {
		mid(i);
	} catch (...) {
		sink++;
		throw;
	}
	return 0;
}
FN int quiet_work(int i) { return i * 2 + 1; }

struct Guard {
	~Guard()
	{
		try {
			leaf_throw(1);
		} catch (const std::exception &) {
			sink += quiet_work(3);
		}
	}
};
FN void guarded(int i)
{
	Guard g;
	mid(i);
}
FN std::exception_ptr capture(int i)
{
	try {
		mid(i);
	} catch (...) {
		return std::current_exception();
	}
	return nullptr;
}
FN void replay(std::exception_ptr p) { std::rethrow_exception(p); }
FN int outer_loop(int n)
{
	int caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			rethrower(i);
		} catch (const std::runtime_error &) {
			caught++;
		}
		try {
			guarded(i);
		} catch (const std::runtime_error &) {
			caught++;
		}
		try {
			replay(capture(i));
		} catch (const std::runtime_error &) {
			caught++;
		}
		sink += quiet_work(i);
	}
	return caught;
}

int main()
{
	std::printf("caught %d\n", outer_loop(4));
	std::printf("work %d\n", quiet_work(20));
	std::printf("sink %ld\n", (long)sink);
	return 0;
}
