/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_TIMELINE_H
#define MEMTRACK_TIMELINE_H

/*
 * A time axis cut into bins of equal width, shared by any number of series:
 * the one time-binning mechanism of memtrack, behind the plots of `stats`
 * (pipeline rows) and of `report --timeline` (live heap per process).
 *
 * Bins are aligned on multiples of their width in absolute time, so that a
 * timeline can grow at either end as rows arrive out of order.  When covering
 * a new row would need more than max_bins bins, the width doubles and
 * neighbouring bins merge: memory stays bounded whatever the span of the file.
 */

#include <stddef.h>
#include <stdint.h>

enum timeline_merge {
	TIMELINE_SUM,		/* amounts spread over bins: bytes, busy ns */
	TIMELINE_MAX,		/* the largest sample in the bin, NaN if none */
	TIMELINE_LAST,		/* the latest sample in the bin, NaN if none */
};

struct timeline_series {
	double *v;
	enum timeline_merge merge;
	struct timeline_series *next;	/* in the timeline's list */
};

struct timeline {
	uint64_t width;			/* ns per bin */
	uint64_t first;			/* absolute index (t / width) of bin 0 */
	size_t nr;			/* bins in use */
	size_t alloc;			/* bins allocated in every series */
	size_t max_bins;
	struct timeline_series *series;
};

void timeline__init(struct timeline *tl, uint64_t width,
			  size_t max_bins);
void timeline__exit(struct timeline *tl);

/* the series becomes part of the timeline; returns 0 or -ENOMEM */
int timeline__add_series(struct timeline *tl,
			       struct timeline_series *s, enum timeline_merge merge);

/* makes sure a bin covers t; returns 0 or -ENOMEM */
int timeline__ensure(struct timeline *tl, uint64_t t);

/* index of the bin holding t, which must be covered */
size_t timeline__bin(const struct timeline *tl, uint64_t t);

/* absolute start time of bin i */
uint64_t timeline__bin_start(const struct timeline *tl, size_t i);

/*
 * Adds amount to a SUM series, spread over [start, end) in proportion to
 * the time each bin covers; all of it goes to start's bin when end <= start.
 */
int timeline__spread(struct timeline *tl, struct timeline_series *s,
			   uint64_t start, uint64_t end, double amount);

/* records one sample of a MAX or LAST series at time t */
int timeline__sample(struct timeline *tl, struct timeline_series *s,
			   uint64_t t, double value);

#endif
