/*
 * unwind_direct.cpp - e2e target: unwinding that goes through patched
 * frames without __cxa_throw (test e2e.patched_unwind_direct).
 *
 * raise_foreign raises an exception of its own class straight through
 * _Unwind_RaiseException, as Rust's panics do; catcher catches it with
 * catch (...) and then calls in_catch, which calls getppid.  The exception
 * leaves through two shims written in assembly that make an indirect call
 * in their first bytes, as Rust's closure shims do: shim_past returns past
 * the bytes a probe's jump would take (the patcher moves its call), shim_in
 * returns inside them (it must be left unpatched).  ROUNDS rounds of each;
 * the program prints how many were caught.  Under stint: the same output,
 * exact calls, and in_catch's caller is catcher (the thrower's frames are
 * closed where the unwinder lands), getppid's in_catch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <unwind.h>

#include "e2e_prog.h"

#define ROUNDS 25

extern "C" void shim_past(void (*fn)(void));
extern "C" void shim_in(void (*fn)(void));

__asm__(".text\n"
	".p2align 4\n.globl shim_past\n.type shim_past, @function\n"
	"shim_past:\n .cfi_startproc\n"
	" push %rbx\n .cfi_adjust_cfa_offset 8\n .cfi_offset %rbx, -16\n"
	" mov %rdi, %rbx\n"
	" call *%rbx\n" /* at offset 4, returns to offset 6 */
	" pop %rbx\n .cfi_adjust_cfa_offset -8\n .cfi_restore %rbx\n"
	" ret\n .cfi_endproc\n"
	".size shim_past, .-shim_past\n"
	".p2align 4\n.globl shim_in\n.type shim_in, @function\n"
	"shim_in:\n .cfi_startproc\n"
	" push %rax\n .cfi_adjust_cfa_offset 8\n"
	" call *%rdi\n" /* at offset 1, returns to offset 3 */
	" pop %rax\n .cfi_adjust_cfa_offset -8\n"
	" ret\n .cfi_endproc\n"
	".size shim_in, .-shim_in\n");

static volatile long sink;

static void drop_exception(_Unwind_Reason_Code, _Unwind_Exception *e)
{
	free(e);
}

extern "C" E2E_FN void raise_foreign(void)
{
	sink += (long)e2e_burn(500, 3);
	_Unwind_Exception *e = (_Unwind_Exception *)calloc(1, sizeof(*e));
	e->exception_class = 0x53544e5400000000ull; /* "STNT", not C++'s */
	e->exception_cleanup = drop_exception;
	_Unwind_RaiseException(e);
	abort(); /* no handler */
}

extern "C" E2E_FN void deeper(void)
{
	raise_foreign();
	sink++;
}

extern "C" E2E_FN void in_catch(void)
{
	sink += getppid() > 0;
}

extern "C" E2E_FN int catcher(void (*shim)(void (*)(void)))
{
	try {
		shim(deeper);
	} catch (...) {
		in_catch();
		return 1;
	}
	return 0;
}

int main()
{
	int caught = 0;
	for (int i = 0; i < ROUNDS; i++)
		caught += catcher(shim_past);
	for (int i = 0; i < ROUNDS; i++)
		caught += catcher(shim_in);
	printf("caught %d\n", caught);
	return caught == 2 * ROUNDS ? 0 : 1;
}
