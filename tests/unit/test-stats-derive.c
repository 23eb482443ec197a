// SPDX-License-Identifier: GPL-2.0
/*
 * The figures of memtrack stats, on small hand-made rows with known answers.
 * Rows go through the real line parser.  Times are written in ms (x 1e6 ns).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/stats/stats-derive.h"
#include "util/stats/stats-read.h"

/* equal to 1e-9 relative; NaN equals NaN */
#define MS	1000000ULL
#define MB	1e6

/*
 * adds one line and counts it at once (no row waits to be put in time
 * order); returns what stats_file__parse_line() returned
 */
static int add(struct stats_file *sf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add(struct stats_file *sf, const char *fmt, ...)
{
	static char line[1 << 16];
	char why[256];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ret = stats_file__parse_line(sf, line, strlen(line), why, sizeof(why));
	if (stats_file__finish(sf))
		ret = -ENOMEM;
	if (ret < 0 && ret != -EINVAL) {
		fprintf(stderr, "parse_line failed with %d on: %s\n", ret, line);
		test_failures++;
	}
	return ret;
}

static int add_ring(struct stats_file *sf, const char *ring,
		    unsigned long long t0, unsigned long long prod0,
		    unsigned long long cons0, unsigned long long t1,
		    unsigned long long prod1, unsigned long long cons1)
{
	return add(sf, "{\"k\":\"ring\",\"ring\":\"%s\",\"t0\":%llu,\"prod0\":%llu,"
		   "\"cons0\":%llu,\"t1\":%llu,\"prod1\":%llu,\"cons1\":%llu}",
		   ring, t0, prod0, cons0, t1, prod1, cons1);
}

static struct stats_ring_summary ring_summary(struct stats_file *sf,
					      const char *name)
{
	struct stats_ring_summary s = { 0 };
	struct stats_ring *r = stats_file__find_ring(sf, name);

	CHECK(r != NULL);
	if (r)
		stats_ring__summarize(sf, r, &s);
	return s;
}

static double series_sum(const struct timeline_series *s, size_t nr)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < nr; i++)
		sum += s->v[i];
	return sum;
}

static void test_ring_rates(void)
{
	struct stats_file *sf = stats_file__new("rates.jsonl");
	struct stats_ring_summary s;

	CHECK(add(sf, "{\"k\":\"ring_open\",\"t\":%llu,\"ring\":\"r\",\"size\":100000}",
		  1000 * MS) == 0);
	/* 2000 B in 2 ms (1 MB/s); drains 1000 B in 2 ms; peak fill 1500 */
	CHECK(add(sf, "{\"k\":\"ring\",\"ring\":\"r\",\"t0\":%llu,\"prod0\":0,\"cons0\":0,"
		  "\"t1\":%llu,\"prod1\":2000,\"cons1\":1000,\"peak\":1500}",
		  1000 * MS, 1002 * MS) == 0);
	/* 19000 B more by t1 100 ms later (0.19 MB/s); drains 20000 B in 2 ms */
	CHECK(add_ring(sf, "r", 1100 * MS, 20000, 1000, 1102 * MS, 21000, 21000) == 0);
	/* the span: 1 s from ring_open */
	CHECK(add(sf, "{\"k\":\"backlog\",\"t\":%llu,\"sent\":0,\"received\":0,\"rss\":0}",
		  2000 * MS) == 0);

	s = ring_summary(sf, "r");
	CHECK(s.rows == 2);
	CHECK(s.size == 100000);
	CHECK(s.written == 21000);
	CHECK_NUM(s.write_avg, 21000 / 0.102);
	CHECK_NUM(s.write_peak, 1e6);
	CHECK_NUM(s.drain_avg, 21000 / 0.004);
	CHECK_NUM(s.drain_peak, 10e6);		/* the second tick's 100 ms bin */
	CHECK_NUM(s.fill_max_pct, 19.0);	/* prod0 - cons0 of the second tick */
	CHECK_NUM(s.busy_pct, 0.4);		/* 4 ms of 1 s */
	CHECK(s.episodes == 0);
	CHECK_NUM(stats_file__span_ns(sf), 1000 * MS);
	stats_file__delete(sf);
}

