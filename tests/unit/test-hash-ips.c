// SPDX-License-Identifier: GPL-2.0
/*
 * The hash the shim and the poller tell stacks apart by (util/hash-ips.h):
 * stacks one frame apart, with two frames swapped, a frame shorter or
 * longer (a frame of 0 included) hash apart, at every depth the four
 * chains and the tail meet; the same stack of two processes (seeds)
 * hashes apart; no hash is 0, an empty slot's.
 */
#include <stdio.h>

#include "check.h"
#include "util/hash-ips.h"

#define MAX_FRAMES	128

static const uint32_t lens[] = { 1, 2, 3, 4, 5, 7, 8, 9, 33, MAX_FRAMES - 1 };

static uint64_t frame(uint32_t i)
{
	return 0x7f0000401000ULL + i * 0x40;
}

static void test_one_frame_apart(void)
{
	uint64_t ips[MAX_FRAMES], h;
	unsigned int i, k, bad = 0, swapped = 0, shorter = 0;

	for (i = 0; i < MAX_FRAMES; i++)
		ips[i] = frame(i);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t nr = lens[k];

		h = hash_ips(0, ips, nr);
		CHECK(h != 0, "hash of %u frames is the empty slot's", nr);
		CHECK(hash_ips(0, ips, nr) == h, "hash of %u frames again", nr);
		for (i = 0; i < nr; i++) {
			ips[i] ^= 0x10;
			bad += hash_ips(0, ips, nr) == h;
			ips[i] ^= 0x10;
		}
		if (nr > 1) {
			uint64_t t = ips[nr - 2];

			ips[nr - 2] = ips[nr - 1];
			ips[nr - 1] = t;
			swapped += hash_ips(0, ips, nr) == h;
			ips[nr - 1] = ips[nr - 2];
			ips[nr - 2] = t;
			shorter += hash_ips(0, ips, nr - 1) == h;
		}
		/* a frame of 0 more is another stack too */
		ips[nr] = 0;
		shorter += hash_ips(0, ips, nr + 1) == h;
		ips[nr] = frame(nr);
	}
	CHECK_U64(bad, 0, "stacks one frame apart that hash alike");
	CHECK_U64(swapped, 0, "stacks with two frames swapped that hash alike");
	CHECK_U64(shorter, 0, "stacks a frame shorter or longer that hash alike");
}

static void test_seeds_apart(void)
{
	uint64_t ips[MAX_FRAMES];
	unsigned int i, k, alike = 0;

	for (i = 0; i < MAX_FRAMES; i++)
		ips[i] = frame(i);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (i = 1; i < 64; i++)
			alike += hash_ips(i, ips, lens[k]) == hash_ips(i + 1, ips, lens[k]);
	CHECK_U64(alike, 0, "one stack of two seeds (pids) that hashes alike");
	/* pid ^ ips[0] alone would make these two alike */
	ips[0] = frame(0) ^ 7;
	CHECK(hash_ips(0, ips, 1) != hash_ips(7, (uint64_t[]){ frame(0) }, 1),
	      "a seed is not xored into the first frame");
}

int main(void)
{
	test_one_frame_apart();
	test_seeds_apart();
	return test_done("hash-ips");
}
