/*
 * Allocations from known call sites, for call stacks:
 *   10 x malloc(5555): main -> outer_alloc -> lib_mid_alloc -> lib_leaf_alloc
 *                      (the last two in libstack_alloc.so)
 *    5 x malloc(6666): main -> direct_alloc
 * all freed.  Built -O2 -g with frame pointers.
 */
#include <stdlib.h>

void *lib_mid_alloc(size_t size);

__attribute__((noinline)) void *outer_alloc(size_t size)
{
	void *p = lib_mid_alloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

__attribute__((noinline)) void *direct_alloc(size_t size)
{
	void *p = malloc(size);

	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main(void)
{
	void *p[15];
	int i;

	for (i = 0; i < 10; i++)
		p[i] = outer_alloc(5555);
	for (i = 10; i < 15; i++)
		p[i] = direct_alloc(6666);
	for (i = 0; i < 15; i++)
		free(p[i]);
	return 0;
}
