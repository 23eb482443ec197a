// SPDX-License-Identifier: GPL-2.0
/*
 * The stats format round trip: rows written with pstats__*() are read back
 * by the stats reader, key for key, against the documented list of keys
 * (memtrack-stats(1), FILE FORMAT; kept here, apart from
 * util/stats/stats-format.h).  A key the writer drops, or one
 * the reader or the derivations drop, fails it.
 */
#include <cJSON.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "util/track/pipeline-stats.h"
#include "util/stats/stats-derive.h"
#include "util/stats/stats-read.h"
#include "util/util.h"

#define UNKNOWN		UINT64_MAX	/* a clock or RSS value: non-zero */
#define MAX_KEYS	8

/* memtrack-stats(1), FILE FORMAT, and the values written below */
static const struct design_row {
	const char *kind;
	const char *keys[MAX_KEYS];
	uint64_t values[MAX_KEYS];
} design[] = {
	{ "ring_open", { "t", "ring", "size", "watermark" }, { UNKNOWN, 0, 1 << 20, 786432 } },
	{ "ring", { "ring", "t0", "prod0", "cons0", "t1", "prod1", "cons1", "peak" },
	  { 0, 1000, 5000, 4000, 2000, 7000, 6000, 3000 } },
	{ "pressure", { "ring", "t", "pids", "frozen" }, { 0, 3000, 0, 1 } },
	{ "backlog", { "t", "sent", "received", "rss" }, { UNKNOWN, 17, 15, UNKNOWN } },
	{ "resolve", { "t0", "t1", "n" }, { 100, 200, 9 } },
	{ "encode", { "t", "events", "wait_ns", "encode_ns", "write_ns", "msgpack_bytes",
		      "zstd_bytes" }, { 5000, 10, 11, 12, 13, 14, 15 } },
};

static const struct stopped_pid pids[] = { { 42, 2500 }, { 43, 2600 } };

static char path[] = "/tmp/test-stats-format-XXXXXX";

static void write_rows(void)
{
	struct encoder_window_stats w = {
		.t = 5000, .events = 10, .wait_ns = 11, .encode_ns = 12, .write_ns = 13,
		.msgpack_bytes = 14, .zstd_bytes = 15,
	};
	struct ring_tick tick = {
		.ring = "events", .t0 = 1000, .prod0 = 5000, .cons0 = 4000,
		.t1 = 2000, .prod1 = 7000, .cons1 = 6000, .peak = 3000,
	};
	int fd = mkstemp(path);
	struct pstats *ps = pstats__create(fd, path);

	CHECK(ps != NULL, "pstats__create");
	if (!ps)
		return;
	pstats__ring_open(ps, "events", 1 << 20, 786432);
	pstats__ring_tick(ps, &tick);
	pstats__pressure(ps, "stacks", 3000, pids, 2, true);
	pstats__backlog(ps, 17, 15);
	pstats__resolve(ps, 100, 200, 9);
	pstats__encode(ps, &w);
	CHECK(!pstats__close(ps), "pstats__close");
}

static const struct design_row *design_of(const char *kind)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(design); i++)
		if (!strcmp(design[i].kind, kind))
			return &design[i];
	return NULL;
}

/* what the writer wrote: "k", then the documented keys in order, nothing else */
static const struct design_row *check_written(const char *line)
{
	cJSON *obj = cJSON_Parse(line), *item;
	const struct design_row *d = NULL;
	size_t i = 0;

	CHECK(obj && obj->child && !strcmp(obj->child->string, "k") &&
	      cJSON_IsString(obj->child), "'k' first: %s", line);
	if (!obj || !obj->child || !cJSON_IsString(obj->child))
		goto out;
	d = design_of(obj->child->valuestring);
	CHECK(d != NULL, "a documented kind: %s", line);
	if (!d)
		goto out;
	for (item = obj->child->next; item; item = item->next, i++)
		CHECK(i < MAX_KEYS && d->keys[i] && !strcmp(item->string, d->keys[i]),
		      "%s: key %zu is '%s', the format says '%s'", d->kind, i, item->string,
		      i < MAX_KEYS && d->keys[i] ? d->keys[i] : "(none)");
	CHECK(i == MAX_KEYS || !d->keys[i], "%s: the writer dropped '%s'", d->kind,
	      i < MAX_KEYS ? d->keys[i] : "");
out:
	cJSON_Delete(obj);
	return d;
}

