// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact reader against the encoder: round trips for every event type
 * and window size, truncation at many offsets (at a frame's end too: the
 * trailer is missing), garbage, JSON, an empty file, CodSpeed-style
 * artifacts (no header, events only, records across frames), unknown record
 * types and keys, records too large to be real, and formats too new.
 *
 * timeout: 120 (12 s alone, 37 s while others test on the same cores)
 */
#include <zstd.h>

#include "util/artifact/artifact.h"
#include "util/util.h"
#include "test-artifact.h"

#define NR_EVENTS	1000

static struct mt_alloc_event events[NR_EVENTS];

static void make_events(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < NR_EVENTS; i++) {
		struct mt_alloc_event *e = &events[i];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		e->kind = MT_MALLOC + i % (MT_BRK - MT_MALLOC + 1);
		e->pid = 100 + i % 3;
		e->tid = e->pid + i % 5;
		e->ts = 1000000000ULL + i * 1000;
		e->addr = (x & 0xffffffffff0ULL) | (i == 7 ? 1ULL << 63 : 0);
		e->size = e->kind == MT_FREE ? 0 : (x >> 40) % 100000;
		e->old_addr = e->kind == MT_REALLOC ? x >> 3 : 0;
	}
	/* values that take each msgpack integer width */
	events[1].size = 0;
	events[2].size = 0xffffffffffffffffULL;
	events[3].pid = 0x7fffffff;
	events[6].size = 200;
	events[5].ts = 0;
}

static bool same_event(const struct artifact_record *r, const struct mt_alloc_event *e)
{
	uint64_t want = AR_HAS(AK_PID) | AR_HAS(AK_TID) | AR_HAS(AK_TIMESTAMP) |
			AR_HAS(AK_ADDR);

	if (e->kind != MT_FREE)
		want |= AR_HAS(AK_SIZE);
	if (e->kind == MT_REALLOC)
		want |= AR_HAS(AK_OLD_ADDR);
	return r->type == ARTIFACT_EVENT && r->kind == e->kind &&
	       r->has == want && r->pid == (int32_t)e->pid &&
	       r->tid == (int32_t)e->tid && r->timestamp == e->ts &&
	       r->addr == e->addr && r->size == e->size &&
	       r->old_addr == e->old_addr;
}

struct readback {
	uint64_t events;	/* matching events[] in order */
	uint64_t mismatches;
	uint64_t metas, processes, others;
	int ret;		/* the last artifact__next() */
	uint64_t records, offset;
	char reason[256];
};

static void read_all(const char *path, struct readback *rb)
{
	const struct artifact_record *r;
	struct artifact *a;
	int err = artifact__open(path, &a);

	memset(rb, 0, sizeof(*rb));
	rb->ret = err;
	if (err)
		return;
	while ((rb->ret = artifact__next(a, &r)) == 1) {
		if (r->type == ARTIFACT_EVENT) {
			if (rb->events >= NR_EVENTS || !same_event(r, &events[rb->events]))
				rb->mismatches++;
			rb->events++;
		} else if (r->type == ARTIFACT_META) {
			rb->metas++;
		} else if (r->type == ARTIFACT_PROCESS) {
			rb->processes++;
		} else {
			rb->others++;
		}
	}
	rb->records = artifact__records(a);
	rb->offset = artifact__error_offset(a);
	snprintf(rb->reason, sizeof(rb->reason), "%s", artifact__strerror(a));
	artifact__close(a);
}

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "sh -c 'true'", 100, 1, 2, 3, 0);
	test_pack_process(pk, 100, 1, "sh", "/bin/sh", 0);
	test_pack_process(pk, 101, 100, "true", NULL, 9);
}

static void test_round_trip(unsigned int window, size_t n, bool trailer)
{
	const char *path = test_path("round-trip");
	struct readback rb;
	int err;

	err = test_write_artifact(path, events, n, window,
				  trailer ? pack_trailer : NULL, NULL);
	CHECK(!err, "write: %s", strerror(-err));
	read_all(path, &rb);
	if (trailer)
		CHECK(rb.ret == 0, "window %u, %zu events: ret %d (%s)", window, n, rb.ret,
		      rb.reason);
	else	/* a run that was killed: every event, then the missing trailer */
		CHECK(rb.ret == -EBADMSG && strstr(rb.reason, "trailer is missing"),
		      "window %u, %zu events, no trailer: ret %d (%s)", window, n, rb.ret,
		      rb.reason);
	CHECK_U64(rb.events, n, "events");
	CHECK_U64(rb.mismatches, 0, "mismatched events");
	CHECK_U64(rb.metas, trailer, "Meta records");
	CHECK_U64(rb.processes, trailer ? 2 : 0, "Process records");
	CHECK_U64(rb.records, n + (trailer ? 3 : 0), "records");
}

