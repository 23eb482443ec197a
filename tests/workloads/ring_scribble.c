/*
 * ring_scribble [future|thread]: scribbles over its own preload shim ring:
 * 1000 malloc(1234) + free, then a record that no shim writes at the
 * ring's write position (a length of 7 bytes; with "future", a well-formed
 * free stamped an hour from now), then 200000 more malloc(4321) + free,
 * which memtrack no longer takes.  With "thread", a second instead, for
 * memtrack to let the process go, then a thread that makes 100
 * malloc(4321) + free, then 200000 in the main thread.  Without the shim
 * (no ring mapped) it says so and exits 3.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* preload/shim-abi.h's layout, as a hostile process would read it */
#define HDR_SIZE	4096
#define PROD_OFFSET	64
#define RING_SIZE	(1UL << 20)
#define REC_FREE	3
#define FREE_LEN	24

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
		    end - start == HDR_SIZE + RING_SIZE)
			ring = (uint8_t *)start;
	}
	fclose(f);
	return ring;
}

static void write_bad_length(uint8_t *ring)
{
	uint64_t prod = __atomic_fetch_add((uint64_t *)(ring + PROD_OFFSET), 8, __ATOMIC_SEQ_CST);

	__atomic_store_n((uint64_t *)(ring + HDR_SIZE + (prod & (RING_SIZE - 1))),
			 (uint32_t)prod | (7ULL << 32) | (1ULL << 48), __ATOMIC_RELEASE);
}

static void write_future_free(uint8_t *ring)
{
	uint64_t prod = __atomic_fetch_add((uint64_t *)(ring + PROD_OFFSET), FREE_LEN,
					   __ATOMIC_SEQ_CST);
	uint64_t *rec = (uint64_t *)(ring + HDR_SIZE + (prod & (RING_SIZE - 1)));
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	rec[1] = (uint64_t)(now.tv_sec + 3600) * 1000000000ULL;
	rec[2] = 0x1000;
	__atomic_store_n(&rec[0], (uint32_t)prod | ((uint64_t)FREE_LEN << 32) |
			 ((uint64_t)REC_FREE << 48), __ATOMIC_RELEASE);
}

static void *allocate(void *arg)
{
	void *volatile p;
	int i;

	for (i = 0; i < 100; i++) {
		p = malloc(4321);
		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t;
	void *volatile p;
	uint8_t *ring;
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
	if (argc > 1 && !strcmp(argv[1], "future"))
		write_future_free(ring);
	else
		write_bad_length(ring);
	if (argc > 1 && !strcmp(argv[1], "thread")) {
		sleep(1);
		if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
			return 1;
	}
	for (i = 0; i < 200000; i++) {
		p = malloc(4321);
		free(p);
	}
	return 0;
}