/* no rows for 1 s: the 10 MB written meanwhile spread over the gap */
static void test_rates_across_idle_gap(void)
{
	struct stats_file *sf = stats_file__new("gap.jsonl");
	struct timeline *tl = &sf->timeline;
	struct stats_ring_summary s;
	struct stats_ring *r;
	size_t i, bin;

	CHECK(add_ring(sf, "r", 10000 * MS, 0, 0, 10001 * MS, 1000, 1000) == 0);
	CHECK(add_ring(sf, "r", 11000 * MS, 10001000, 1000, 11001 * MS, 10001000,
		       10001000) == 0);

	s = ring_summary(sf, "r");
	CHECK(s.written == 10001000);
	CHECK_NUM(s.write_avg, 10001000 / 1.001);
	CHECK_NUM(s.write_peak, 10 * MB);	/* 10 MB over the 1 s between t1s */
	CHECK_NUM(s.drain_avg, 10001000 / 0.002);
	CHECK_NUM(s.fill_max_pct, NAN);		/* no ring_open: size unknown */

	r = stats_file__find_ring(sf, "r");
	CHECK(tl->width == 100 * MS);
	CHECK_NUM(series_sum(&r->written, tl->nr), 10001000);
	bin = timeline__bin(tl, 10000 * MS);
	CHECK_NUM(r->written.v[bin], 1000 + 990000);	/* 99 ms of the gap */
	for (i = bin + 1; i < bin + 10; i++)
		CHECK_NUM(r->written.v[i], 1000000);	/* 10 MB/s per bin */
	CHECK_NUM(r->written.v[bin + 10], 10000);
	/* the pollers were idle in between */
	CHECK_NUM(r->busy.v[bin + 5], 0);
	stats_file__delete(sf);
}

/* drain while busy: bytes over busy time, per 100 ms bin */
static void test_drain_bins(void)
{
	struct stats_file *sf = stats_file__new("drain.jsonl");
	struct stats_ring_summary s;

	/* one bin: 1000 B in 1 ms and 9000 B in 3 ms: 2.5 MB/s */
	CHECK(add_ring(sf, "r", 10 * MS, 1000, 0, 11 * MS, 1000, 1000) == 0);
	CHECK(add_ring(sf, "r", 50 * MS, 10000, 1000, 53 * MS, 10000, 10000) == 0);
	/* the next bin: 2000 B in 1 ms: 2 MB/s */
	CHECK(add_ring(sf, "r", 150 * MS, 12000, 10000, 151 * MS, 12000, 12000) == 0);
	s = ring_summary(sf, "r");
	CHECK_NUM(s.drain_peak, 2.5 * MB);	/* not the 3 MB/s of one tick */
	CHECK_NUM(s.drain_avg, 12000 / 0.005);

	/* a 200 ms tick over bins 2..4 at 1 MB/s changes nothing */
	CHECK(add_ring(sf, "r", 250 * MS, 212000, 12000, 450 * MS, 212000, 212000) == 0);
	s = ring_summary(sf, "r");
	CHECK_NUM(s.drain_peak, 2.5 * MB);

	/* a 200 ms tick at 10 MB/s sets the peak through its middle bin */
	CHECK(add_ring(sf, "r", 550 * MS, 2212000, 212000, 750 * MS, 2212000,
		       2212000) == 0);
	s = ring_summary(sf, "r");
	CHECK_NUM(s.drain_peak, 10 * MB);
	CHECK_NUM(s.drain_avg, 2212000 / 0.405);
	stats_file__delete(sf);
}

