// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "report-map.h"

#define GOLDEN		0x9e3779b97f4a7c15ULL
#define MAP_MIN_BITS	6

struct report_u64map *report_u64map__new(void)
{
	struct report_u64map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->bits = MAP_MIN_BITS;
	m->slots = calloc((size_t)1 << m->bits, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void report_u64map__delete(struct report_u64map *m)
{
	if (m)
		free(m->slots);
	free(m);
}

static struct report_u64map_entry *slot_of(struct report_u64map *m, uint64_t key)
{
	size_t mask = ((size_t)1 << m->bits) - 1, i = (key * GOLDEN) >> (64 - m->bits);

	while (m->slots[i].used && m->slots[i].key != key)
		i = (i + 1) & mask;
	return &m->slots[i];
}

static int grow(struct report_u64map *m)
{
	struct report_u64map old = *m;
	size_t i;

	m->slots = calloc((size_t)2 << m->bits, sizeof(*m->slots));
	if (!m->slots) {
		*m = old;
		return -ENOMEM;
	}
	m->bits++;
	for (i = 0; i < (size_t)1 << old.bits; i++)
		if (old.slots[i].used)
			*slot_of(m, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

uint64_t *report_u64map__get(struct report_u64map *m, uint64_t key)
{
	struct report_u64map_entry *e = slot_of(m, key);

	if (e->used)
		return &e->val;
	if ((m->used + 1) * 2 > (size_t)1 << m->bits) {
		if (grow(m))
			return NULL;
		e = slot_of(m, key);
	}
	e->used = true;
	e->key = key;
	e->val = 0;
	m->used++;
	return &e->val;
}

const uint64_t *report_u64map__find(struct report_u64map *m, uint64_t key)
{
	struct report_u64map_entry *e = slot_of(m, key);

	return e->used ? &e->val : NULL;
}