static void test_trailer_fields(void)
{
	const char *path = test_path("trailer");
	const struct artifact_record *r;
	struct artifact *a;
	int n = 0;

	CHECK(!test_write_artifact(path, events, 10, 4, pack_trailer, NULL), "write");
	CHECK(!artifact__open(path, &a), "open");
	while (artifact__next(a, &r) == 1) {
		if (r->type == ARTIFACT_META) {
			n++;
			CHECK(r->format == 1 && !strcmp(r->tool, "memtrack") &&
			      !strcmp(r->version, "0.1.0") &&
			      !strcmp(r->command, "sh -c 'true'") &&
			      r->root_pid == 100 && r->start == 1 && r->end == 2 &&
			      r->drops.events == 3 && r->exit_code == 0, "Meta fields");
			CHECK(r->has & AR_HAS(AK_DROPS), "Meta drops present");
		} else if (r->type == ARTIFACT_PROCESS && r->pid == 100) {
			n++;
			CHECK(r->ppid == 1 && !strcmp(r->comm, "sh") &&
			      !strcmp(r->exe, "/bin/sh") && r->exit_code == 0,
			      "Process 100 fields");
		} else if (r->type == ARTIFACT_PROCESS && r->pid == 101) {
			n++;
			CHECK(!(r->has & AR_HAS(AK_EXE)) && r->exe == NULL &&
			      r->exit_code == 9 && !strcmp(r->comm, "true"),
			      "Process 101 without exe");
			CHECK(!strcmp(artifact_record__type_name(r), "Process"), "type name");
		}
	}
	CHECK(n == 3, "trailer records seen: %d", n);
	artifact__close(a);
}

/* the file offsets where each zstd frame starts, and the file's end */
static size_t frame_offsets(const unsigned char *buf, size_t len, size_t *off, size_t max)
{
	size_t n = 0, pos = 0;

	while (pos < len && n < max) {
		size_t size = ZSTD_findFrameCompressedSize(buf + pos, len - pos);

		if (ZSTD_isError(size))
			break;
		off[n++] = pos;
		pos += size;
	}
	if (n < max)
		off[n] = pos;
	return n;
}

static void pack_trailer_first(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_process(pk, 101, 100, "true", NULL, 9);
}

static void pack_trailer_second(msgpack_packer *pk, void *arg)
{
	(void)arg;
	test_pack_meta(pk, "sh -c 'true'", 100, 1, 2, 3, 0);
	test_pack_process(pk, 100, 1, "sh", "/bin/sh", 0);
}

/*
 * A trailer in two frames, as track writes its halves, Meta in the last:
 * read as one, read first from its last frame, and cut between the two it
 * reads as missing.
 */
static void test_trailer_in_two_frames(void)
{
	const char *path = test_path("two-part-trailer");
	size_t len, off[64], nframes;
	unsigned char *buf;
	struct readback rb;

	const char *cut = test_path("two-part-trailer-cut");
	const struct artifact_record *r;
	struct artifact *a;

	CHECK(!test_write_artifact2(path, events, 10, 4, pack_trailer_first, NULL,
				    pack_trailer_second, NULL), "write");
	buf = test_read_file(path, &len);
	CHECK(buf != NULL, "read back");
	if (!buf)
		return;
	/* the header, 3 windows, the trailer's two */
	nframes = frame_offsets(buf, len, off, 63);
	CHECK(nframes == 6 && off[nframes] == len, "%zu frames", nframes);
	read_all(path, &rb);
	CHECK(rb.ret == 0, "ret %d (%s)", rb.ret, rb.reason);
	CHECK_U64(rb.events, 10, "events");
	CHECK_U64(rb.metas, 1, "Meta records");
	CHECK_U64(rb.processes, 2, "Process records, one from each frame");
	CHECK_U64(rb.records, 13, "records");

	CHECK(!artifact__open_trailer(path, &a), "open the trailer's last frame");
	CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_META, "Meta first there");
	CHECK(artifact__next(a, &r) == 1 && r->type == ARTIFACT_PROCESS && r->pid == 100,
	      "then the processes");
	artifact__close(a);

	if (nframes == 6) {
		CHECK(!test_write_bytes(cut, buf, off[5]), "write cut");
		read_all(cut, &rb);
		CHECK(rb.ret == -EBADMSG && strstr(rb.reason, "trailer is missing"),
		      "cut between the two: ret %d (%s)", rb.ret, rb.reason);
	}
	free(buf);
}

/* the windows of test_truncation()'s artifact before frame f: the header, 10 windows, the trailer */
static size_t windows_before(size_t f)
{
	return f ? (f - 1 < 10 ? f - 1 : 10) : 0;
}