static void test_fill(void)
{
	struct stats_file *sf = stats_file__new("fill.jsonl");
	struct stats_ring_summary s;
	struct stats_ring *r;
	size_t bin;

	CHECK(add(sf, "{\"k\":\"ring_open\",\"t\":0,\"ring\":\"r\",\"size\":1000}") == 0);
	/* sampled fills 100 and 0, but 750 in between */
	CHECK(add(sf, "{\"k\":\"ring\",\"ring\":\"r\",\"t0\":%llu,\"prod0\":100,\"cons0\":0,"
		  "\"t1\":%llu,\"prod1\":850,\"cons1\":850,\"peak\":750}", 10 * MS, 12 * MS) == 0);
	s = ring_summary(sf, "r");
	CHECK_NUM(s.fill_max_pct, 75.0);

	/* the bins keep the peak and the share drained in one tick */
	r = stats_file__find_ring(sf, "r");
	bin = timeline__bin(&sf->timeline, 12 * MS);
	CHECK_NUM(r->fill_peak.v[bin], 750);
	CHECK_NUM(r->fill_last.v[bin], 0);
	CHECK_NUM(r->consumed.v[bin], 850);

	/* without peak: the larger of the fills at t0 and t1 */
	sf->rings[0]->fill_max = 0;
	CHECK(add_ring(sf, "r", 20 * MS, 900, 850, 21 * MS, 1100, 900) == 0);
	s = ring_summary(sf, "r");
	CHECK_NUM(s.fill_max_pct, 20.0);
	stats_file__delete(sf);
}

static void test_busy(void)
{
	struct stats_file *sf = stats_file__new("busy.jsonl");
	struct stats_ring_summary s;
	struct stats_ring *r;

	/* two pollers; span 0..1 s */
	CHECK(add_ring(sf, "a", 0, 0, 0, 100 * MS, 10, 10) == 0);
	CHECK(add_ring(sf, "b", 500 * MS, 0, 0, 550 * MS, 10, 10) == 0);
	CHECK(add_ring(sf, "b", 950 * MS, 10, 10, 1000 * MS, 20, 20) == 0);
	s = ring_summary(sf, "a");
	CHECK_NUM(s.busy_pct, 10.0);
	s = ring_summary(sf, "b");
	CHECK_NUM(s.busy_pct, 10.0);

	/* per bin: a tick of 50 ms over two bins splits its busy time */
	CHECK(add_ring(sf, "a", 175 * MS, 10, 10, 225 * MS, 20, 20) == 0);
	r = stats_file__find_ring(sf, "a");
	CHECK_NUM(r->busy.v[timeline__bin(&sf->timeline, 150 * MS)], 25 * MS);
	CHECK_NUM(r->busy.v[timeline__bin(&sf->timeline, 250 * MS)], 25 * MS);
	stats_file__delete(sf);
}

static void test_episodes(void)
{
	struct stats_file *sf = stats_file__new("episodes.jsonl");
	struct stats_pipeline_summary p;
	struct stats_ring_summary s;
	struct stats_pid *pid1 = NULL;
	size_t i;

	CHECK(add_ring(sf, "events", 0, 0, 0, MS, 10, 10) == 0);
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%llu,"
		  "\"pids\":[[1,%llu],[2,%llu]]}", 1000 * MS, 900 * MS, 950 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%llu,"
		  "\"pids\":[[1,%llu]]}", 2000 * MS, 1980 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"events\",\"t\":%llu,"
		  "\"pids\":[[3,%llu],[1,%llu]]}", 3000 * MS, 2700 * MS, 2990 * MS) == 0);

	s = ring_summary(sf, "stacks");
	CHECK(s.episodes == 2);
	CHECK_NUM(s.paused_ms_sum, 170);
	CHECK_NUM(s.paused_ms_max, 100);
	CHECK(s.rows == 0);
	CHECK(s.written == 0);
	CHECK_NUM(s.write_avg, NAN);
	s = ring_summary(sf, "events");
	CHECK(s.episodes == 1);
	CHECK_NUM(s.paused_ms_sum, 310);
	CHECK_NUM(s.paused_ms_max, 300);

	stats_file__summarize(sf, &p);
	CHECK(p.episodes == 3);
	CHECK_NUM(p.paused_ms_sum, 480);
	CHECK_NUM(p.paused_ms_max, 300);

	/* episodes run from the first stop to the release */
	CHECK(sf->episode_spans.nr == 3);
	CHECK(sf->episode_spans.v[0].start == 900 * MS);
	CHECK(sf->episode_spans.v[0].end == 1000 * MS);
	CHECK(sf->episode_spans.v[2].start == 2700 * MS);
	CHECK(sf->episode_spans.v[2].end == 3000 * MS);

	/* one swimlane per pid */
	CHECK(sf->nr_pids == 3);
	for (i = 0; i < sf->nr_pids; i++)
		if (sf->pids[i].pid == 1)
			pid1 = &sf->pids[i];
	CHECK(pid1 != NULL);
	if (pid1) {
		CHECK(pid1->pauses == 3);
		CHECK(pid1->paused_ns == 130 * MS);
		CHECK(pid1->first_stop == 900 * MS);
		CHECK(pid1->spans.nr == 3);
		CHECK(pid1->spans.v[1].start == 1980 * MS);
		CHECK(pid1->spans.v[1].end == 2000 * MS);
	}
	stats_file__delete(sf);
}

