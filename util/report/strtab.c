// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/report/strtab.h"
#include "util/util.h"

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL
#define PROBE_STEP	0x9e3779b97f4a7c15ULL

static uint64_t str_hash(const char *s)
{
	uint64_t h = FNV_OFFSET;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * FNV_PRIME;
	return h;
}

/*
 * Two strings of one hash: the second takes the next key of the hash's
 * sequence, and so on; a lookup walks the sequence to the first key absent.
 */
int64_t strtab__intern(struct strtab *t, const char *s)
{
	uint64_t key = str_hash(s), *slot;

	for (;;) {
		slot = u64_map__find(&t->index, key);
		if (!slot)
			break;
		if (!strcmp(t->v[*slot - 1], s))
			return *slot - 1;
		key += PROBE_STEP;
	}
	if (grow_array((void **)&t->v, &t->cap, t->nr + 1, sizeof(*t->v)))
		return -ENOMEM;
	slot = u64_map__get(&t->index, key);
	if (!slot)
		return -ENOMEM;
	t->v[t->nr] = s;
	*slot = ++t->nr;
	return t->nr - 1;
}

void strtab__exit(struct strtab *t)
{
	free(t->v);
	u64_map__exit(&t->index);
	memset(t, 0, sizeof(*t));
}