static void test_truncation(void)
{
	const char *full = test_path("full"), *cut = test_path("cut");
	size_t len, off[64], nframes, f, k, pos;
	unsigned char *buf;
	struct readback rb;

	CHECK(!test_write_artifact(full, events, NR_EVENTS, 100, pack_trailer, NULL),
	      "write");
	buf = test_read_file(full, &len);
	CHECK(buf != NULL, "read back");
	if (!buf)
		return;
	nframes = frame_offsets(buf, len, off, 63);
	CHECK(nframes == 12 && off[nframes] == len, "%zu frames", nframes);
	CHECK_U64(off[1], ARTIFACT_HEADER_SIZE, "the header frame");

	for (f = 0; f < nframes; f++) {
		size_t flen = off[f + 1] - off[f];
		size_t cuts[] = { 0, 1, 4, 7, flen / 2, flen - 4, flen - 1 };

		for (k = 0; k < ARRAY_SIZE(cuts); k++) {
			CHECK(!test_write_bytes(cut, buf, off[f] + cuts[k]), "write cut");
			read_all(cut, &rb);
			if (cuts[k] == 0 && f == 0) {
				CHECK(rb.ret == -ENOMSG && strstr(rb.reason, "empty"),
				      "nothing left: ret %d (%s)", rb.ret, rb.reason);
				continue;
			}
			if (cuts[k] == 0) {
				/* a cut between frames: the trailer is what is missing */
				CHECK(rb.ret == -EBADMSG && strstr(rb.reason, "trailer is missing"),
				      "cut at frame %zu: ret %d (%s)", f, rb.ret, rb.reason);
				CHECK_U64(rb.events, windows_before(f) * 100, "events before a clean cut");
				CHECK_U64(rb.offset, off[f], "error offset of a clean cut");
				continue;
			}
			CHECK(rb.ret == -EBADMSG, "cut %zu into frame %zu: ret %d",
			      cuts[k], f, rb.ret);
			CHECK(rb.events >= windows_before(f) * 100,
			      "events of complete frames: %" PRIu64, rb.events);
			CHECK_U64(rb.mismatches, 0, "mismatches before a cut");
			CHECK_U64(rb.offset, off[f], "error offset");
			CHECK(strstr(rb.reason, "incomplete") != NULL, "reason: %s", rb.reason);
		}
	}
	/* and everywhere else, a byte at a time near the start, then sparser */
	for (pos = 0; pos < len; pos += pos < 200 ? 1 : 97) {
		CHECK(!test_write_bytes(cut, buf, pos), "write cut");
		read_all(cut, &rb);
		CHECK(rb.ret == (pos ? -EBADMSG : -ENOMSG), "cut at %zu: %d", pos, rb.ret);
		CHECK_U64(rb.mismatches, 0, "mismatches");
	}
	free(buf);
}

static void test_corruption(void)
{
	const char *full = test_path("full"), *bad = test_path("bad");
	unsigned char *buf;
	struct readback rb;
	size_t len, pos;

	CHECK(!test_write_artifact(full, events, NR_EVENTS, 100, pack_trailer, NULL),
	      "write");
	buf = test_read_file(full, &len);
	if (!buf)
		return;
	for (pos = 0; pos < len; pos += 13) {
		buf[pos] ^= 0x55;
		CHECK(!test_write_bytes(bad, buf, len), "write");
		buf[pos] ^= 0x55;
		read_all(bad, &rb);
		/* a flipped byte is caught by zstd (checksums) or by the decoder */
		CHECK(rb.ret == 0 || rb.ret == -EBADMSG || (pos < 8 && rb.ret == -ENOMSG),
		      "flip at %zu: %d", pos, rb.ret);
		CHECK(rb.ret != 0 || rb.events == NR_EVENTS || rb.mismatches,
		      "flip at %zu went unseen", pos);
	}
	free(buf);
}

static void test_garbage(void)
{
	const char *path = test_path("garbage");
	const char jsonl[] = "{\"k\":\"ring_open\",\"t\":1,\"ring\":\"events\"}\n";
	unsigned char junk[4096];
	struct readback rb;
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (i * 7919) ^ (i >> 3);
	CHECK(!test_write_bytes(path, junk, sizeof(junk)), "write");
	read_all(path, &rb);
	CHECK(rb.ret == -ENOMSG, "garbage: ret %d", rb.ret);
	CHECK_U64(rb.records, 0, "records in garbage");
	CHECK_U64(rb.offset, 0, "garbage offset");
	CHECK(strstr(rb.reason, "does not start with a zstd frame") != NULL, "reason: %s",
	      rb.reason);

	CHECK(!test_write_bytes(path, jsonl, sizeof(jsonl) - 1), "write JSON lines");
	read_all(path, &rb);
	CHECK(rb.ret == -ENOMSG && strstr(rb.reason, "'memtrack stats' reads those"),
	      "JSON lines: ret %d (%s)", rb.ret, rb.reason);

	/* zstd, but not of msgpack maps */
	CHECK(!test_write_chunked(path, jsonl, sizeof(jsonl) - 1, 1 << 20), "write zstd JSON");
	read_all(path, &rb);
	CHECK(rb.ret == -ENOMSG && strstr(rb.reason, "not msgpack records"),
	      "zstd'd JSON: ret %d (%s)", rb.ret, rb.reason);

	CHECK(!test_write_bytes(path, "", 0), "write empty");
	read_all(path, &rb);
	CHECK(rb.ret == -ENOMSG && strstr(rb.reason, "empty") && rb.records == 0,
	      "empty file: ret %d (%s)", rb.ret, rb.reason);

	read_all(test_path("does-not-exist"), &rb);
	CHECK(rb.ret == -ENOENT, "missing file: %d", rb.ret);
	read_all(test_tmpdir(), &rb);
	CHECK(rb.ret == -EISDIR, "directory: %d", rb.ret);
}

