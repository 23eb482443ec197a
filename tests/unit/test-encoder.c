// SPDX-License-Identifier: GPL-2.0
/*
 * encode_alloc_event() writes events as bytes of its own: they must be the
 * bytes msgpack-c packs for the same map, for every kind and at every
 * boundary of the integer encodings.
 */
#include <msgpack.h>
#include <stdlib.h>

#include "util/track/encoder.h"
#include "util/util.h"
#include "check.h"

/* the event as msgpack-c's packer writes it: what the artifact always held */
static void pack_with_msgpack_c(msgpack_sbuffer *sb, const struct mt_alloc_event *e)
{
	bool has_size = e->kind != MT_FREE;
	bool has_old = e->kind == MT_REALLOC;
	bool has_stack = e->stack != 0;
	msgpack_packer pk;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 5 + has_size + has_old + has_stack);
	pack_key(&pk, "pid");
	msgpack_pack_int32(&pk, e->pid);
	pack_key(&pk, "tid");
	msgpack_pack_int32(&pk, e->tid);
	pack_key(&pk, "timestamp");
	msgpack_pack_uint64(&pk, e->ts);
	pack_key(&pk, "addr");
	msgpack_pack_uint64(&pk, e->addr);
	pack_key(&pk, "type");
	pack_str(&pk, artifact__kind_name(e->kind));
	if (has_size) {
		pack_key(&pk, "size");
		msgpack_pack_uint64(&pk, e->size);
	}
	if (has_old) {
		pack_key(&pk, "old_addr");
		msgpack_pack_uint64(&pk, e->old_addr);
	}
	if (has_stack) {
		pack_key(&pk, "stack");
		msgpack_pack_uint64(&pk, e->stack);
	}
}

static void check_same_bytes(const struct mt_alloc_event *e)
{
	unsigned char buf[ALLOC_EVENT_MAX_BYTES];
	msgpack_sbuffer sb;
	size_t n;

	msgpack_sbuffer_init(&sb);
	pack_with_msgpack_c(&sb, e);
	n = encode_alloc_event(buf, e);
	CHECK(n == sb.size && !memcmp(buf, sb.data, n),
	      "kind %u pid %d tid %d ts %#llx addr %#llx size %#llx: %zu bytes, msgpack-c %zu",
	      e->kind, (int)e->pid, (int)e->tid, (unsigned long long)e->ts,
	      (unsigned long long)e->addr, (unsigned long long)e->size, n, sb.size);
	CHECK(n <= ALLOC_EVENT_MAX_BYTES, "%zu bytes", n);
	msgpack_sbuffer_destroy(&sb);
}

static const uint64_t unsigned_edges[] = {
	0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffffULL,
	0x100000000ULL, 0x7fffffffffffffffULL, UINT64_MAX,
};

/* pids are int32 in the artifact: the negative encodings too */
static const int32_t signed_edges[] = {
	0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, INT32_MAX,
	-1, -32, -33, -128, -129, -32768, -32769, INT32_MIN,
};

static void test_integer_edges(void)
{
	struct mt_alloc_event e = { .kind = MT_REALLOC, .stack = 1 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(unsigned_edges); i++) {
		e.ts = e.addr = e.size = e.old_addr = e.stack = unsigned_edges[i];
		check_same_bytes(&e);
	}
	for (i = 0; i < ARRAY_SIZE(signed_edges); i++)
		for (j = 0; j < ARRAY_SIZE(signed_edges); j++) {
			e.pid = (uint32_t)signed_edges[i];
			e.tid = (uint32_t)signed_edges[j];
			check_same_bytes(&e);
		}
}

static void test_every_kind(void)
{
	struct mt_alloc_event e = {
		.pid = 4242, .tid = 4243, .ts = 123456789012345ULL,
		.addr = 0x7f0012345678ULL, .size = 777, .old_addr = 0x55aa00001000ULL,
	};
	uint32_t kind;

	for (kind = 0; kind < MT_KIND_MAX; kind++) {
		if (!artifact__kind_name(kind))
			continue;
		e.kind = kind;
		e.stack = 0;
		check_same_bytes(&e);
		e.stack = 99;
		check_same_bytes(&e);
	}
}

/* pack_alloc_event() hands the same bytes to any packer */
static void test_through_a_packer(void)
{
	struct mt_alloc_event e = { .kind = MT_MALLOC, .pid = 7, .tid = 8, .ts = 9,
				    .addr = 0x1000, .size = 16, .stack = 3 };
	unsigned char buf[ALLOC_EVENT_MAX_BYTES];
	msgpack_sbuffer sb;
	msgpack_packer pk;
	size_t n = encode_alloc_event(buf, &e);

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_alloc_event(&pk, &e);
	pack_alloc_event(&pk, &e);
	CHECK(sb.size == 2 * n && !memcmp(sb.data, buf, n) && !memcmp(sb.data + n, buf, n),
	      "%zu bytes for two events of %zu", sb.size, n);
	msgpack_sbuffer_destroy(&sb);
}

int main(void)
{
	test_integer_edges();
	test_every_kind();
	test_through_a_packer();
	return test_done("encoder");
}
