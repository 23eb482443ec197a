/* malloc_free's 100 Malloc and 60 Free, then says "ready" on stdout
 * (write(2), which allocates nothing) and sleeps 60 s, to be interrupted. */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	void *volatile p[100];
	int i;

	for (i = 0; i < 100; i++)
		p[i] = malloc(i + 1);
	for (i = 0; i < 60; i++)
		free(p[i]);
	if (write(1, "ready\n", 6) != 6)
		return 1;
	sleep(60);
	return 0;
}
