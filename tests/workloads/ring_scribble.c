/*
 * Scribbles over its own preload shim ring: 1000 malloc(1234) + free, then
 * a record that no shim writes (a length of 7 bytes) at the ring's write
 * position, then 200000 more malloc(4321) + free, which memtrack no longer
 * takes.  Without the shim (no ring mapped) it says so and exits 3.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* preload/shim-abi.h's layout, as a hostile process would read it */
#define HDR_SIZE	4096
#define PROD_OFFSET	64

static uint8_t *find_ring(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	uint8_t *ring = NULL;

	if (!f)
		return NULL;
	while (!ring && fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (strstr(line, "memtrack-ring") && sscanf(line, "%lx-%lx", &start, &end) == 2 &&
		    end - start == HDR_SIZE + (1UL << 20))
			ring = (uint8_t *)start;
	}
	fclose(f);
	return ring;
}

int main(void)
{
	void *volatile p;
	uint8_t *ring;
	uint64_t prod;
	int i;

	for (i = 0; i < 1000; i++) {
		p = malloc(1234);
		free(p);
	}
	ring = find_ring();
	if (!ring) {
		fprintf(stderr, "ring_scribble: no shim ring here\n");
		return 3;
	}
	prod = __atomic_fetch_add((uint64_t *)(ring + PROD_OFFSET), 8, __ATOMIC_SEQ_CST);
	__atomic_store_n((uint64_t *)(ring + HDR_SIZE + (prod & ((1UL << 20) - 1))),
			 (uint32_t)prod | (7ULL << 32) | (1ULL << 48), __ATOMIC_RELEASE);
	for (i = 0; i < 200000; i++) {
		p = malloc(4321);
		free(p);
	}
	return 0;
}
