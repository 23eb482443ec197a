/* 50 calloc(i + 1, 8), 10 reallocarray(NULL, i + 1, 16); all 60 freed. */
#include <stdlib.h>

int main(void)
{
	void *volatile c[50], *volatile r[10];
	int i;

	for (i = 0; i < 50; i++)
		c[i] = calloc(i + 1, 8);
	for (i = 0; i < 10; i++)
		r[i] = reallocarray(NULL, i + 1, 16);
	for (i = 0; i < 50; i++)
		free(c[i]);
	for (i = 0; i < 10; i++)
		free(r[i]);
	return 0;
}
