// SPDX-License-Identifier: GPL-2.0
/*
 * The u64 map against a plain array of the same keys: random adds, finds
 * and takes over a small key space (long probe runs, removals that wrap
 * around the end of the slots) and key 0; reserve() makes room for good.
 */
#include <stdlib.h>

#include "util/u64-map.h"
#include "util/util.h"
#include "check.h"

#define KEYS	512

struct model {
	bool present[KEYS];
	uint64_t val[KEYS];
};

/* keys that collide in the high bits: they land in runs */
static uint64_t key_of(unsigned int i)
{
	return (uint64_t)i << 40 | i;	/* key_of(0) is 0 */
}

static void check_same(const struct u64_map *m, const struct model *md, const char *when)
{
	unsigned int i, n = 0, wrong = 0;

	for (i = 0; i < KEYS; i++) {
		uint64_t *v = u64_map__find(m, key_of(i));

		n += md->present[i];
		if (md->present[i] ? !v || *v != md->val[i] : v != NULL)
			wrong++;
	}
	CHECK(!wrong, "%s: %u keys differ", when, wrong);
	CHECK_U64(u64_map__count(m), n, when);
}

static void test_against_model(void)
{
	struct u64_map m;
	struct model md = { 0 };
	uint64_t x = 88172645463325252ULL, v;
	unsigned int step;

	u64_map__init(&m);
	CHECK(u64_map__find(&m, 5) == NULL, "empty map");
	CHECK(!u64_map__take(&m, 5, &v), "take from an empty map");
	for (step = 0; step < 200000; step++) {
		unsigned int i, op;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = x % KEYS;
		op = (x >> 20) % 3;
		if (op < 2) {
			uint64_t *v = u64_map__get(&m, key_of(i));

			CHECK(v && (md.present[i] ? *v == md.val[i] : *v == 0), "get %u", i);
			if (!v)
				break;
			*v = md.val[i] = x >> 1;
			md.present[i] = true;
		} else {
			bool took = u64_map__take(&m, key_of(i), &v);

			CHECK(took == md.present[i] && (!took || v == md.val[i]), "take %u", i);
			md.present[i] = false;
		}
		if (step % 10007 == 0)
			check_same(&m, &md, "random steps");
	}
	check_same(&m, &md, "after the random steps");
	u64_map__exit(&m);
	CHECK(u64_map__find(&m, key_of(3)) == NULL && u64_map__count(&m) == 0, "after exit");
}

static void test_reserve(void)
{
	struct u64_map m;
	size_t cap;
	uint64_t i;

	u64_map__init(&m);
	CHECK(!u64_map__reserve(&m, 1000), "reserve");
	cap = m.cap;
	for (i = 1; i <= 1000; i++)
		*u64_map__get(&m, i) = i;
	CHECK_U64(m.cap, cap, "no growth within the reserve");
	CHECK_U64(*u64_map__find(&m, 777), 777, "value");
	u64_map__exit(&m);
}

int main(void)
{
	test_against_model();
	test_reserve();
	return test_done("u64-map");
}
