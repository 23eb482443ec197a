/*
 * A preloaded library that forwards malloc and free to the next definition
 * (dlsym RTLD_NEXT), as leak checkers and allocation counters of users' own
 * do: its free jumps through a pointer, which a scan of its code for calls
 * to known addresses cannot see.  Under BPF both its functions and libc's
 * are probed; each call of the program's is one event.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);

void *malloc(size_t size)
{
	if (!next_malloc)
		next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	return next_malloc(size);
}

void free(void *ptr)
{
	if (!next_free)
		next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	next_free(ptr);
}
