/* A library that brings its own reallocarray, through realloc (as libbsd does). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * size);
}
