/*
 * realloc(NULL, 16) (through a volatile, or the compiler makes it malloc), then 10 reallocs growing it by 16 bytes each, then
 * realloc(p, 0): 12 Realloc events, nothing live at exit.
 */
#include <stdlib.h>

int main(void)
{
	void *volatile null = NULL;
	void *volatile p = realloc(null, 16);
	int i;

	for (i = 1; i <= 10; i++)
		p = realloc(p, 16 * (i + 1));
	p = realloc(p, 0);
	return p != NULL;
}
