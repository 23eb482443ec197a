// SPDX-License-Identifier: GPL-2.0
/*
 * The consumer of a BPF ring (util/track/ring.c) on a ring in memory whose
 * positions and record headers the test sets: records in order, discarded
 * ones skipped, a reserved one stops the drain where it stands, a record
 * across the end of the data area, a callback's error, the peak, and space
 * given back in strides while draining.
 */
#include <errno.h>

#include "check.h"
#include "fake-ring.h"

struct seen {
	unsigned int n;
	uint32_t len[64];
	uint64_t first_word[64];
	int fail_at;			/* the callback fails on this record (1-based) */
	struct fake_ring *f;
	uint64_t cons_seen_max_lag;	/* largest (record position - consumer_pos) seen */
	uint64_t pos;			/* the position of the record being read */
	unsigned int cons_moved;	/* records during which consumer_pos had moved on */
};

static int on_record(void *ctx, const void *data, uint32_t len)
{
	struct seen *s = ctx;
	uint64_t cons = __atomic_load_n(&s->f->consumer_pos, __ATOMIC_ACQUIRE);

	if (s->fail_at && (int)s->n + 1 == s->fail_at)
		return -EIO;
	if (s->n < 64) {
		s->len[s->n] = len;
		memcpy(&s->first_word[s->n], data, sizeof(uint64_t));
	}
	s->n++;
	if (s->pos - cons > s->cons_seen_max_lag)
		s->cons_seen_max_lag = s->pos - cons;
	if (cons > 0)
		s->cons_moved++;
	s->pos += fake_ring__span(len);
	return 0;
}

static uint64_t payload[8];

static uint64_t put(struct fake_ring *f, uint64_t word, uint32_t len, uint32_t flags)
{
	payload[0] = word;
	return fake_ring__put(f, payload, len, flags);
}

static void test_records_in_order(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f };
	uint64_t peak = 0;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	put(&f, 11, 48, 0);
	put(&f, 22, 20, 0);	/* 8 + 20 rounds up to 32 */
	put(&f, 33, 64, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 3, "records");
	CHECK_U64(s.n, 3, "callbacks");
	CHECK(s.first_word[0] == 11 && s.first_word[1] == 22 && s.first_word[2] == 33,
	      "in order: %lu %lu %lu", s.first_word[0], s.first_word[1], s.first_word[2]);
	CHECK(s.len[0] == 48 && s.len[1] == 20 && s.len[2] == 64, "lengths");
	CHECK_U64(ring__consumer(&r), 56 + 32 + 72, "consumer at the producer");
	CHECK_U64(ring__producer(&r), 56 + 32 + 72, "producer");
	CHECK_U64(peak, 56 + 32 + 72, "peak: all three were waiting");
	/* nothing more: no callback, the same position */
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 0, "an empty ring");
	CHECK_U64(s.n, 3, "no callback on an empty ring");
}

static void test_discarded_skipped(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f };
	uint64_t peak = 0;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	put(&f, 1, 16, 0);
	put(&f, 2, 16, BPF_RINGBUF_DISCARD_BIT);
	put(&f, 3, 16, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 2, "a discarded record is not a record");
	CHECK(s.first_word[0] == 1 && s.first_word[1] == 3, "the discarded one skipped");
	CHECK_U64(ring__consumer(&r), 3 * 24, "but consumed");
}

/* a reserved record stops the drain there, however much follows it */
static void test_busy_stops(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f };
	uint64_t peak = 0, busy;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	put(&f, 1, 16, 0);
	busy = put(&f, 2, 16, BPF_RINGBUF_BUSY_BIT);
	put(&f, 3, 16, 0);
	put(&f, 4, 16, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 1, "only the record before the reserved one");
	CHECK_U64(ring__consumer(&r), busy, "the consumer waits at the reserved record");
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 0, "still reserved");
	CHECK_U64(ring__consumer(&r), busy, "still waiting");
	fake_ring__commit(&f, busy);
	s.pos = busy;
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 3, "committed: it and the two after it");
	CHECK(s.first_word[1] == 2 && s.first_word[2] == 3 && s.first_word[3] == 4, "order");
	CHECK_U64(ring__consumer(&r), ring__producer(&r), "caught up");
}

/* a record that starts near the end of the data area is read whole */
static void test_wraps(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f };
	uint64_t peak = 0, start = 5 * FAKE_RING_SIZE - 24;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	fake_ring__seek(&f, start);
	s.pos = start;
	put(&f, 0xabcd, 64, 0);	/* header at size - 24, payload across the end */
	put(&f, 0xef, 16, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 2, "records across the end");
	CHECK_U64(s.first_word[0], 0xabcd, "the first");
	CHECK_U64(s.first_word[1], 0xef, "the one after it, at the start of the area");
	CHECK_U64(ring__consumer(&r), start + 72 + 24, "consumer");
	CHECK_U64(peak, 96, "peak");
}

/* an error of the callback stops the drain; that record stays unconsumed */
static void test_callback_error(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f, .fail_at = 2 };
	uint64_t peak = 0;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	put(&f, 1, 16, 0);
	put(&f, 2, 16, 0);
	put(&f, 3, 16, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, (uint64_t)-EIO, "the callback's error");
	CHECK_U64(ring__consumer(&r), 24, "stopped at the record that failed");
	s.fail_at = 0;
	s.pos = 24;
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 2, "read again by the next drain");
	CHECK_U64(s.first_word[1], 2, "from the record that failed");
}

/* space goes back to the producers in strides of size / 8, not only at the end */
static void test_strides(void)
{
	struct fake_ring f;
	struct ring r;
	struct seen s = { .f = &f };
	uint64_t peak = 0;
	unsigned int i;
	long n;

	fake_ring__init(&f, &r, "events", -1);
	for (i = 0; i < 48; i++)	/* 48 * 64 bytes: 3 KiB of a 4 KiB ring */
		put(&f, i, 56, 0);
	n = ring__drain(&r, on_record, &s, &peak);
	CHECK_U64(n, 48, "records");
	CHECK(s.cons_moved > 0, "consumer_pos moved during the drain");
	CHECK(s.cons_seen_max_lag <= FAKE_RING_SIZE / 8,
	      "the producers saw at most a stride unreleased: %lu", s.cons_seen_max_lag);
	CHECK_U64(peak, 48 * 64, "peak");
}

int main(void)
{
	test_records_in_order();
	test_discarded_skipped();
	test_busy_stops();
	test_wraps();
	test_callback_error();
	test_strides();
	return test_done("test-ring");
}
