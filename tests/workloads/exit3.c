/* 5 malloc, none freed, exit status 3. */
#include <stdlib.h>

int main(void)
{
	void *volatile p;
	int i;

	for (i = 0; i < 5; i++)
		p = malloc(1000);
	(void)p;
	exit(3);
}
