// SPDX-License-Identifier: GPL-2.0
/*
 * encode_alloc_event() writes events as bytes of its own: they must be the
 * bytes msgpack-c packs for the same map, for every kind and at every
 * boundary of the integer encodings.  The encoder hands every event it took
 * to the file, in order, a last window short of full included, and a higher
 * level makes fewer bytes of the same windows.
 */
#define _GNU_SOURCE
#include <msgpack.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

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

/*
 * The nth event of a run, shaped as alloc_storm_procs's are (as
 * bench/encoder-bench.c makes them): malloc and free in turn, of 64
 * addresses and 1024 sizes; the timestamp says which.
 */
static void nth_event(struct mt_alloc_event *e, uint64_t i)
{
	*e = (struct mt_alloc_event){
		.kind = i % 2 ? MT_FREE : MT_MALLOC, .pid = 4242, .tid = 4242, .ts = 1000 + 700 * i,
		.addr = 0x55d4a0000000ULL + (i / 2 % 64) * 1056, .size = i % 2 ? 0 : 16 + (i / 2 & 1023),
	};
}

/* encodes events 0..n-1 into a file of its own; its fd, or -1 */
static int encode_run(uint64_t n, unsigned int threads, unsigned int window, int level,
		      uint64_t *out)
{
	struct encoder_opts o = { .threads = threads, .window_events = window, .level = level };
	struct mt_alloc_event e;
	struct encoder *enc;
	uint64_t i;

	o.fd = memfd_create("test-encoder", MFD_CLOEXEC);
	enc = o.fd < 0 ? NULL : encoder__new(&o);
	CHECK(enc, "encoder__new");
	if (!enc)
		return -1;
	for (i = 0; i < n; i++) {
		nth_event(&e, i);
		CHECK(!encoder__add(enc, &e), "event %" PRIu64, i);
	}
	CHECK(!encoder__drain(enc), "drain");
	CHECK_U64(encoder__events_in(enc), n, "events in");
	*out = encoder__events_out(enc);
	encoder__delete(enc);
	return o.fd;
}

static uint64_t map_u64(const msgpack_object *m, const char *key)
{
	uint32_t i;

	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];

		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen(key) &&
		    !memcmp(kv->key.via.str.ptr, key, kv->key.via.str.size) &&
		    kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
			return kv->val.via.u64;
	}
	return UINT64_MAX;
}

/* the file decompressed whole (skippable frames skipped), as a malloc'd buffer */
static char *decompress_file(int fd, size_t *len)
{
	struct stat st;
	ZSTD_DCtx *d = ZSTD_createDCtx();
	size_t cap = 1 << 20, r = 0;
	char *in, *out = malloc(cap);
	ZSTD_inBuffer ib;

	*len = 0;
	if (fstat(fd, &st) || !out || !d)
		return NULL;
	in = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (in == MAP_FAILED)
		return NULL;
	ib = (ZSTD_inBuffer){ in, st.st_size, 0 };
	while (ib.pos < ib.size) {
		ZSTD_outBuffer ob = { out, cap, *len };

		if (*len == cap) {
			out = realloc(out, cap *= 2);
			continue;
		}
		r = ZSTD_decompressStream(d, &ob, &ib);
		*len = ob.pos;
		if (ZSTD_isError(r))
			break;
	}
	CHECK(!ZSTD_isError(r) && r == 0, "the file decompresses: %s",
	      ZSTD_isError(r) ? ZSTD_getErrorName(r) : "cut short");
	munmap(in, st.st_size);
	ZSTD_freeDCtx(d);
	return out;
}

/* every event handed in is in the file once, in order, with its fields (a free has no size) */
static void check_every_event_out(uint64_t n, unsigned int threads, unsigned int window)
{
	uint64_t out = 0, seen = 0, wrong = 0;
	msgpack_unpacked u;
	size_t len, off = 0;
	char *buf;
	int fd = encode_run(n, threads, window, 1, &out);

	if (fd < 0)
		return;
	CHECK(out == n, "%" PRIu64 " events in windows of %u, %u threads: %" PRIu64 " taken by a worker",
	      n, window, threads, out);
	buf = decompress_file(fd, &len);
	msgpack_unpacked_init(&u);
	while (buf && msgpack_unpack_next(&u, buf, len, &off) == MSGPACK_UNPACK_SUCCESS) {
		struct mt_alloc_event e;

		if (u.data.type != MSGPACK_OBJECT_MAP || map_u64(&u.data, "timestamp") == UINT64_MAX)
			continue;
		nth_event(&e, seen++);
		wrong += map_u64(&u.data, "timestamp") != e.ts || map_u64(&u.data, "addr") != e.addr ||
			 map_u64(&u.data, "size") != (e.kind == MT_FREE ? UINT64_MAX : e.size);
	}
	CHECK(seen == n && !wrong && off == len,
	      "%" PRIu64 " events in windows of %u, %u threads: %" PRIu64 " in the file, %" PRIu64
	      " of them not the one at their place, %zu of %zu bytes read", n, window, threads,
	      seen, wrong, off, len);
	msgpack_unpacked_destroy(&u);
	free(buf);
	close(fd);
}

static void test_every_event_out(void)
{
	check_every_event_out(7, 1, 100);	/* one window, never full */
	check_every_event_out(1000, 1, 100);	/* full windows only */
	check_every_event_out(1050, 1, 100);	/* a last window of 50 */
	check_every_event_out(1050, 3, 100);
	check_every_event_out(4096 * 5 + 1, 2, 0);	/* default windows and one event more */
}

/* the same windows at level 19 take fewer bytes than at level 1: the level is applied */
static void test_level(void)
{

	uint64_t out;
	struct stat fast, best;
	int f = encode_run(40000, 2, 0, 1, &out), b = encode_run(40000, 2, 0, 19, &out);

	CHECK(f >= 0 && b >= 0 && !fstat(f, &fast) && !fstat(b, &best) && best.st_size < fast.st_size,
	      "level 19: %lld bytes, level 1: %lld", (long long)best.st_size, (long long)fast.st_size);
	close(f);
	close(b);
}

int main(void)
{
	test_integer_edges();
	test_every_kind();
	test_through_a_packer();
	test_every_event_out();
	test_level();
	return test_done("encoder");
}
