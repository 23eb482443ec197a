/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_MAP_SET_H
#define MEMTRACK_MAP_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The code mappings of a process, as the symbolizer keeps them: a sorted,
 * immutable array, reference counted (a fork shares its parent's set, every
 * change builds a new one).  Not locked: the symbolizer's lock guards them.
 * count is the caller's number of live sets, kept up to date.
 */
struct sym_module;

struct map {
	uint64_t start, end, pgoff;
	struct sym_module *mod;
};

struct map_set {
	unsigned int refs;
	size_t nr;
	struct map maps[];
};

/* room for nr mappings, nr set: the caller fills them, then sorts */
struct map_set *map_set__new(size_t nr, size_t *count);
struct map_set *map_set__get(struct map_set *set);
void map_set__put(struct map_set *set, size_t *count);
void map_set__sort(struct map_set *set);
/* the mapping covering ip, NULL if none */
const struct map *map_set__find(const struct map_set *set, uint64_t ip);
/* new + the mappings of old (may be NULL) that no mapping of new overlaps */
struct map_set *map_set__merge(const struct map_set *new, const struct map_set *old,
			       size_t *count);

#endif
