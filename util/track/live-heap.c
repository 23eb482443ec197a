// SPDX-License-Identifier: GPL-2.0
/* The tree's live heap for the status line: see live-heap.h. */
#include "util/track/live-heap.h"

static uint64_t block_key(uint32_t pid, uint64_t addr)
{
	return (uint64_t)pid << 48 ^ addr;
}

static void add_block(struct live_heap *h, uint32_t pid, uint64_t addr, uint64_t size)
{
	uint64_t *v = u64_map__get(&h->blocks, block_key(pid, addr));

	if (!v)
		return;		/* out of memory: the figure is low, nothing else */
	__atomic_store_n(&h->bytes, h->bytes - *v + size, __ATOMIC_RELAXED);
	*v = size;
}

static void remove_block(struct live_heap *h, uint32_t pid, uint64_t addr)
{
	uint64_t size;

	if (u64_map__take(&h->blocks, block_key(pid, addr), &size))
		__atomic_store_n(&h->bytes, h->bytes - size, __ATOMIC_RELAXED);
}

void live_heap__init(struct live_heap *h)
{
	u64_map__init(&h->blocks);
	h->bytes = 0;
}

void live_heap__exit(struct live_heap *h)
{
	u64_map__exit(&h->blocks);
}

void live_heap__add(struct live_heap *h, const struct mt_alloc_event *e)
{
	switch (e->kind) {
	case MT_MALLOC:
	case MT_CALLOC:
	case MT_ALIGNED_ALLOC:
		add_block(h, e->pid, e->addr, e->size);
		break;
	case MT_REALLOC:
		if (e->old_addr)
			remove_block(h, e->pid, e->old_addr);
		if (e->addr)
			add_block(h, e->pid, e->addr, e->size);
		break;
	case MT_FREE:
		remove_block(h, e->pid, e->addr);
		break;
	}
}

uint64_t live_heap__bytes(const struct live_heap *h)
{
	return __atomic_load_n(&h->bytes, __ATOMIC_RELAXED);
}
