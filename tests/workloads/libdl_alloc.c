/*
 * A library with an allocator of its own under jemalloc's prefixed names
 * (je_malloc, je_free): a bump allocator over a static arena.  dlopen_alloc
 * loads it at run time; memtrack must find and probe it before it is called.
 */
#include <stddef.h>

static char arena[1 << 16];
static size_t used;

void *je_malloc(size_t size)
{
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (used + size > sizeof(arena))
		return NULL;
	p = arena + used;
	used += size;
	return p;
}

void je_free(void *p)
{
	(void)p;
}