static void test_episode_edge_cases(void)
{
	struct stats_file *sf = stats_file__new("edge.jsonl");
	struct stats_pipeline_summary p;

	/* no pids: an episode of no length; a stop after the release: 0 ms */
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%llu,\"pids\":[]}",
		  100 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%llu,"
		  "\"pids\":[[7,%llu]]}", 200 * MS, 300 * MS) == 0);
	stats_file__summarize(sf, &p);
	CHECK(p.episodes == 2);
	CHECK_NUM(p.paused_ms_sum, 0);
	CHECK(sf->episode_spans.nr == 2 || sf->episode_spans.nr == 1);

	/* many pids: the pid table grows */
	{
		char line[65536];
		size_t len;
		int i;

		len = snprintf(line, sizeof(line),
			       "{\"k\":\"pressure\",\"ring\":\"stacks\",\"t\":%llu,\"pids\":[",
			       1000 * MS);
		for (i = 0; i < 1000; i++)
			len += snprintf(line + len, sizeof(line) - len, "%s[%d,%llu]",
					i ? "," : "", 10000 + i, 1000 * MS - i * 1000ULL);
		snprintf(line + len, sizeof(line) - len, "]}");
		CHECK(add(sf, "%s", line) == 0);
	}
	CHECK(sf->nr_pids == 1001);
	stats_file__summarize(sf, &p);
	CHECK(p.episodes == 3);
	CHECK_NUM(p.paused_ms_max, 999 * 1000 / 1e6);
	stats_file__delete(sf);
}

static void test_pipeline(void)
{
	struct stats_file *sf = stats_file__new("pipeline.jsonl");
	struct stats_pipeline_summary p;

	CHECK(add(sf, "{\"k\":\"resolve\",\"t0\":0,\"t1\":%llu,\"n\":5}", 10 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"resolve\",\"t0\":%llu,\"t1\":%llu,\"n\":5}",
		  50 * MS, 60 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"encode\",\"t\":%llu,\"events\":10,\"wait_ns\":%llu,"
		  "\"encode_ns\":%llu,\"write_ns\":%llu,\"msgpack_bytes\":3000,"
		  "\"zstd_bytes\":1000}", 100 * MS, 50 * MS, 20 * MS, 10 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"encode\",\"t\":%llu,\"events\":10,\"wait_ns\":0,"
		  "\"encode_ns\":%llu,\"write_ns\":%llu,\"msgpack_bytes\":1000,"
		  "\"zstd_bytes\":1000}", 200 * MS, 5 * MS, 5 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"backlog\",\"t\":%llu,\"sent\":100,\"received\":40,"
		  "\"rss\":1000}", 10 * MS) == 0);
	CHECK(add(sf, "{\"k\":\"backlog\",\"t\":%llu,\"sent\":150,\"received\":150,"
		  "\"rss\":3000}", 20 * MS) == 0);

	stats_file__summarize(sf, &p);
	CHECK_NUM(p.span_s, 0.2);
	CHECK_NUM(p.resolver_busy_pct, 10.0);	/* 20 ms of 200 */
	CHECK_NUM(p.encoder_busy_pct, 20.0);	/* (30 + 10) ms of 200 */
	CHECK(p.encoder_in == 4000);
	CHECK(p.encoder_out == 2000);
	CHECK_NUM(p.encoder_ratio, 2.0);
	CHECK(p.has_backlog);
	CHECK(p.in_flight_max == 60);
	CHECK(p.rss_peak == 3000);

	/* encoder work sits at the end of its window */
	CHECK_NUM(sf->encode_busy.v[timeline__bin(&sf->timeline, 90 * MS)], 30 * MS);
	stats_file__delete(sf);
}