static int key_of(const char *name)
{
	int k;

	for (k = 0; k < STATS_KEY_MAX; k++)
		if (!strcmp(stats_key_names[k], name))
			return k;
	return -1;
}

/* what the reader read: every documented key, with the value written */
static void check_read(char *line, const struct design_row *d)
{
	const char *unknown = NULL;
	struct stats_line l;
	char why[256];
	size_t i;

	CHECK(stats_line__parse(&l, line, strlen(line), why, sizeof(why), &unknown) == 0,
	      "%s: %s", d->kind, why);
	CHECK(!strcmp(stats_kind_names[l.kind], d->kind), "%s: read as %s", d->kind,
	      stats_kind_names[l.kind]);
	for (i = 0; i < MAX_KEYS && d->keys[i]; i++) {
		int k = key_of(d->keys[i]);

		CHECK(k >= 0 && (l.v.has & (1u << k)), "%s: the reader dropped '%s'", d->kind,
		      d->keys[i]);
		if (k < 0 || stats_key_types[k] != STATS_U64)
			continue;
		if (d->values[i] == UNKNOWN)
			CHECK(l.v.u[k] > 0, "%s.%s is 0", d->kind, d->keys[i]);
		else
			CHECK_U64(l.v.u[k], d->values[i], d->keys[i]);
	}
	if (l.kind == STATS_KIND_PRESSURE) {
		CHECK_STR(l.v.ring, "stacks", "pressure.ring");
		CHECK(l.v.nr_pauses == 2 && l.v.pauses[1].pid == 43 &&
		      l.v.pauses[1].stopped_at == 2600, "pressure.pids");
	}
	if (l.kind == STATS_KIND_RING || l.kind == STATS_KIND_RING_OPEN)
		CHECK_STR(l.v.ring, "events", "ring");
	stats_line__exit(&l);
}

/* every kind once, each line as documented */
static void test_round_trip(void)
{
	char line[4096];
	size_t n = 0;
	FILE *f;

	write_rows();
	f = fopen(path, "r");
	CHECK(f != NULL, "the file written");
	while (f && fgets(line, sizeof(line), f)) {
		const struct design_row *d;

		line[strcspn(line, "\n")] = 0;
		d = check_written(line);
		if (d)
			check_read(line, d);
		n++;
	}
	if (f)
		fclose(f);
	CHECK(n == ARRAY_SIZE(design), "%zu rows, one per kind", n);
}

/* and what the derivations make of the keys that have no other use */
static void test_derived(void)
{
	struct stats_read_opts opts = { .max_warnings = 10 };
	struct stats_file *sf = stats_file__new(path);
	struct stats_ring_summary rs;
	struct stats_ring *ring;
	int i;

	CHECK(!stats_file__read(sf, &opts), "read");
	for (i = 0; i < STATS_KIND_MAX; i++)
		CHECK(sf->rows[i] == 1, "one %s row", stats_kind_names[i]);
	ring = stats_file__find_ring(sf, "events");
	CHECK(ring != NULL, "the events ring");
	if (ring) {
		stats_ring__summarize(sf, ring, &rs);
		CHECK_U64(rs.size, 1 << 20, "size");
		CHECK_NUM(rs.watermark_pct, 75.0);
		CHECK_NUM(rs.fill_max_pct, 100.0 * 3000 / (1 << 20));
	}
	CHECK(sf->nr_pids == 2 && sf->rss_max > 0 && sf->encode_events == 10,
	      "pids, rss, events");
	stats_file__delete(sf);
}

int main(void)
{
	test_round_trip();
	test_derived();
	unlink(path);
	return test_done("test-stats-format");
}
