/*
 * The library half of stack_alloc: lib_mid_alloc() calls lib_leaf_alloc(),
 * which mallocs.  Built -O2 -g with frame pointers, calls kept real.
 */
#include <stdlib.h>

__attribute__((noinline)) void *lib_leaf_alloc(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *lib_mid_alloc(size_t size)
{
	void *p = lib_leaf_alloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
