// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/track/ring.h"

static inline uint64_t load_acquire(volatile unsigned long *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline uint32_t load_acquire32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(volatile unsigned long *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

int ring__init(struct ring *r, const char *name, int map_fd, size_t size)
{
	void *cons, *prod;

	r->name = name;
	r->map_fd = map_fd;
	r->size = size;
	r->page_size = sysconf(_SC_PAGESIZE);

	cons = mmap(NULL, r->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	/* the data area is mapped twice in a row, so a record never wraps */
	prod = mmap(NULL, r->page_size + 2 * size, PROT_READ, MAP_SHARED, map_fd,
		    r->page_size);
	if (prod == MAP_FAILED) {
		int err = -errno;

		munmap(cons, r->page_size);
		return err;
	}
	r->consumer_pos = cons;
	r->producer_pos = prod;
	r->data = (const uint8_t *)prod + r->page_size;
	return 0;
}

void ring__exit(struct ring *r)
{
	if (r->consumer_pos)
		munmap((void *)r->consumer_pos, r->page_size);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page_size + 2 * r->size);
	r->consumer_pos = r->producer_pos = NULL;
}

uint64_t ring__producer(const struct ring *r)
{
	return load_acquire(r->producer_pos);
}

uint64_t ring__consumer(const struct ring *r)
{
	return load_acquire(r->consumer_pos);
}

static inline uint32_t record_span(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return (len + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
}

/*
 * Every store to consumer_pos takes the cache line from the producers, whose
 * every reserve reads it: free space in strides, not record by record.
 */
static uint64_t release_stride(const struct ring *r)
{
	return r->size / 8 < 65536 ? r->size / 8 : 65536;
}

long ring__drain(struct ring *r, ring_record_fn *fn, void *ctx, uint64_t *peak)
{
	uint64_t cons = ring__consumer(r), released = cons, prod, mask = r->size - 1;
	uint64_t stride = release_stride(r);
	long records = 0;
	bool progress;

	do {
		progress = false;
		prod = ring__producer(r);
		if (prod - cons > *peak)
			*peak = prod - cons;
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & mask));
			uint32_t len = load_acquire32(hdr);
			int ret;

			if (len & BPF_RINGBUF_BUSY_BIT)
				break;	/* reserved, not yet submitted */
			progress = true;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				ret = fn(ctx, hdr + 2, len & ~BPF_RINGBUF_DISCARD_BIT);
				if (ret < 0) {
					store_release(r->consumer_pos, cons);
					return ret;
				}
				records++;
			}
			cons += record_span(len);
			if (cons - released >= stride) {
				store_release(r->consumer_pos, cons);
				released = cons;
			}
		}
		if (cons != released) {
			store_release(r->consumer_pos, cons);
			released = cons;
		}
	} while (progress);
	return records;
}
