/*
 * Built with AddressSanitizer.  Prints its environment; then 20
 * malloc(123), freed; with "global" or "heap", one read past a global
 * array or a malloc(16) block (ASan's report, with where the block was
 * allocated, exit 1); with "leak", one malloc(10) leaked (LeakSanitizer's
 * report at exit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;
static char table[8];

int main(int argc, char **argv)
{
	void *volatile p[20];
	volatile int at = 8;
	char **e;
	int i;

	for (e = environ; *e; e++)
		puts(*e);
	for (i = 0; i < 20; i++)
		p[i] = malloc(123);
	for (i = 0; i < 20; i++)
		free(p[i]);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "leak"))
		p[0] = malloc(10);
	else if (argc > 1 && !strcmp(argv[1], "heap"))
		return ((volatile char *)(p[0] = malloc(16)))[at * 2];
	else if (argc > 1)
		return table[at];
	return 0;
}
