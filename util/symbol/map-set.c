// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "util/symbol/map-set.h"

struct map_set *map_set__new(size_t nr, size_t *count)
{
	struct map_set *set = malloc(sizeof(*set) + (nr ? nr : 1) * sizeof(set->maps[0]));

	if (!set)
		return NULL;
	(*count)++;
	set->refs = 1;
	set->nr = nr;
	return set;
}

struct map_set *map_set__get(struct map_set *set)
{
	if (set)
		set->refs++;
	return set;
}

void map_set__put(struct map_set *set, size_t *count)
{
	if (set && !--set->refs) {
		(*count)--;
		free(set);
	}
}

static int map_cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* the mapping with the last start <= ip, if it covers ip */
const struct map *map_set__find(const struct map_set *set, uint64_t ip)
{
	size_t lo = 0, hi = set ? set->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= set->maps[lo - 1].end)
		return NULL;
	return &set->maps[lo - 1];
}

static bool map_set__overlaps(const struct map_set *set, uint64_t start,
			      uint64_t end)
{
	size_t lo = 0, hi = set->nr;

	/* the last mapping starting before end */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->maps[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && set->maps[lo - 1].end > start;
}

/* new + the mappings of old that no mapping of new overlaps */
struct map_set *map_set__merge(const struct map_set *new, const struct map_set *old,
			       size_t *count)
{
	size_t i, n = new->nr;
	struct map_set *set;

	set = map_set__new(new->nr + (old ? old->nr : 0), count);
	if (!set)
		return NULL;
	memcpy(set->maps, new->maps, new->nr * sizeof(new->maps[0]));
	for (i = 0; old && i < old->nr; i++) {
		if (!map_set__overlaps(new, old->maps[i].start, old->maps[i].end))
			set->maps[n++] = old->maps[i];
	}
	set->nr = n;
	map_set__sort(set);
	return set;
}

void map_set__sort(struct map_set *set)
{
	qsort(set->maps, set->nr, sizeof(set->maps[0]), map_cmp);
}
