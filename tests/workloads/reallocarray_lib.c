/*
 * Through libreallocarray.so's reallocarray: 12 reallocarray(p, k, 100) for
 * k = 1..12, growing one block, then one free.
 */
#include <stdlib.h>

void *reallocarray(void *p, size_t n, size_t size);

int main(void)
{
	void *volatile p = NULL;
	size_t k;

	for (k = 1; k <= 12; k++)
		p = reallocarray(p, k, 100);
	free(p);
	return 0;
}
