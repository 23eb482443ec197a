/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_U64_MAP_H
#define MEMTRACK_U64_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The u64 -> u64 hash map of memtrack: open addressing with linear probing,
 * at most half full, removal without tombstones.  Any key is allowed (0 is
 * kept apart).  Zero-filled is an empty map; nothing is allocated before
 * the first key.  A pointer to a value stays valid until the next call that
 * adds or removes a key.  Not thread-safe.
 */
struct u64_map_slot {
	uint64_t key;		/* 0: empty */
	uint64_t val;
};

struct u64_map {
	struct u64_map_slot *slots;
	size_t cap;		/* 0 or a power of two */
	size_t n;		/* keys in slots[] */
	bool has_zero;		/* key 0, whose value is zero_val */
	uint64_t zero_val;
};

void u64_map__init(struct u64_map *m);
void u64_map__exit(struct u64_map *m);
/* room for n more keys without growing: 0, or -ENOMEM */
int u64_map__reserve(struct u64_map *m, size_t n);
/* the value of key, NULL when absent */
uint64_t *u64_map__find(const struct u64_map *m, uint64_t key);
/*
 * The value of key, added as 0 when absent; NULL when out of memory and
 * no slot is left (a key still fits while the map is not full).
 */
uint64_t *u64_map__get(struct u64_map *m, uint64_t key);
/* removes key and gives its value: true, or false when absent */
bool u64_map__take(struct u64_map *m, uint64_t key, uint64_t *val);
size_t u64_map__count(const struct u64_map *m);

/*
 * For an array *arr of *nr elements of size bytes (room for *cap) indexed by
 * m: the element of key, or a new one at the end, zero-filled, with *added
 * set; NULL when out of memory.  Pass the array as (void **)&array.
 */
void *u64_map__element(struct u64_map *m, uint64_t key, void **arr, size_t *nr,
		       size_t *cap, size_t size, bool *added);

#endif
