/* 100 malloc of 1..100 bytes, 60 of them freed, plus free(NULL) and a failed malloc. */
#include <stdint.h>
#include <stdlib.h>

#define N 100
#define FREED 60

int main(void)
{
	void *volatile p[N];
	int i;

	for (i = 0; i < N; i++)
		p[i] = malloc(i + 1);
	for (i = 0; i < FREED; i++)
		free(p[i]);
	free(NULL);
	if (malloc(SIZE_MAX / 2))	/* fails: not an event */
		return 1;
	return 0;
}
