/*
 * Two call sites of malloc(3000) in one function, shipped stripped: they
 * differ only by their offset in the file.  stripped_sites <a> <b>: a calls
 * at the first, b at the second, each block freed at once but each loop's
 * last, live at exit.
 */
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline)) static void allocate(int a, int b)
{
	int i;

	for (i = 0; i < a; i++) {
		sink = malloc(3000);
		if (i + 1 < a)
			free(sink);
	}
	__asm__ volatile("" ::: "memory");
	for (i = 0; i < b; i++) {
		sink = malloc(3000);
		if (i + 1 < b)
			free(sink);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	allocate(atoi(argv[1]), atoi(argv[2]));
	return 0;
}