static void pack_events(msgpack_sbuffer *sb, size_t n)
{
	msgpack_packer pk;
	size_t i;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	for (i = 0; i < n; i++)
		pack_alloc_event(&pk, &events[i]);
}

static void test_codspeed_style(void)
{
	const char *path = test_path("codspeed");
	size_t chunks[] = { 1, 7, 64, 1 << 20 };
	msgpack_sbuffer sb;
	struct readback rb;
	size_t i;

	/* one stream, framed anyhow: records cut by frame ends; no header, no trailer */
	msgpack_sbuffer_init(&sb);
	pack_events(&sb, NR_EVENTS);
	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		CHECK(!test_write_chunked(path, sb.data, sb.size, chunks[i]), "write");
		read_all(path, &rb);
		CHECK(rb.ret == 0 && rb.events == NR_EVENTS && !rb.mismatches,
		      "frames of %zu bytes: ret %d (%s), %" PRIu64 " events",
		      chunks[i], rb.ret, rb.reason, rb.events);
	}
	/* a stream cut inside a record, at the end of a complete frame */
	CHECK(!test_write_chunked(path, sb.data, sb.size - 3, 64), "write");
	read_all(path, &rb);
	CHECK(rb.ret == -EBADMSG && strstr(rb.reason, "inside a record"),
	      "cut record: ret %d (%s)", rb.ret, rb.reason);
	CHECK_U64(rb.events, NR_EVENTS - 1, "events before the cut record");
	msgpack_sbuffer_destroy(&sb);
}

/*
 * The reader's fast path for events as encode_alloc_event() writes them, and
 * its fallback to the generic decoder for everything else: each case is one
 * record, then enough encoder events after it that the fast path has the
 * bytes at hand to try it.  A case the fast path got wrong would show here
 * as a field or presence bit different from the generic decoder's reading.
 */
struct layout_case {
	const char *what;
	const char *bytes;
	size_t len;
	enum artifact_type type;
	enum mt_kind kind;
	uint64_t has;
	int32_t pid, tid;
	uint64_t timestamp, addr, size, old_addr, stack;
	bool bad_after;		/* the bytes after the record are not a record */
};

#define B(lit)		lit, sizeof(lit) - 1
#define EV4		(AR_HAS(AK_PID) | AR_HAS(AK_TID) | AR_HAS(AK_TIMESTAMP) | \
			 AR_HAS(AK_ADDR))
#define K_PID		"\xa3pid"
#define K_TID		"\xa3tid"
#define K_TS		"\xa9timestamp"
#define K_ADDR		"\xa4" "addr"
#define K_TYPE		"\xa4type"
#define K_SIZE		"\xa4size"
#define K_OLD		"\xa8old_addr"
#define K_STACK		"\xa5stack"

