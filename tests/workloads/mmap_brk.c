/*
 * The memory syscalls, each with sizes nothing else here uses:
 * 5 mmap of 11 pages, 3 of them munmapped, 1 mremap of another from 11 to 23
 * pages, and 2 brk moves of 7 pages each.  Prints the mapped and moved
 * addresses, for the test to find them among the events.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES(n)	((size_t)(n) * 4096)

int main(void)
{
	void *m[5], *moved, *brk0, *brk1;
	int i;

	for (i = 0; i < 5; i++) {
		m[i] = mmap(NULL, PAGES(11), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m[i] == MAP_FAILED)
			return 1;
		printf("mmap %lu\n", (unsigned long)(uintptr_t)m[i]);
	}
	for (i = 0; i < 3; i++) {
		if (munmap(m[i], PAGES(11)))
			return 1;
		printf("munmap %lu\n", (unsigned long)(uintptr_t)m[i]);
	}
	moved = mremap(m[3], PAGES(11), PAGES(23), MREMAP_MAYMOVE);
	if (moved == MAP_FAILED)
		return 1;
	printf("mremap %lu %lu\n", (unsigned long)(uintptr_t)m[3],
	       (unsigned long)(uintptr_t)moved);
	brk0 = sbrk(PAGES(7));
	brk1 = sbrk(PAGES(7));
	if (brk0 == (void *)-1 || brk1 == (void *)-1)
		return 1;
	/* sbrk returns the old break: the new ones are 7 pages further */
	printf("brk %lu\n", (unsigned long)(uintptr_t)brk1);
	printf("brk %lu\n", (unsigned long)(uintptr_t)sbrk(0));
	return 0;
}
