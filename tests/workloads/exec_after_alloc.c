/*
 * An exec after allocations: 7 malloc(3000), 2 of them freed, then an
 * exec of malloc_free (next to this one), whose 100 Malloc and 60 Free
 * leave 40 blocks live.  The 5 blocks of the first image are gone with its
 * address space: the process leaves 40 blocks live at exit, not 45.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N	7
#define FREED	2

int main(void)
{
	char self[PATH_MAX], target[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	void *volatile p[N];
	int i;

	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(target, sizeof(target), "%s/malloc_free", dirname(self));
	for (i = 0; i < N; i++)
		p[i] = malloc(3000);
	for (i = 0; i < FREED; i++)
		free(p[i]);
	execl(target, "malloc_free", (char *)NULL);
	return 127;
}
