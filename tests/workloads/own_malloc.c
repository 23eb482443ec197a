/*
 * An executable with an allocator of its own: a bump allocator behind
 * malloc, calloc, realloc and free, which no libc call reaches.  The
 * program: 30 malloc(300), 10 calloc(4, 25), 5 realloc(p, 600), 35 free.
 * No stdio: whatever libc allocates would come here too.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static char arena[1 << 20] __attribute__((aligned(16)));
static size_t used;
static volatile size_t freed;

__attribute__((noinline)) void *malloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(arena) - used)
		return NULL;
	p = arena + used;
	used += n;
	return p;
}

__attribute__((noinline)) void free(void *p)
{
	if (p)
		freed++;
}

__attribute__((noinline)) void *calloc(size_t n, size_t size)
{
	void *p = malloc(n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

__attribute__((noinline)) void *realloc(void *old, size_t size)
{
	void *p = malloc(size);

	if (p && old)
		memcpy(p, old, size);	/* a bump block is at least as long as what follows it */
	return p;
}

int main(void)
{
	void *volatile p[45];
	int i;

	for (i = 0; i < 30; i++)
		p[i] = malloc(300);
	for (i = 30; i < 40; i++)
		p[i] = calloc(4, 25);
	for (i = 0; i < 5; i++)
		p[i] = realloc(p[i], 600);
	for (i = 0; i < 35; i++)
		free(p[i]);
	return write(1, "ok\n", 3) == 3 ? 0 : 1;
}