static const struct layout_case layout_cases[] = {
	{ "the encoder's layout, every key, every width",
	  B("\x88" K_PID "\xcd\x9c\x41" K_TID "\x05" K_TS "\xcf\x00\x00\x01\x00\x00\x00\x00\x00"
	    K_ADDR "\xce\x12\x34\x56\x78" K_TYPE "\xa7Realloc" K_SIZE "\xcc\xc8"
	    K_OLD "\xcd\x01\x00" K_STACK "\x2a"),
	  ARTIFACT_EVENT, MT_REALLOC, EV4 | AR_HAS(AK_SIZE) | AR_HAS(AK_OLD_ADDR) | AR_HAS(AK_STACK),
	  40001, 5, 1ULL << 40, 0x12345678, 200, 256, 42, false },
	{ "a free: five entries",
	  B("\x85" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "largest values",
	  B("\x86" K_PID "\xce\x7f\xff\xff\xff" K_TID "\xce\x7f\xff\xff\xff"
	    K_TS "\xcf\xff\xff\xff\xff\xff\xff\xff\xff" K_ADDR "\xcf\xff\xff\xff\xff\xff\xff\xff\xfe"
	    K_TYPE "\xa3" "Brk" K_SIZE "\xcf\x80\x00\x00\x00\x00\x00\x00\x00"),
	  ARTIFACT_EVENT, MT_BRK, EV4 | AR_HAS(AK_SIZE), INT32_MAX, INT32_MAX,
	  UINT64_MAX, UINT64_MAX - 1, 1ULL << 63, 0, 0, false },
	{ "a stack without a size",
	  B("\x86" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa6Malloc"
	    K_STACK "\x09"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4 | AR_HAS(AK_STACK), 1, 2, 3, 4, 0, 0, 9, false },
	{ "type first",
	  B("\x85" K_TYPE "\xa6Malloc" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "pid as a signed int32",
	  B("\x85" K_PID "\xd2\x00\x00\x00\x07" K_TID "\x02" K_TS "\x03" K_ADDR "\x04"
	    K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, 7, 2, 3, 4, 0, 0, 0, false },
	{ "negative pid",
	  B("\x85" K_PID "\xff" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, -1, 2, 3, 4, 0, 0, 0, false },
	{ "pid too large for an int32",
	  B("\x85" K_PID "\xce\x80\x00\x00\x00" K_TID "\x02" K_TS "\x03" K_ADDR "\x04"
	    K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4 & ~AR_HAS(AK_PID), 0, 2, 3, 4, 0, 0, 0, false },
	{ "timestamp as a signed int64",
	  B("\x85" K_PID "\x01" K_TID "\x02" K_TS "\xd3\x00\x00\x00\x00\x00\x00\x00\x03"
	    K_ADDR "\x04" K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "type as a str8",
	  B("\x85" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xd9\x04" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "a map16 header",
	  B("\xde\x00\x05" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa4" "Free"),
	  ARTIFACT_EVENT, MT_FREE, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "an unknown key",
	  B("\x86" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa6Malloc"
	    "\xa5" "size2" "\x05"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	{ "a key twice: the last one counts",
	  B("\x87" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa6Malloc"
	    K_SIZE "\x05" K_SIZE "\x06"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4 | AR_HAS(AK_SIZE), 1, 2, 3, 4, 6, 0, 0, false },
	{ "a size of nil",
	  B("\x86" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa6Malloc"
	    K_SIZE "\xc0"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4, 1, 2, 3, 4, 0, 0, 0, false },
	/* the value of size looks like the next key: it is a string, no more */
	{ "a size of \"old_addr\"",
	  B("\x86" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa6Malloc"
	    K_SIZE K_OLD "\x05"),
	  ARTIFACT_EVENT, MT_MALLOC, EV4, 1, 2, 3, 4, 0, 0, 0, true },
	{ "nine entries",
	  B("\x89" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa7Realloc"
	    K_SIZE "\x05" K_OLD "\x06" K_STACK "\x07" "\xa3" "foo" "\x08"),
	  ARTIFACT_EVENT, MT_REALLOC, EV4 | AR_HAS(AK_SIZE) | AR_HAS(AK_OLD_ADDR) | AR_HAS(AK_STACK),
	  1, 2, 3, 4, 5, 6, 7, false },
	{ "entries out of the encoder's order",
	  B("\x88" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa7Realloc"
	    K_OLD "\x06" K_SIZE "\x05" K_STACK "\x07"),
	  ARTIFACT_EVENT, MT_REALLOC, EV4 | AR_HAS(AK_SIZE) | AR_HAS(AK_OLD_ADDR) | AR_HAS(AK_STACK),
	  1, 2, 3, 4, 5, 6, 7, false },
	{ "not an event",
	  B("\x85" K_PID "\x01" K_TID "\x02" K_TS "\x03" K_ADDR "\x04" K_TYPE "\xa4" "Meta"),
	  ARTIFACT_META, 0, EV4, 1, 2, 3, 4, 0, 0, 0, false },
};

static void test_event_layouts(void)
{
	const char *path = test_path("layouts");
	const struct layout_case *t;
	const struct artifact_record *r;
	struct artifact *a;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	size_t i, n;
	int ret;

	for (t = layout_cases; t < layout_cases + ARRAY_SIZE(layout_cases); t++) {
		msgpack_sbuffer_init(&sb);
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		msgpack_sbuffer_write(&sb, t->bytes, t->len);
		for (i = 0; i < 8; i++)
			pack_alloc_event(&pk, &events[i]);
		CHECK(!test_write_chunked(path, sb.data, sb.size, 1 << 20), "write");
		msgpack_sbuffer_destroy(&sb);
		if (artifact__open(path, &a)) {
			CHECK(0, "%s: open", t->what);
			continue;
		}
		ret = artifact__next(a, &r);
		CHECK(ret == 1, "%s: ret %d (%s)", t->what, ret, artifact__strerror(a));
		if (ret == 1) {
			CHECK(r->type == t->type && r->kind == t->kind,
			      "%s: type %d kind %d", t->what, r->type, r->kind);
			CHECK(r->has == t->has, "%s: has %#" PRIx64 ", not %#" PRIx64, t->what, r->has, t->has);
			CHECK(r->pid == t->pid && r->tid == t->tid,
			      "%s: pid %d tid %d", t->what, r->pid, r->tid);
			CHECK(r->timestamp == t->timestamp && r->addr == t->addr &&
			      r->size == t->size && r->old_addr == t->old_addr &&
			      r->stack == t->stack, "%s: values", t->what);
		}
		for (n = 0; (ret = artifact__next(a, &r)) == 1; n++)
			CHECK(n < 8 && same_event(r, &events[n]), "%s: event %zu after", t->what, n);
		if (t->bad_after)
			CHECK(ret == -EBADMSG, "%s: after: ret %d", t->what, ret);
		else
			CHECK(ret == 0 && n == 8, "%s: after: ret %d (%s), %zu events",
			      t->what, ret, artifact__strerror(a), n);
		artifact__close(a);
	}
}

/*
 * Encoder events with stacks cut at every byte: the events before the cut
 * come out whole, then the reader reports the cut record, whichever of the
 * fast path or the generic decoder met it; and the same stream in frames
 * of a few bytes each.
 */
static void test_event_cuts(void)
{
	const char *path = test_path("cuts");
	struct mt_alloc_event ev[24];
	size_t ends[ARRAY_SIZE(ev)], cut, i, n, complete;
	size_t chunks[] = { 1, 5, 64 };
	const struct artifact_record *r;
	struct artifact *a;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	bool ok;
	int ret;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	for (i = 0; i < ARRAY_SIZE(ev); i++) {
		ev[i] = events[i % 16];
		ev[i].stack = i % 3 ? 0 : i * 0x10001ULL;
		ev[i].pid = i % 4 == 1 ? 0x7fffffff : ev[i].pid;
		pack_alloc_event(&pk, &ev[i]);
		ends[i] = sb.size;
	}
	for (cut = 0; cut <= sb.size; cut++) {
		for (complete = 0; complete < ARRAY_SIZE(ev) && ends[complete] <= cut; complete++)
			;
		CHECK(!test_write_chunked(path, sb.data, cut, 1 << 20), "write");
		if (artifact__open(path, &a)) {
			CHECK(0, "open");
			break;
		}
		ok = true;
		for (n = 0; (ret = artifact__next(a, &r)) == 1; n++)
			ok &= n < complete && r->type == ARTIFACT_EVENT &&
			      r->kind == ev[n].kind && r->pid == (int32_t)ev[n].pid &&
			      r->tid == (int32_t)ev[n].tid && r->timestamp == ev[n].ts &&
			      r->addr == ev[n].addr && r->size == ev[n].size &&
			      r->old_addr == ev[n].old_addr && r->stack == ev[n].stack &&
			      !!(r->has & AR_HAS(AK_STACK)) == !!ev[n].stack;
		CHECK(ok && n == complete, "cut at %zu: %zu events, not %zu", cut, n, complete);
		if (!cut)
			CHECK(ret == -ENOMSG, "nothing: ret %d", ret);
		else if (cut == (complete ? ends[complete - 1] : 0))
			CHECK(ret == 0, "cut at %zu, a record's end: ret %d", cut, ret);
		else
			CHECK(ret == -EBADMSG, "cut at %zu: ret %d", cut, ret);
		artifact__close(a);
	}
	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		CHECK(!test_write_chunked(path, sb.data, sb.size, chunks[i]), "write");
		if (artifact__open(path, &a)) {
			CHECK(0, "open");
			break;
		}
		ok = true;
		for (n = 0; (ret = artifact__next(a, &r)) == 1; n++)
			ok &= n < ARRAY_SIZE(ev) && r->kind == ev[n].kind &&
			      r->addr == ev[n].addr && r->stack == ev[n].stack;
		CHECK(ok && ret == 0 && n == ARRAY_SIZE(ev), "frames of %zu: ret %d, %zu events",
		      chunks[i], ret, n);
		artifact__close(a);
	}
	msgpack_sbuffer_destroy(&sb);
}

static void pack_odd_records(msgpack_packer *pk, void *arg)
{
	(void)arg;
	/* an unknown record type with nested values */
	msgpack_pack_map(pk, 3);
	pack_key(pk, "type");
	pack_str(pk, "FutureThing");
	pack_key(pk, "list");
	msgpack_pack_array(pk, 3);
	msgpack_pack_nil(pk);
	msgpack_pack_map(pk, 1);
	pack_key(pk, "deep");
	msgpack_pack_array(pk, 0);
	msgpack_pack_double(pk, 1.5);
	pack_key(pk, "bin");
	msgpack_pack_bin(pk, 3);
	msgpack_pack_bin_body(pk, "abc", 3);
	/* a map without a type */
	msgpack_pack_map(pk, 1);
	pack_key(pk, "pid");
	msgpack_pack_int32(pk, 5);
	/* an event with a stack, unknown keys, a non-string key and a key
	 * with a NUL in it (the fuzzer's first find: read past "comm") */
	msgpack_pack_map(pk, 10);
	msgpack_pack_str(pk, 6);
	msgpack_pack_str_body(pk, "comm\0x", 6);
	pack_str(pk, "not the comm");
	pack_key(pk, "unknown");
	msgpack_pack_map(pk, 1);
	msgpack_pack_int(pk, 1);
	msgpack_pack_array(pk, 1);
	msgpack_pack_true(pk);
	pack_key(pk, "type");
	pack_str(pk, "Malloc");
	pack_key(pk, "pid");
	msgpack_pack_int8(pk, -3);
	pack_key(pk, "tid");
	pack_str(pk, "not a number");
	pack_key(pk, "timestamp");
	msgpack_pack_uint64(pk, 77);
	pack_key(pk, "addr");
	msgpack_pack_uint64(pk, 0x1000);
	pack_key(pk, "size");
	msgpack_pack_uint64(pk, 48);
	pack_key(pk, "stack");
	msgpack_pack_uint64(pk, 12);
	msgpack_pack_int(pk, 42);
	msgpack_pack_str(pk, 1);
	msgpack_pack_str_body(pk, "x", 1);
	/* Frame and Stack */
	msgpack_pack_map(pk, 6);
	pack_key(pk, "type");
	pack_str(pk, "Frame");
	pack_key(pk, "id");
	msgpack_pack_uint64(pk, 3);
	pack_key(pk, "ip");
	msgpack_pack_uint64(pk, 0x401000);
	pack_key(pk, "module");
	pack_str(pk, "/usr/bin/true");
	pack_key(pk, "symbol");
	pack_str(pk, "main");
	pack_key(pk, "line");
	msgpack_pack_uint32(pk, 17);
	msgpack_pack_map(pk, 3);
	pack_key(pk, "type");
	pack_str(pk, "Stack");
	pack_key(pk, "id");
	msgpack_pack_uint64(pk, 12);
	pack_key(pk, "frames");
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint64(pk, 3);
	msgpack_pack_uint64(pk, 4);
	msgpack_pack_uint64(pk, 1ULL << 40);
	test_pack_meta(pk, "odd", 1, 0, 0, 0, 0);
}

static void test_unknown_records(void)
{
	const char *path = test_path("odd");
	const struct artifact_record *r;
	struct artifact *a;
	int seen = 0;

	CHECK(!test_write_artifact(path, events, 3, 0, pack_odd_records, NULL), "write");
	CHECK(!artifact__open(path, &a), "open");
	while (artifact__next(a, &r) == 1) {
		if (r->type == ARTIFACT_EVENT && r->timestamp == 77) {
			seen++;
			CHECK(r->kind == MT_MALLOC && r->pid == -3 && r->addr == 0x1000 &&
			      r->size == 48 && r->stack == 12, "odd event fields");
			CHECK(!(r->has & AR_HAS(AK_TID)) && (r->has & AR_HAS(AK_STACK)) &&
			      !(r->has & AR_HAS(AK_COMM)),
			      "odd event presence %#" PRIx64, r->has);
		} else if (r->type == ARTIFACT_FRAME) {
			seen++;
			CHECK(r->id == 3 && r->ip == 0x401000 && !strcmp(r->module, "/usr/bin/true") &&
			      !strcmp(r->symbol, "main") && r->line == 17 && !r->file,
			      "Frame fields");
		} else if (r->type == ARTIFACT_STACK) {
			seen++;
			CHECK(r->id == 12 && r->frames.n == 3 && r->frames.v[0] == 3 &&
			      r->frames.v[2] == 1ULL << 40, "Stack fields");
		}
	}
	CHECK(seen == 3, "odd records seen: %d", seen);
	CHECK(!*artifact__strerror(a), "no error: %s", artifact__strerror(a));
	CHECK_U64(artifact__skipped(a), 2, "skipped records");
	CHECK_U64(artifact__records(a), 3 + 5 + 1, "records");
	artifact__close(a);
}

static void pack_big_process(msgpack_packer *pk, void *arg)
{
	size_t len = *(size_t *)arg;
	char *exe = malloc(len + 1);

	memset(exe, 'x', len);
	exe[len] = 0;
	test_pack_process(pk, 1, 0, "big", exe, 0);
	test_pack_meta(pk, "big", 1, 0, 0, 0, 0);
	free(exe);
}

static void test_large_records(void)
{
	const char *path = test_path("large");
	const struct artifact_record *r;
	size_t big = 3 << 20;
	struct artifact *a;
	bool ok = false;
	int ret;

	CHECK(!test_write_artifact(path, events, 5, 0, pack_big_process, &big), "write");
	CHECK(!artifact__open(path, &a), "open");
	while ((ret = artifact__next(a, &r)) == 1)
		if (r->type == ARTIFACT_PROCESS)
			ok = strlen(r->exe) == big;
	CHECK(ret == 0 && ok, "a 3 MiB record: ret %d", ret);
	artifact__close(a);

	big = ARTIFACT_MAX_RECORD + 10;
	CHECK(!test_write_artifact(path, events, 5, 0, pack_big_process, &big), "write");
	CHECK(!artifact__open(path, &a), "open");
	while ((ret = artifact__next(a, &r)) == 1)
		;
	CHECK(ret == -EBADMSG && strstr(artifact__strerror(a), "larger than"),
	      "a record over the limit: %d %s", ret, artifact__strerror(a));
	CHECK_U64(artifact__records(a), 5, "records before the huge one");
	artifact__close(a);
}

/* the artifact format: a newer major version is refused, by the header or by Meta */
static void test_format_versions(void)
{
	const char *path = test_path("newer");
	unsigned char hdr[ARTIFACT_HEADER_SIZE];
	struct readback rb;
	msgpack_sbuffer sb;
	msgpack_packer pk;
	unsigned char *buf;
	size_t len, hlen = artifact__header(hdr);

	/* a header of format 2 on an artifact of this memtrack: refused up front */
	CHECK(!test_write_artifact(path, events, 10, 4, pack_trailer, NULL), "write");
	buf = test_read_file(path, &len);
	CHECK(buf && len > hlen && !memcmp(buf, hdr, hlen), "the artifact starts with its header");
	if (!buf)
		return;
	buf[hlen - 4] = ARTIFACT_FORMAT + 1;
	CHECK(!test_write_bytes(path, buf, len), "write format 2");
	free(buf);
	read_all(path, &rb);
	CHECK(rb.ret == -EPROTONOSUPPORT && rb.records == 0 && strstr(rb.reason, "format 2"),
	      "header of format 2: ret %d, %" PRIu64 " records (%s)", rb.ret, rb.records,
	      rb.reason);

	/* no header (as written before it), a Meta of format 2: refused there */
	msgpack_sbuffer_init(&sb);
	pack_events(&sb, 10);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 2);
	pack_key(&pk, ARTIFACT_TYPE_KEY);
	pack_str(&pk, "Meta");
	pack_key(&pk, artifact_keys[AK_FORMAT].name);
	msgpack_pack_uint32(&pk, ARTIFACT_FORMAT + 1);
	CHECK(!test_write_chunked(path, sb.data, sb.size, 1 << 20), "write");
	read_all(path, &rb);
	CHECK(rb.ret == -EPROTONOSUPPORT && rb.events == 10 && strstr(rb.reason, "newer"),
	      "Meta of format 2: ret %d (%s)", rb.ret, rb.reason);

	/* and only records of types it does not know: not an artifact */
	msgpack_sbuffer_clear(&sb);
	msgpack_pack_map(&pk, 1);
	pack_key(&pk, ARTIFACT_TYPE_KEY);
	pack_str(&pk, "Unknown");
	CHECK(!test_write_chunked(path, sb.data, sb.size, 1 << 20), "write");
	read_all(path, &rb);
	CHECK(rb.ret == -ENOMSG && strstr(rb.reason, "none of its records"),
	      "unknown records only: ret %d (%s)", rb.ret, rb.reason);
	msgpack_sbuffer_destroy(&sb);

	/* the header alone: a run killed before its first window */
	CHECK(!test_write_bytes(path, hdr, hlen), "write the header");
	read_all(path, &rb);
	CHECK(rb.ret == -EBADMSG && strstr(rb.reason, "trailer is missing") &&
	      rb.offset == hlen, "the header alone: ret %d (%s)", rb.ret, rb.reason);
}

int main(void)
{
	make_events();
	test_round_trip(1, 1, false);
	test_round_trip(1, 50, true);
	test_round_trip(0, NR_EVENTS, true);		/* one window */
	test_round_trip(7, NR_EVENTS, true);		/* many */
	test_round_trip(NR_EVENTS, NR_EVENTS, false);	/* exactly full */
	test_round_trip(100, 0, true);			/* no events */
	test_round_trip(100, 0, false);			/* nothing at all */
	test_trailer_in_two_frames();
	test_trailer_fields();
	test_truncation();
	test_corruption();
	test_garbage();
	test_codspeed_style();
	test_unknown_records();
	test_large_records();
	test_event_layouts();
	test_event_cuts();
	test_format_versions();
	if (!getenv("KEEP")) test_tmpdir_remove();
	return test_done("test-artifact");
}