static void test_nothing_known(void)
{
	struct stats_file *sf = stats_file__new("none.jsonl");
	struct stats_pipeline_summary p;

	stats_file__summarize(sf, &p);
	CHECK_NUM(p.span_s, 0);
	CHECK_NUM(p.resolver_busy_pct, NAN);
	CHECK_NUM(p.encoder_busy_pct, NAN);
	CHECK_NUM(p.encoder_ratio, NAN);
	CHECK(!p.has_backlog);
	CHECK(p.episodes == 0);
	CHECK(sf->lines == 0);

	/* one ring row of no length: no rates, no span */
	CHECK(add_ring(sf, "r", 5 * MS, 0, 0, 5 * MS, 0, 0) == 0);
	{
		struct stats_ring_summary s = ring_summary(sf, "r");

		CHECK(s.written == 0);
		CHECK_NUM(s.write_avg, NAN);
		CHECK_NUM(s.write_peak, NAN);
		CHECK_NUM(s.drain_avg, NAN);
		CHECK_NUM(s.drain_peak, NAN);
		CHECK_NUM(s.busy_pct, NAN);
	}
	stats_file__delete(sf);
}

static void test_unknown_is_skipped(void)
{
	struct stats_file *sf = stats_file__new("unknown.jsonl");

	CHECK(add(sf, "{\"k\":\"meta\",\"tool\":\"memtrack\",\"nested\":{\"a\":[1,2]}}") == 1);
	CHECK(add(sf, "{\"cpu\":3,\"k\":\"ring\",\"ring\":\"r\",\"t0\":0,\"prod0\":0,"
		  "\"cons0\":0,\"t1\":1,\"prod1\":5,\"cons1\":5,\"extra\":{\"x\":null}}") == 0);
	CHECK(add(sf, "   ") == 1);
	CHECK(add(sf, "{\"k\":\"backlog\",\"t\":1,\"sent\":1,\"received\":1}") == 0);
	CHECK(sf->unknown == 1);
	CHECK(sf->malformed == 0);
	CHECK(sf->lines == 3);
	CHECK(sf->rows[STATS_KIND_RING] == 1);
	stats_file__delete(sf);
}

static void test_malformed_lines(void)
{
	static const char *const bad[] = {
		"not json",
		"{\"k\":\"ring\"} trailing",
		"[1,2]",
		"{\"t\":1}",
		"{\"k\":5}",
		"{\"k\":\"ring\",\"ring\":\"r\",\"t0\":0,\"prod0\":0,\"cons0\":0,\"prod1\":0,\"cons1\":0}",
		"{\"k\":\"ring\",\"ring\":\"r\",\"t0\":9,\"prod0\":0,\"cons0\":0,\"t1\":8,\"prod1\":0,\"cons1\":0}",
		"{\"k\":\"ring\",\"ring\":\"r\",\"t0\":0,\"prod0\":9,\"cons0\":0,\"t1\":1,\"prod1\":8,\"cons1\":0}",
		"{\"k\":\"ring\",\"ring\":\"r\",\"t0\":0,\"prod0\":0,\"cons0\":1,\"t1\":1,\"prod1\":0,\"cons1\":1}",
		"{\"k\":\"ring\",\"ring\":7,\"t0\":0,\"prod0\":0,\"cons0\":0,\"t1\":1,\"prod1\":0,\"cons1\":0}",
		"{\"k\":\"backlog\",\"t\":-1,\"sent\":0,\"received\":0}",
		"{\"k\":\"backlog\",\"t\":\"1\",\"sent\":0,\"received\":0}",
		"{\"k\":\"backlog\",\"t\":1e400,\"sent\":0,\"received\":0}",
		"{\"k\":\"pressure\",\"ring\":\"s\",\"t\":5,\"pids\":[[1]]}",
		"{\"k\":\"pressure\",\"ring\":\"s\",\"t\":5,\"pids\":{}}",
		"{\"k\":\"ring_open\",\"ring\":\"s\"}",
		"{\"k\":\"resolve\",\"t0\":5,\"t1\":4}",
		"{\"k\":\"encode\",\"t\":5}",
	};
	struct stats_file *sf = stats_file__new("bad.jsonl");
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *line = strdup(bad[i]);

		why[0] = '\0';
		if (stats_file__parse_line(sf, line, strlen(line), why, sizeof(why)) != -EINVAL) {
			fprintf(stderr, "%s: accepted: %s\n", __func__, bad[i]);
			test_failures++;
		} else if (!why[0]) {
			fprintf(stderr, "%s: no reason given for: %s\n", __func__, bad[i]);
			test_failures++;
		}
		free(line);
	}
	CHECK(sf->malformed == sizeof(bad) / sizeof(bad[0]));
	CHECK(sf->rows[STATS_KIND_RING] == 0);
	stats_file__delete(sf);
}

