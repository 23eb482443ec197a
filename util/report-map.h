/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_MAP_H
#define MEMTRACK_REPORT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A u64 -> u64 hash map with open addressing, for the report's small
 * indexes: processes, threads, call stacks, frames.  Any key is allowed (0
 * too).  Entries are never removed.
 */
struct report_u64map_entry {
	uint64_t key, val;
	bool used;
};

struct report_u64map {
	struct report_u64map_entry *slots;
	unsigned int bits;
	size_t used;
};

struct report_u64map *report_u64map__new(void);
void report_u64map__delete(struct report_u64map *m);
/* the value of key, added as 0 when absent; NULL when out of memory */
uint64_t *report_u64map__get(struct report_u64map *m, uint64_t key);
/* the value of key, NULL when absent */
const uint64_t *report_u64map__find(struct report_u64map *m, uint64_t key);

#endif
