/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_LIVE_HEAP_H
#define MEMTRACK_LIVE_HEAP_H

#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/u64-map.h"

/*
 * The tree's live heap while it runs, for the status line: the size of
 * every block allocated and not freed, from the merged events (a Free does
 * not carry its size).  Kept only while the status line is drawn: it costs
 * a hash insert or removal per event.  Blocks are keyed by pid and address
 * together (pid << 48 ^ addr: exact for user addresses under 2^48).
 */
struct live_heap {
	struct u64_map blocks;
	uint64_t bytes;		/* read by other threads: atomic */
};

void live_heap__init(struct live_heap *h);
void live_heap__exit(struct live_heap *h);
void live_heap__add(struct live_heap *h, const struct mt_alloc_event *e);
uint64_t live_heap__bytes(const struct live_heap *h);

#endif
