/*
 * s_inline.c - sampling e2e target (test sample.inline_functions, and the
 * inlined-code case of bench/bench-sample.sh).
 *
 * Static functions that the compiler inlines at -O2 (always_inline makes
 * sure of it): main -> hash_values (inlined) -> mix_round (inlined, twice
 * deeper), and main -> sort_values (inlined) -> swap_down (inlined).  None
 * of them has a symbol or a frame of its own: their samples are found only
 * through the DWARF inline scopes (doc/numbers.md (sampling), inlined functions).
 * Iteration counts set the shares: about half of the CPU time under
 * hash_values, 35-40% under sort_values, the rest in finish (S_FN, a real
 * function: the control, an ordinary frame).
 */
#include <stdio.h>

#include "s_sample.h"

#define INL static inline __attribute__((always_inline))

static volatile uint64_t sink;
static uint64_t vals[256];

INL uint64_t mix_round(uint64_t x)
{
	x ^= x >> 29;
	x *= S_MUL;
	x ^= x >> 31;
	return x + S_ADD;
}

INL uint64_t hash_values(uint64_t n)
{
	uint64_t h = 1;
	for (uint64_t i = 0; i < n; i++) {
		h = mix_round(h ^ vals[i & 255]);
		sink = h;
	}
	return h;
}

INL void swap_down(uint64_t *v, unsigned j)
{
	while (j > 0 && v[j - 1] > v[j]) {
		uint64_t t = v[j];
		v[j] = v[j - 1];
		v[j - 1] = t;
		j--;
	}
}

INL uint64_t sort_values(uint64_t rounds)
{
	uint64_t s = 0;
	for (uint64_t r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < 256; i++)
			vals[i] = vals[i] * S_MUL + S_ADD + r;
		for (unsigned i = 1; i < 256; i++)
			swap_down(vals, i);
		s += vals[0];
	}
	return s;
}

S_FN uint64_t finish(uint64_t x)
{
	volatile uint64_t y = x;
	uint64_t n = s_iters(2);
	for (uint64_t i = 0; i < n; i++)
		y = y * S_MUL + S_ADD;
	return y;
}

int main(void)
{
	for (unsigned i = 0; i < 256; i++)
		vals[i] = i * S_MUL;
	uint64_t h = hash_values(s_iters(4));
	uint64_t s = sort_values(s_iters(18) / 40000);
	sink = finish(h + s);
	printf("inline done %llu\n", (unsigned long long)sink);
	return 0;
}
