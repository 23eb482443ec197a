/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_RING_H
#define MEMTRACK_RING_H

#include <stddef.h>
#include <stdint.h>

/*
 * A consumer of a BPF_MAP_TYPE_RINGBUF over its mmapped pages, so that the
 * producer and consumer positions can be read (libbpf 1.1 does not expose
 * them).
 */
struct ring {
	const char *name;
	int map_fd;
	size_t size;
	volatile unsigned long *consumer_pos;
	volatile unsigned long *producer_pos;
	const uint8_t *data;
	size_t page_size;
};

/* called for each record; a negative return stops the drain */
typedef int ring_record_fn(void *ctx, const void *data, uint32_t len);

int ring__init(struct ring *r, const char *name, int map_fd, size_t size);
void ring__exit(struct ring *r);

uint64_t ring__producer(const struct ring *r);
uint64_t ring__consumer(const struct ring *r);

/*
 * Consumes records until the consumer catches the producer.  *peak gets the
 * largest producer - consumer distance seen.  Returns the number of records,
 * or the callback's negative return.
 */
long ring__drain(struct ring *r, ring_record_fn *fn, void *ctx, uint64_t *peak);

#endif
