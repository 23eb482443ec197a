/*
 * A realloc that must move: malloc(32) a, then malloc(32) b, live right
 * after a, so realloc(a, 4096) cannot grow a in place.  Writes "OLD NEW" in
 * hex on stdout (through write: stdio's buffer would be one more malloc) and
 * exits 1 if it did not move; then frees both: 2 Malloc, 1 Realloc, 2 Free,
 * nothing live at exit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char *a = malloc(32), *b = malloc(32), *c, line[64];
	uintptr_t old = (uintptr_t)a;
	int n;

	a[0] = b[0] = 1;
	c = realloc(a, 4096);
	if (!c || (uintptr_t)c == old)
		return 1;
	n = snprintf(line, sizeof(line), "%lu %lu\n", (unsigned long)old, (unsigned long)(uintptr_t)c);
	if (write(1, line, n) != n)
		return 1;
	free(b);
	free(c);
	return 0;
}
