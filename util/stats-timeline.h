/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_TIMELINE_H
#define MEMTRACK_STATS_TIMELINE_H

/*
 * A time axis cut into bins of equal width, shared by any number of series.
 *
 * Bins are aligned on multiples of their width in absolute time, so that a
 * timeline can grow at either end as rows arrive out of order.  When covering
 * a new row would need more than max_bins bins, the width doubles and
 * neighbouring bins merge: memory stays bounded whatever the span of the file.
 */

#include <stddef.h>
#include <stdint.h>

#define STATS_BIN_NS		100000000ULL	/* 100 ms */
#define STATS_MAX_BINS		4096

enum stats_merge {
	STATS_MERGE_SUM,	/* amounts spread over bins: bytes, busy ns */
	STATS_MERGE_MAX,	/* the largest sample in the bin, NaN if none */
	STATS_MERGE_LAST,	/* the latest sample in the bin, NaN if none */
};

struct stats_series {
	double *v;
	enum stats_merge merge;
	struct stats_series *next;	/* in the timeline's list */
};

struct stats_timeline {
	uint64_t width;			/* ns per bin */
	uint64_t first;			/* absolute index (t / width) of bin 0 */
	size_t nr;			/* bins in use */
	size_t alloc;			/* bins allocated in every series */
	size_t max_bins;
	struct stats_series *series;
};

void stats_timeline__init(struct stats_timeline *tl, uint64_t width,
			  size_t max_bins);
void stats_timeline__exit(struct stats_timeline *tl);

/* the series becomes part of the timeline; returns 0 or -ENOMEM */
int stats_timeline__add_series(struct stats_timeline *tl,
			       struct stats_series *s, enum stats_merge merge);

/* makes sure a bin covers t; returns 0 or -ENOMEM */
int stats_timeline__ensure(struct stats_timeline *tl, uint64_t t);

/* index of the bin holding t, which must be covered */
size_t stats_timeline__bin(const struct stats_timeline *tl, uint64_t t);

/* absolute start time of bin i */
uint64_t stats_timeline__bin_start(const struct stats_timeline *tl, size_t i);

/*
 * Adds amount to a SUM series, spread over [start, end) in proportion to
 * the time each bin covers; all of it goes to start's bin when end <= start.
 */
int stats_timeline__spread(struct stats_timeline *tl, struct stats_series *s,
			   uint64_t start, uint64_t end, double amount);

/* records one sample of a MAX or LAST series at time t */
int stats_timeline__sample(struct stats_timeline *tl, struct stats_series *s,
			   uint64_t t, double value);

#endif
