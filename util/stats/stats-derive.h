/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_DERIVE_H
#define MEMTRACK_STATS_DERIVE_H

/*
 * What memtrack stats derives from the pipeline stats rows of one file
 * (Documentation/technical/design.md, 11).  Rows are added one at a time; the
 * memory held is per ring, per paused pid and per time bin, never per row.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/stats/stats-format.h"

struct stats_ring_row;

#define STATS_REORDER_ROWS	1024	/* rows of a ring put back in time order */
#include "util/timeline.h"
#include "util/u64-map.h"

#define STATS_BIN_NS		100000000ULL	/* 100 ms */
#define STATS_MAX_BINS		4096
#define STATS_MAX_RINGS		64	/* memtrack writes 2 or 3 */

struct stats_span {
	uint64_t start, end;
};

/* intervals, neighbours closer than a gap merged into one */
struct stats_spans {
	struct stats_span *v;
	size_t nr, alloc;
};

struct stats_pid {
	int pid;
	unsigned long pauses;
	uint64_t paused_ns;
	uint64_t first_stop;
	struct stats_spans spans;	/* stopped_at .. release */
};

/* the drained bytes and busy time of one 100 ms bin of one ring */
struct stats_drain_bin {
	uint64_t index;			/* t / STATS_BIN_NS */
	double bytes, busy_ns;
	bool used;
};

struct stats_ring {
	char *name;
	uint64_t size;			/* from ring_open; 0 when unknown */
	uint64_t watermark;		/* bytes, from ring_open; 0 when unknown */

	unsigned long rows;
	uint64_t first_t0, last_t1;
	uint64_t first_prod0, last_prod1;
	double write_peak;		/* bytes per ns between successive rows */
	uint64_t drained;		/* sum of cons1 - cons0 */
	uint64_t busy_ns;		/* sum of t1 - t0 */
	struct stats_drain_bin drain_bin;
	double drain_peak;		/* bytes per busy ns, best 100 ms bin */
	uint64_t fill_max;		/* bytes: prod - cons at t0, t1 and peak */

	unsigned long episodes;
	unsigned long pauses;
	uint64_t paused_ns_sum, paused_ns_max;

	/* rows not counted yet, a min-heap on t1: they are counted in time order */
	struct stats_ring_row *pending;
	size_t nr_pending, alloc_pending;
	unsigned long late_rows;	/* came after a later row had been counted */

	/* per time bin, for the plots */
	struct timeline_series written;	/* bytes produced (spread over gaps) */
	struct timeline_series drained_bytes;
	struct timeline_series busy;	/* poller busy ns */
	struct timeline_series fill_peak;	/* largest fill of a tick, bytes */
	struct timeline_series fill_last;	/* fill at t1 of the latest tick */
	struct timeline_series consumed;	/* largest cons1 - cons0 of a tick */
};

struct stats_file {
	char *path;

	unsigned long lines;		/* not counting blank ones */
	unsigned long rows[STATS_KIND_MAX];
	unsigned long unknown;		/* rows of kinds we do not know */
	unsigned long malformed;

	bool has_time;
	uint64_t first_t, last_t;	/* over every t, t0 and t1 */

	struct stats_ring **rings;
	size_t nr_rings;
	struct u64_map ring_index;	/* name hash -> index + 1 */
	bool ring_collisions;		/* two names of one hash: look further */
	unsigned long skipped_rows;	/* of rings past STATS_MAX_RINGS */

	uint64_t resolve_busy_ns;
	uint64_t encode_busy_ns;	/* encode_ns + write_ns */
	uint64_t encode_events;
	uint64_t encoder_in, encoder_out;	/* msgpack and zstd bytes */
	int64_t in_flight_max;		/* sent - received */
	uint64_t rss_max;

	unsigned long episodes;
	unsigned long pauses;
	uint64_t paused_ns_sum, paused_ns_max;
	struct stats_spans episode_spans;

	struct stats_pid *pids;
	size_t nr_pids, alloc_pids;
	int *pid_slots;			/* open addressing: index + 1, 0 empty */
	size_t nr_pid_slots;

	struct timeline timeline;
	struct timeline_series resolve_busy;
	struct timeline_series encode_busy;
	struct timeline_series encode_in;
	struct timeline_series encode_out;
	struct timeline_series in_flight;
	struct timeline_series rss;
};

/* The figures of one ring.  NaN means "not known" (printed as "-"). */
struct stats_ring_summary {
	const char *name;
	uint64_t size;
	unsigned long rows;
	uint64_t written;		/* bytes */
	double write_avg, write_peak;	/* bytes per second; peaks NaN with late rows */
	double drain_avg, drain_peak;	/* bytes per second of poller busy time */
	unsigned long late_rows;
	double fill_max_pct;
	double watermark_pct;		/* NaN when the file does not say */
	double busy_pct;
	unsigned long episodes;
	double paused_ms_sum, paused_ms_max;
};

struct stats_pipeline_summary {
	double span_s;
	double resolver_busy_pct;
	double encoder_busy_pct;
	uint64_t encoder_in, encoder_out;	/* bytes */
	double encoder_ratio;			/* in / out */
	int64_t in_flight_max;
	bool has_backlog;
	uint64_t rss_peak;
	unsigned long episodes;
	double paused_ms_sum, paused_ms_max;
};

struct stats_file *stats_file__new(const char *path);
void stats_file__delete(struct stats_file *sf);

/*
 * Adds one row as stats-read.c read it (keys absent from v->has are 0, a
 * missing ring is NULL).  For ring and resolve rows the caller has checked
 * that t0 <= t1, and for ring rows that positions do not go backwards and
 * cons <= prod at both ends.  0, 1 for a row skipped (its ring is past
 * STATS_MAX_RINGS; counted in skipped_rows), or -ENOMEM.
 */
int stats_file__add_row(struct stats_file *sf, enum stats_kind kind,
			const struct stats_values *v);
/* counts the rows still waiting to be put in order: after the last row; 0 or -ENOMEM */
int stats_file__finish(struct stats_file *sf);

struct stats_ring *stats_file__find_ring(const struct stats_file *sf,
					 const char *name);
uint64_t stats_file__span_ns(const struct stats_file *sf);

void stats_ring__summarize(const struct stats_file *sf,
			   const struct stats_ring *ring,
			   struct stats_ring_summary *sum);
void stats_file__summarize(const struct stats_file *sf,
			   struct stats_pipeline_summary *sum);

/* the pid's intervals, merged once they outnumber what a plot can show */
int stats_spans__add(struct stats_spans *spans, uint64_t start, uint64_t end,
		     uint64_t gap, size_t max);
/* sorts the intervals and merges those less than gap apart */
void stats_spans__merge(struct stats_spans *spans, uint64_t gap);

#endif
