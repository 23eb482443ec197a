/*
 * 5 each of aligned_alloc(64, 128), memalign(32, 100), posix_memalign(256, 1000),
 * 2 each of valloc(100), pvalloc(100): 19 AlignedAlloc, all freed (19 Free).
 */
#include <malloc.h>
#include <stdlib.h>

int main(void)
{
	void *volatile p[19];
	int i, n = 0;

	for (i = 0; i < 5; i++)
		p[n++] = aligned_alloc(64, 128);
	for (i = 0; i < 5; i++)
		p[n++] = memalign(32, 100);
	for (i = 0; i < 5; i++) {
		void *q;

		if (posix_memalign(&q, 256, 1000))
			return 1;
		p[n++] = q;
	}
	for (i = 0; i < 2; i++)
		p[n++] = valloc(100);
	for (i = 0; i < 2; i++)
		p[n++] = pvalloc(100);
	for (i = 0; i < n; i++)
		free(p[i]);
	return 0;
}
