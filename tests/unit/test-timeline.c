// SPDX-License-Identifier: GPL-2.0
/*
 * Time bins of memtrack's plots: growing at both ends, spreading amounts,
 * and doubling the width to stay under the cap.
 */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "util/timeline.h"

static double sum(const struct timeline *tl, const struct timeline_series *s)
{
	double total = 0;
	size_t i;

	for (i = 0; i < tl->nr; i++)
		total += s->v[i];
	return total;
}

static void test_grow_both_ways(void)
{
	struct timeline tl;
	struct timeline_series s, m;

	timeline__init(&tl, 10, 100);
	CHECK(timeline__add_series(&tl, &s, TIMELINE_SUM) == 0);
	CHECK(timeline__spread(&tl, &s, 55, 55, 3) == 0);
	CHECK(tl.nr == 1 && tl.first == 5);
	/* later, then earlier than anything seen */
	CHECK(timeline__spread(&tl, &s, 95, 95, 4) == 0);
	CHECK(timeline__spread(&tl, &s, 12, 12, 5) == 0);
	CHECK(tl.first == 1 && tl.nr == 9);
	CHECK_NUM(s.v[timeline__bin(&tl, 55)], 3);
	CHECK_NUM(s.v[timeline__bin(&tl, 95)], 4);
	CHECK_NUM(s.v[0], 5);
	CHECK_NUM(s.v[3], 0);
	CHECK(timeline__bin_start(&tl, 0) == 10);

	/* a series added late gets the bins there are, empty */
	CHECK(timeline__add_series(&tl, &m, TIMELINE_MAX) == 0);
	CHECK(isnan(m.v[0]) && isnan(m.v[8]));
	CHECK(timeline__sample(&tl, &m, 40, 7) == 0);
	CHECK(timeline__sample(&tl, &m, 41, 2) == 0);
	CHECK_NUM(m.v[timeline__bin(&tl, 40)], 7);
	timeline__exit(&tl);
}

static void test_spread(void)
{
	struct timeline tl;
	struct timeline_series s;

	timeline__init(&tl, 100, 100);
	CHECK(timeline__add_series(&tl, &s, TIMELINE_SUM) == 0);
	/* 400 over [50, 450): 50 + 100 + 100 + 100 + 50 ns */
	CHECK(timeline__spread(&tl, &s, 50, 450, 400) == 0);
	CHECK(tl.nr == 5);
	CHECK_NUM(s.v[0], 50);
	CHECK_NUM(s.v[1], 100);
	CHECK_NUM(s.v[4], 50);
	/* an interval ending on a bin edge does not touch the next bin */
	CHECK(timeline__spread(&tl, &s, 500, 600, 10) == 0);
	CHECK(tl.nr == 6);
	CHECK_NUM(s.v[5], 10);
	CHECK_NUM(sum(&tl, &s), 410);
	timeline__exit(&tl);
}

static void test_coarsen(void)
{
	struct timeline tl;
	struct timeline_series s, mx, last;
	int i;

	timeline__init(&tl, 10, 8);
	CHECK(timeline__add_series(&tl, &s, TIMELINE_SUM) == 0);
	CHECK(timeline__add_series(&tl, &mx, TIMELINE_MAX) == 0);
	CHECK(timeline__add_series(&tl, &last, TIMELINE_LAST) == 0);
	/* bins 1..8 at width 10; 8 bins fit */
	for (i = 1; i <= 8; i++) {
		CHECK(timeline__spread(&tl, &s, i * 10, i * 10, i) == 0);
		CHECK(timeline__sample(&tl, &mx, i * 10, i % 3) == 0);
		CHECK(timeline__sample(&tl, &last, i * 10, i) == 0);
	}
	CHECK(tl.width == 10 && tl.nr == 8);
	/* bin 9 does not fit: width 20, bins 0..4 */
	CHECK(timeline__spread(&tl, &s, 90, 90, 9) == 0);
	CHECK(tl.width == 20);
	CHECK(tl.first == 0 && tl.nr == 5);
	CHECK_NUM(s.v[0], 1);		/* old bin 1 alone */
	CHECK_NUM(s.v[1], 2 + 3);
	CHECK_NUM(s.v[4], 8 + 9);
	CHECK_NUM(mx.v[1], 2);		/* max(2 % 3, 3 % 3) */
	CHECK_NUM(last.v[1], 3);
	CHECK_NUM(last.v[4], 8);
	CHECK_NUM(sum(&tl, &s), 45);

	/* a far-away time: many doublings at once, nothing lost */
	CHECK(timeline__spread(&tl, &s, 1000000, 1000000, 100) == 0);
	CHECK(tl.nr <= 8);
	CHECK(tl.width >= 1000000 / 8);
	CHECK_NUM(sum(&tl, &s), 145);
	timeline__exit(&tl);
}

static void test_huge_spread_is_bounded(void)
{
	struct timeline tl;
	struct timeline_series s;

	timeline__init(&tl, 100000000, 4096);	/* 100 ms */
	CHECK(timeline__add_series(&tl, &s, TIMELINE_SUM) == 0);
	/* an hour-long interval, and an absurd one */
	CHECK(timeline__spread(&tl, &s, 0, 3600ULL * 1000000000, 36000) == 0);
	CHECK(tl.nr <= 4096);
	CHECK_NUM(sum(&tl, &s), 36000);
	CHECK(timeline__spread(&tl, &s, 1, 1ULL << 62, 1) == 0);
	CHECK(tl.nr <= 4096);
	CHECK_NUM(sum(&tl, &s), 36001);
	timeline__exit(&tl);
}

int main(void)
{
	test_grow_both_ways();
	test_spread();
	test_coarsen();
	test_huge_spread_is_bounded();

	if (test_failures) {
		fprintf(stderr, "test-timeline: %d checks failed\n", test_failures);
		return 1;
	}
	printf("test-timeline: ok\n");
	return 0;
}
