/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_HASH_IPS_H
#define MEMTRACK_HASH_IPS_H

#include <stdint.h>

static inline uint64_t hash_ips_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * A stack's 64-bit hash, never 0 (an empty slot's), by which the shim and
 * the poller tell stacks apart; seed keeps one space's from another's (a
 * pid).  Four independent chains: a deep stack is not one multiply per
 * frame in a row (clang's stacks of 33 frames: the shim's hashing 1.9% ->
 * 1.2% of its samples).
 */
static inline uint64_t hash_ips(uint64_t seed, const uint64_t *ips, uint32_t nr)
{
	uint64_t h0 = hash_ips_mix(0xcbf29ce484222325ULL, seed);
	uint64_t h1 = hash_ips_mix(0x84222325cbf29ce4ULL, seed);
	uint64_t h2 = hash_ips_mix(0x9e3779b97f4a7c15ULL, seed);
	uint64_t h3 = hash_ips_mix(0x7f4a7c159e3779b9ULL, seed), h;
	uint32_t i = 0;

	for (; i + 4 <= nr; i += 4) {
		h0 = hash_ips_mix(h0, ips[i]);
		h1 = hash_ips_mix(h1, ips[i + 1]);
		h2 = hash_ips_mix(h2, ips[i + 2]);
		h3 = hash_ips_mix(h3, ips[i + 3]);
	}
	for (; i < nr; i++)
		h0 = hash_ips_mix(h0, ips[i]);
	h = hash_ips_mix(hash_ips_mix(hash_ips_mix(h0, h1), h2), h3);
	return h ? h : 1;
}

#endif
