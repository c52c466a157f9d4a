/*
 * throw_plugin.cc - a C++ library that throws and catches exceptions,
 * dlopen'ed by throw_host.c with RTLD_LOCAL: its libstdc++ and libgcc_s
 * are then in its own scope only, not the program's (test
 * e2e.exception_in_local_library).
 */
#include <stdexcept>

extern "C" int plugin_catches(int n)
{
	int caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			if (i % 3 == 0)
				throw std::runtime_error("every third");
		} catch (const std::exception &) {
			caught++;
		}
	}
	return caught;
}
