/*
 * alloc_loop: the same calls, built against several allocators (see the
 * Makefile: glibc, jemalloc, mimalloc, tcmalloc; dynamic and static).
 *   100 x malloc(777) + free
 *    20 x calloc(3, 259) + free
 *    10 x malloc(100), realloc(p, 200), free
 *     5 x aligned_alloc(64, 640) + free
 * = 110 Malloc, 20 Calloc, 10 Realloc, 5 AlignedAlloc, 135 Free.
 * Each allocator's own API adds (WITH_JEMALLOC, WITH_MIMALLOC, WITH_TCMALLOC):
 *   jemalloc: 10 x mallocx(555) + sdallocx, 5 x mallocx(100), rallocx(300), dallocx
 *             = +15 Malloc, +5 Realloc, +15 Free
 *   mimalloc: 10 x mi_malloc(555) + mi_free_size, 5 x mi_malloc_aligned(300, 64) + mi_free
 *             = +10 Malloc, +5 AlignedAlloc, +15 Free
 *   tcmalloc: 10 x tc_malloc(555) + tc_free_sized, 5 x tc_memalign(64, 300) + tc_free
 *             = +10 Malloc, +5 AlignedAlloc, +15 Free
 */
#include <stdlib.h>

#if defined(WITH_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(WITH_MIMALLOC)
#include <mimalloc.h>
#elif defined(WITH_TCMALLOC)
#include <gperftools/tcmalloc.h>
#endif

static void standard_calls(void)
{
	void *volatile p;
	int i;

	for (i = 0; i < 100; i++) {
		p = malloc(777);
		free(p);
	}
	for (i = 0; i < 20; i++) {
		p = calloc(3, 259);
		free(p);
	}
	for (i = 0; i < 10; i++) {
		p = malloc(100);
		p = realloc(p, 200);
		free(p);
	}
	for (i = 0; i < 5; i++) {
		p = aligned_alloc(64, 640);
		free(p);
	}
}

#if defined(WITH_JEMALLOC) || defined(WITH_MIMALLOC) || defined(WITH_TCMALLOC)
static void allocator_calls(void)
{
	void *volatile p;
	int i;

#if defined(WITH_JEMALLOC)
	for (i = 0; i < 10; i++) {
		p = mallocx(555, 0);
		sdallocx(p, 555, 0);
	}
	for (i = 0; i < 5; i++) {
		p = mallocx(100, 0);
		p = rallocx(p, 300, 0);
		dallocx(p, 0);
	}
#elif defined(WITH_MIMALLOC)
	for (i = 0; i < 10; i++) {
		p = mi_malloc(555);
		mi_free_size(p, 555);
	}
	for (i = 0; i < 5; i++) {
		p = mi_malloc_aligned(300, 64);
		mi_free(p);
	}
#elif defined(WITH_TCMALLOC)
	for (i = 0; i < 10; i++) {
		p = tc_malloc(555);
		tc_free_sized(p, 555);
	}
	for (i = 0; i < 5; i++) {
		p = tc_memalign(64, 300);
		tc_free(p);
	}
#endif
}
#else
static void allocator_calls(void)
{
}
#endif

int main(void)
{
	standard_calls();
	allocator_calls();
	return 0;
}
