/*
 * patch_xmm.c - e2e target for the program's xmm registers across the
 * probes of patched functions (test e2e.patched_xmm_registers): the
 * trampolines save the general registers only, and the runtime's slow
 * paths keep the vector ones around their C library calls (runtime/rt.c,
 * RT_VEC_KEEP).  A caller in assembly keeps xmm0-15 across calls of
 * leaf(), as a caller built with GCC's -fipa-ra may when it knows its
 * callee leaves them alone; leaf() is built without SSE, so only a probe
 * could change them.  300000 calls on the main thread (its first probe,
 * a new function, several chunk switches) and 100000 on a second thread
 * (its recording starts at leaf's entry).  Prints the registers found
 * changed, and leaf's sum: the same under stint as alone.
 */
#include <pthread.h>
#include <stdio.h>

#include "e2e_prog.h"

E2E_FN __attribute__((target("general-regs-only"))) long leaf(long x)
{
	return x * 3 + 1;
}

/* xmm<k> := (i + k, i + k) */
#define SET(k) "lea " #k "(%%r13), %%rax\n\tmovq %%rax, %%xmm" #k "\n\tpunpcklqdq %%xmm" #k ", %%xmm" #k "\n\t"
/* bad += each half of xmm<k> that is not i + k */
#define CHECK(k)                                                                                   \
	"lea " #k "(%%r13), %%rcx\n\tmovq %%xmm" #k ", %%rax\n\tcmp %%rcx, %%rax\n\tsetne %%dl\n\t"  \
	"movzbq %%dl, %%rdx\n\tadd %%rdx, %%rbx\n\tpunpckhqdq %%xmm" #k ", %%xmm" #k "\n\t"           \
	"movq %%xmm" #k ", %%rax\n\tcmp %%rcx, %%rax\n\tsetne %%dl\n\tmovzbq %%dl, %%rdx\n\t"         \
	"add %%rdx, %%rbx\n\t"

static long call_keeping_xmm(long i, long *sum)
{
	long bad, r;
	__asm__ volatile("mov %[i], %%r13\n\t"
			 "mov %%rsp, %%r12\n\t"
			 "sub $128, %%rsp\n\t" /* past the red zone */
			 "and $-16, %%rsp\n\t"
			 SET(0) SET(1) SET(2) SET(3) SET(4) SET(5) SET(6) SET(7)
			 SET(8) SET(9) SET(10) SET(11) SET(12) SET(13) SET(14) SET(15)
			 "mov %%r13, %%rdi\n\t"
			 "call leaf\n\t"
			 "mov %%rax, %%r14\n\t"
			 "xor %%ebx, %%ebx\n\t"
			 CHECK(0) CHECK(1) CHECK(2) CHECK(3) CHECK(4) CHECK(5) CHECK(6) CHECK(7)
			 CHECK(8) CHECK(9) CHECK(10) CHECK(11) CHECK(12) CHECK(13) CHECK(14) CHECK(15)
			 "mov %%r12, %%rsp\n\t"
			 "mov %%rbx, %[bad]\n\t"
			 "mov %%r14, %[r]\n\t"
			 : [bad] "=m"(bad), [r] "=m"(r)
			 : [i] "r"(i)
			 : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
			   "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
			   "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	*sum += r;
	return bad;
}

struct run {
	long from, n, bad, sum;
};

static void *run_calls(void *arg)
{
	struct run *r = arg;
	for (long i = r->from; i < r->from + r->n; i++)
		r->bad += call_keeping_xmm(i, &r->sum);
	return NULL;
}

int main(void)
{
	struct run a = {1, 300000, 0, 0}, b = {1000000, 100000, 0, 0};
	run_calls(&a);
	pthread_t th;
	if (pthread_create(&th, NULL, run_calls, &b) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	printf("changed xmm halves %ld, sum %ld\n", a.bad + b.bad, a.sum + b.sum);
	return 0;
}