/* a long run at 1 row a second: bins stay under the cap, sums hold */
static void test_bounded_bins(void)
{
	struct stats_file *sf = stats_file__new("long.jsonl");
	struct timeline *tl = &sf->timeline;
	struct stats_ring *r;
	unsigned long long i, n = 20000;

	for (i = 1; i <= n; i++)
		CHECK(add_ring(sf, "r", i * 1000 * MS, i * 1000, (i - 1) * 1000,
			       i * 1000 * MS + MS, i * 1000 + 10, i * 1000) == 0);
	r = stats_file__find_ring(sf, "r");
	CHECK(tl->nr <= STATS_MAX_BINS);
	CHECK(tl->width == 100 * MS * 64);	/* 20000 s / 4096 bins: 6.4 s */
	CHECK_NUM(series_sum(&r->written, tl->nr), (double)(n * 1000 + 10 - 1000));
	CHECK_NUM(series_sum(&r->busy, tl->nr), (double)(n * MS));
	/* the 100 ms drain bins do not coarsen: 1000 B per 1 ms tick */
	CHECK_NUM(ring_summary(sf, "r").drain_peak, 1 * MB);
	stats_file__delete(sf);
}

/*
 * A file of ring names only took memory without end (196 KB of bins per
 * ring: 4.9 MB of lines ran out of memory) and a linear lookup per row.
 */
static void test_many_ring_names(void)
{
	struct stats_file *sf = stats_file__new("names.jsonl");
	struct stats_ring_summary s;
	char name[32];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "r%d", i);
		CHECK(add_ring(sf, name, i * 100 * MS, 0, 0, i * 100 * MS + MS, 100, 100) ==
		      (i < STATS_MAX_RINGS ? 0 : 1), "ring %d", i);
	}
	CHECK(sf->nr_rings == STATS_MAX_RINGS, "%zu rings", sf->nr_rings);
	CHECK(sf->skipped_rows == 100 - STATS_MAX_RINGS, "%lu skipped", sf->skipped_rows);
	CHECK(sf->rows[STATS_KIND_RING] == STATS_MAX_RINGS);
	/* the rings kept are found by name and still take rows */
	CHECK(add_ring(sf, "r63", 64 * 100 * MS, 100, 100, 64 * 100 * MS + MS, 300, 300) == 0);
	s = ring_summary(sf, "r63");
	CHECK(s.rows == 2 && s.written == 300, "r63: %lu rows, %lu bytes", s.rows, s.written);
	CHECK(stats_file__find_ring(sf, "r64") == NULL);
	/* a pressure row of a skipped ring still counts its pauses */
	CHECK(add(sf, "{\"k\":\"pressure\",\"ring\":\"r99\",\"t\":%llu,\"pids\":[[7,%llu]]}",
		  10 * MS, 5 * MS) == 0);
	CHECK(sf->episodes == 1 && sf->nr_pids == 1);
	stats_file__delete(sf);
}

