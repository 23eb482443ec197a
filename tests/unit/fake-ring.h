/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A BPF ring buffer in ordinary memory, for tests/unit/test-ring.c and
 * test-poller.c: the test plays the BPF producer (reserve, commit, discard)
 * and sets the positions itself; struct ring reads it as it reads the
 * mmapped pages of a BPF_MAP_TYPE_RINGBUF.
 */
#ifndef MEMTRACK_TEST_FAKE_RING_H
#define MEMTRACK_TEST_FAKE_RING_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>

#include "util/track/ring.h"

#define FAKE_RING_SIZE	4096

struct fake_ring {
	unsigned long consumer_pos;
	unsigned long producer_pos;
	/* the data area twice in a row, as the kernel maps it */
	uint8_t data[2 * FAKE_RING_SIZE] __attribute__((aligned(8)));
};

static inline void fake_ring__init(struct fake_ring *f, struct ring *r, const char *name,
				   int map_fd)
{
	memset(f, 0, sizeof(*f));
	memset(r, 0, sizeof(*r));
	r->name = name;
	r->map_fd = map_fd;
	r->size = FAKE_RING_SIZE;
	r->consumer_pos = &f->consumer_pos;
	r->producer_pos = &f->producer_pos;
	r->data = f->data;
}

/* bytes a record of len takes, header included */
static inline uint32_t fake_ring__span(uint32_t len)
{
	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

/* copies the bytes written past the end to the start: the second mapping */
static inline void fake_ring__mirror(struct fake_ring *f, uint64_t pos, uint32_t span)
{
	uint64_t off = pos & (FAKE_RING_SIZE - 1);

	if (off + span > FAKE_RING_SIZE)
		memcpy(f->data, f->data + FAKE_RING_SIZE, off + span - FAKE_RING_SIZE);
}

static inline void fake_ring__set_header(struct fake_ring *f, uint64_t pos, uint32_t len)
{
	uint32_t *hdr = (uint32_t *)(f->data + (pos & (FAKE_RING_SIZE - 1)));

	__atomic_store_n(hdr, len, __ATOMIC_RELEASE);
	fake_ring__mirror(f, pos, BPF_RINGBUF_HDR_SZ);
}

/*
 * Reserves a record of len bytes at the producer position, filled with
 * payload (len bytes), and moves the producer past it; with busy set it
 * stays reserved (BPF_RINGBUF_BUSY_BIT) until fake_ring__commit().
 * Returns its position.
 */
static inline uint64_t fake_ring__put(struct fake_ring *f, const void *payload, uint32_t len,
				      uint32_t flags)
{
	uint64_t pos = f->producer_pos, off = pos & (FAKE_RING_SIZE - 1);
	uint32_t *hdr = (uint32_t *)(f->data + off);

	memcpy(hdr + 2, payload, len);
	hdr[1] = 0;		/* pg_off: not read by the consumer */
	fake_ring__mirror(f, pos, fake_ring__span(len));
	fake_ring__set_header(f, pos, len | flags);
	__atomic_store_n(&f->producer_pos, pos + fake_ring__span(len), __ATOMIC_RELEASE);
	return pos;
}

static inline void fake_ring__commit(struct fake_ring *f, uint64_t pos)
{
	uint32_t len = *(uint32_t *)(f->data + (pos & (FAKE_RING_SIZE - 1)));

	fake_ring__set_header(f, pos, len & ~BPF_RINGBUF_BUSY_BIT);
}

/* moves both positions to pos: an empty ring whose next record goes there */
static inline void fake_ring__seek(struct fake_ring *f, uint64_t pos)
{
	f->consumer_pos = f->producer_pos = pos;
}

#endif
