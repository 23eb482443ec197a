// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of stack_leaf: lib_middle() calls lib_inner(), which
 * calls malloc().  Each records its own return address in ret[0].  The call
 * lines carry "@call:<caller>" markers for tests/unit/test-symbolize.c.
 *
 *   cc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o libstack_mid.so libstack_mid.c
 */
#include <stdlib.h>

/* no inlining, cloning or other interprocedural changes: real calls */
#ifdef __clang__
#define STACK_NOIPA	__attribute__((noinline))
#else
#define STACK_NOIPA	__attribute__((noipa))
#endif

void *lib_inner(size_t n, void **ret);
void *lib_middle(size_t n, void **ret);

STACK_NOIPA void *lib_inner(size_t n, void **ret)
{
	void *p;

	ret[0] = __builtin_return_address(0);
	p = malloc(n);	/* @call:lib_inner */
	/* uses p after the call, so that the call is no tail call */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

STACK_NOIPA void *lib_middle(size_t n, void **ret)
{
	void *p;

	ret[0] = __builtin_return_address(0);
	p = lib_inner(n, ret + 1);	/* @call:lib_middle */
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