/* tick k of a ring whose write rate changes every tick */
static void tick_line(char *line, size_t len, int k)
{
	unsigned long long p0 = 0, p1;
	int i;

	for (i = 0; i < k; i++)
		p0 += (i % 7 + 1) * 1000;
	p1 = p0 + (k % 7 + 1) * 1000;
	snprintf(line, len, "{\"k\":\"ring\",\"ring\":\"r\",\"t0\":%llu,\"prod0\":%llu,"
		 "\"cons0\":%llu,\"t1\":%llu,\"prod1\":%llu,\"cons1\":%llu}",
		 (unsigned long long)k * 10 * MS, p0, p0, (unsigned long long)k * 10 * MS + MS,
		 p1, p1 - (k % 3) * 100);
}

/* the ticks 0..n-1 in the order order[] gives, all counted at the end */
static struct stats_file *ticks_in_order(const int *order, int n)
{
	struct stats_file *sf = stats_file__new("order.jsonl");
	char line[512], why[256];
	int i;

	for (i = 0; i < n; i++) {
		tick_line(line, sizeof(line), order[i]);
		CHECK(stats_file__parse_line(sf, line, strlen(line), why, sizeof(why)) == 0,
		      "%s", why);
	}
	CHECK(!stats_file__finish(sf));
	return sf;
}

/*
 * Rows of a ring out of time order (files merged, sorted, reversed) made a
 * write peak of 25.5 MB/s 0.0: within STATS_REORDER_ROWS rows they are put
 * back in order, beyond it the peaks are not given.
 */
static void test_rows_out_of_order(void)
{
	int n = STATS_REORDER_ROWS + 200, i, *order = malloc(n * sizeof(*order));
	struct stats_file *a, *b;
	struct stats_ring_summary sa, sb;
	unsigned int seed = 1;

	for (i = 0; i < n; i++)
		order[i] = i;
	a = ticks_in_order(order, n);
	/* a shuffle within blocks of 500 rows */
	for (i = 0; i < n; i++) {
		int block = i / 500 * 500, span = n - block < 500 ? n - block : 500;
		int j = block + (int)((seed = seed * 1103515245 + 12345) >> 16) % span;
		int t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	b = ticks_in_order(order, n);
	sa = ring_summary(a, "r");
	sb = ring_summary(b, "r");
	CHECK(sa.write_peak > 0 && sa.drain_peak > 0);
	CHECK_NUM(sb.write_peak, sa.write_peak);
	CHECK_NUM(sb.drain_peak, sa.drain_peak);
	CHECK_NUM(sb.write_avg, sa.write_avg);
	CHECK(sb.late_rows == 0 && sb.written == sa.written);
	for (i = 0; i < (int)a->timeline.nr; i++)
		CHECK_NUM(stats_file__find_ring(b, "r")->written.v[i],
			  stats_file__find_ring(a, "r")->written.v[i]);
	stats_file__delete(b);
	/* reversed: the first row past the window is counted first, the 199 after it late */
	for (i = 0; i < n; i++)
		order[i] = n - 1 - i;
	b = ticks_in_order(order, n);
	sb = ring_summary(b, "r");
	CHECK(sb.late_rows == 199, "%lu late rows", sb.late_rows);
	CHECK(isnan(sb.write_peak) && isnan(sb.drain_peak), "no peak made up");
	CHECK(sb.written == sa.written && sb.rows == sa.rows);
	stats_file__delete(a);
	stats_file__delete(b);
	free(order);
}

int main(void)
{
	test_rows_out_of_order();
	test_many_ring_names();
	test_ring_rates();
	test_rates_across_idle_gap();
	test_drain_bins();
	test_fill();
	test_busy();
	test_episodes();
	test_episode_edge_cases();
	test_pipeline();
	test_nothing_known();
	test_unknown_is_skipped();
	test_malformed_lines();
	test_bounded_bins();

	if (test_failures) {
		fprintf(stderr, "test-stats-derive: %d checks failed\n", test_failures);
		return 1;
	}
	printf("test-stats-derive: ok\n");
	return 0;
}
