/*
 * cxx_names.cpp - e2e C++ target (g++ -finstrument-functions).
 * Usage: e2e_cxx_names names|exceptions|libthrow
 *
 * names (test e2e.cxx_demangled_names): Foo::bar(int) 10 calls,
 *   Foo::Foo(int) 1 (constructor), int twice<int>(int) 4,
 *   double twice<double>(double) 2, geometry::area(double, double) 3.
 * exceptions (test e2e.cxx_exception_through_frames): 5 rounds of
 *   level_a(int) -> level_b(int) -> level_c(int), which throws Oops, caught
 *   in main; then after_catch() twice (about 20 ms of CPU each).  GCC runs
 *   the exit probes of the unwound frames, so level_c's time must not
 *   include after_catch's.
 * libthrow (test e2e.cxx_exception_from_library): 5 times alloc_huge(int)
 *   calls ::operator new with an impossible size, which throws
 *   std::bad_alloc from inside libstdc++ (through a probed library call);
 *   caught in main; then after_catch() twice.  Exits 0 if all 5 were caught.
 */
#include <cstdint>
#include <cstdio>
#include <new>
#include <cstring>
#include <ctime>

#define E2E_FN __attribute__((noipa))

static volatile unsigned long sink;

class Foo {
public:
	explicit Foo(int k);
	int bar(int x);
private:
	int k_;
};

E2E_FN Foo::Foo(int k) : k_(k) {}
E2E_FN int Foo::bar(int x) { return x * k_ + (int)(sink & 1); }

template <typename T> E2E_FN T twice(T v) { return v + v; }

namespace geometry {
E2E_FN double area(double w, double h) { return w * h; }
}

struct Oops {
	int code;
};

E2E_FN void level_c(int i) { throw Oops{i}; }
E2E_FN void level_b(int i) { level_c(i); sink++; }
E2E_FN void level_a(int i) { level_b(i); sink++; }

__attribute__((no_instrument_function)) static void spin_ms(double ms)
{
	timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 2000; i++)
			sink = sink * 6364136223846793005ul + 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

E2E_FN void after_catch() { spin_ms(20); }

E2E_FN void *alloc_huge(int i)
{
	void *p = ::operator new(SIZE_MAX / 2 - (size_t)i);
	sink++;
	return p;
}

int main(int argc, char **argv)
{
	if (argc == 2 && std::strcmp(argv[1], "names") == 0) {
		Foo f(3);
		long s = 0;
		for (int i = 0; i < 10; i++)
			s += f.bar(i);
		for (int i = 0; i < 4; i++)
			s += twice<int>(i);
		for (int i = 0; i < 2; i++)
			s += (long)twice<double>(i + 0.5);
		for (int i = 0; i < 3; i++)
			s += (long)geometry::area(i, 2.0);
		sink += (unsigned long)s;
		return 0;
	}
	if (argc == 2 && std::strcmp(argv[1], "exceptions") == 0) {
		int caught = 0;
		for (int i = 0; i < 5; i++) {
			try {
				level_a(i);
			} catch (const Oops &o) {
				caught += o.code == i;
			}
		}
		for (int i = 0; i < 2; i++)
			after_catch();
		return caught == 5 ? 0 : 1;
	}
	if (argc == 2 && std::strcmp(argv[1], "libthrow") == 0) {
		int caught = 0;
		for (int i = 0; i < 5; i++) {
			try {
				::operator delete(alloc_huge(i));
			} catch (const std::bad_alloc &) {
				caught++;
			}
		}
		for (int i = 0; i < 2; i++)
			after_catch();
		return caught == 5 ? 0 : 1;
	}
	std::fprintf(stderr, "usage: e2e_cxx_names names|exceptions|libthrow\n");
	return 2;
}
