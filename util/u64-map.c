// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64-map.h"
#include "util/util.h"

#define MIN_CAP		64

void u64_map__init(struct u64_map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64_map__exit(struct u64_map *m)
{
	free(m->slots);
	u64_map__init(m);
}

/* Fibonacci hashing: the high bits of the product spread any keys */
static inline size_t home_of(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - __builtin_ctzll(cap));
}

/* the slot of key, or the empty one where it would go; cap > 0 */
static inline struct u64_map_slot *slot_of(const struct u64_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = home_of(key, m->cap);

	while (m->slots[i].key && m->slots[i].key != key)
		i = (i + 1) & mask;
	return &m->slots[i];
}

static int resize(struct u64_map *m, size_t cap)
{
	struct u64_map bigger = *m;
	size_t i;

	bigger.cap = cap;
	bigger.slots = calloc(cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			*slot_of(&bigger, m->slots[i].key) = m->slots[i];
	free(m->slots);
	*m = bigger;
	return 0;
}

int u64_map__reserve(struct u64_map *m, size_t n)
{
	size_t cap = m->cap ? m->cap : MIN_CAP;

	while ((m->n + n) * 2 > cap)
		cap *= 2;
	return cap == m->cap ? 0 : resize(m, cap);
}

uint64_t *u64_map__find(const struct u64_map *m, uint64_t key)
{
	struct u64_map_slot *slot;

	if (!key)
		return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
	if (!m->cap)
		return NULL;
	slot = slot_of(m, key);
	return slot->key ? &slot->val : NULL;
}

uint64_t *u64_map__get(struct u64_map *m, uint64_t key)
{
	struct u64_map_slot *slot = NULL;

	if (!key) {
		if (!m->has_zero)
			m->zero_val = 0;
		m->has_zero = true;
		return &m->zero_val;
	}
	if (m->cap) {
		slot = slot_of(m, key);
		if (slot->key)
			return &slot->val;
	}
	/* past half full it grows; full but for one slot, it gives up */
	if ((m->n + 1) * 2 > m->cap) {
		if (!u64_map__reserve(m, 1))
			slot = slot_of(m, key);
		else if (!m->cap || m->n + 2 > m->cap)
			return NULL;
	}
	slot->key = key;
	slot->val = 0;
	m->n++;
	return &slot->val;
}

/* empties slot; linear probing without tombstones: later slots of the run move back */
static void remove_slot(struct u64_map *m, struct u64_map_slot *slot)
{
	size_t mask = m->cap - 1, i = slot - m->slots, j = i, home;

	for (;;) {
		m->slots[i].key = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!m->slots[j].key)
				goto done;
			home = home_of(m->slots[j].key, m->cap);
			/* j's entry may fill the hole at i unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		m->slots[i] = m->slots[j];
		i = j;
	}
done:
	m->n--;
}

bool u64_map__take(struct u64_map *m, uint64_t key, uint64_t *val)
{
	struct u64_map_slot *slot;

	if (!key) {
		if (!m->has_zero)
			return false;
		*val = m->zero_val;
		m->has_zero = false;
		return true;
	}
	if (!m->cap || !(slot = slot_of(m, key))->key)
		return false;
	*val = slot->val;
	remove_slot(m, slot);
	return true;
}

size_t u64_map__count(const struct u64_map *m)
{
	return m->n + m->has_zero;
}

void *u64_map__element(struct u64_map *m, uint64_t key, void **arr, size_t *nr,
		       size_t *cap, size_t size, bool *added)
{
	uint64_t *idx = u64_map__find(m, key);
	char *e;

	*added = !idx;
	if (idx)
		return (char *)*arr + *idx * size;
	if (u64_map__reserve(m, 1) || grow_array(arr, cap, *nr + 1, size))
		return NULL;
	*u64_map__get(m, key) = *nr;
	e = (char *)*arr + (*nr)++ * size;
	memset(e, 0, size);
	return e;
}
