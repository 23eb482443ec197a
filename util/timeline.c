// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded time bins for the series that memtrack plots.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/timeline.h"

void timeline__init(struct timeline *tl, uint64_t width,
			  size_t max_bins)
{
	memset(tl, 0, sizeof(*tl));
	tl->width = width ? width : 1;
	tl->max_bins = max_bins ? max_bins : 1;
}

void timeline__exit(struct timeline *tl)
{
	struct timeline_series *s;

	for (s = tl->series; s; s = s->next) {
		free(s->v);
		s->v = NULL;
	}
	tl->series = NULL;
	tl->nr = tl->alloc = 0;
}

static double empty_value(const struct timeline_series *s)
{
	return s->merge == TIMELINE_SUM ? 0.0 : NAN;
}

static void clear_bins(struct timeline_series *s, size_t from, size_t to)
{
	double empty = empty_value(s);
	size_t i;

	for (i = from; i < to; i++)
		s->v[i] = empty;
}

static double merge_values(enum timeline_merge merge, double older, double newer)
{
	switch (merge) {
	case TIMELINE_SUM:
		return older + newer;
	case TIMELINE_MAX:
		return fmax(older, newer);	/* fmax ignores a NaN */
	case TIMELINE_LAST:
		return isnan(newer) ? older : newer;
	}
	return newer;
}

int timeline__add_series(struct timeline *tl,
			       struct timeline_series *s, enum timeline_merge merge)
{
	s->merge = merge;
	s->v = NULL;
	if (tl->alloc) {
		s->v = malloc(tl->alloc * sizeof(*s->v));
		if (!s->v)
			return -ENOMEM;
		clear_bins(s, 0, tl->alloc);
	}
	s->next = tl->series;
	tl->series = s;
	return 0;
}

static int grow_series(struct timeline *tl, size_t want)
{
	struct timeline_series *s;
	size_t alloc = tl->alloc ? tl->alloc : 64;

	while (alloc < want)
		alloc *= 2;
	if (alloc > tl->max_bins)
		alloc = tl->max_bins;

	for (s = tl->series; s; s = s->next) {
		double *v = realloc(s->v, alloc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		clear_bins(s, tl->alloc, alloc);
	}
	tl->alloc = alloc;
	return 0;
}

/* make bins [lo, hi] (absolute indexes) the range in use */
static int cover_range(struct timeline *tl, uint64_t lo, uint64_t hi)
{
	size_t nr = hi - lo + 1, shift = tl->nr ? tl->first - lo : 0;
	struct timeline_series *s;

	if (nr > tl->alloc && grow_series(tl, nr))
		return -ENOMEM;
	for (s = tl->series; s; s = s->next) {
		if (shift) {
			memmove(s->v + shift, s->v, tl->nr * sizeof(*s->v));
			clear_bins(s, 0, shift);
		}
		clear_bins(s, shift + tl->nr, nr);
	}
	tl->first = lo;
	tl->nr = nr;
	return 0;
}

/* double the width: absolute bin k becomes bin k / 2 */
static void coarsen(struct timeline *tl)
{
	uint64_t first = tl->first / 2;
	size_t nr = tl->nr ? (tl->first + tl->nr - 1) / 2 - first + 1 : 0;
	struct timeline_series *s;
	size_t i;

	for (s = tl->series; s; s = s->next) {
		size_t last = (size_t)-1;

		for (i = 0; i < tl->nr; i++) {
			size_t j = (tl->first + i) / 2 - first;

			if (j != last)
				s->v[j] = s->v[i];
			else
				s->v[j] = merge_values(s->merge, s->v[j], s->v[i]);
			last = j;
		}
		clear_bins(s, nr, tl->nr);
	}
	tl->width *= 2;
	tl->first = first;
	tl->nr = nr;
}

int timeline__ensure(struct timeline *tl, uint64_t t)
{
	for (;;) {
		uint64_t k = t / tl->width, lo = k, hi = k;

		if (tl->nr) {
			if (k >= tl->first && k < tl->first + tl->nr)
				return 0;
			if (tl->first < lo)
				lo = tl->first;
			if (tl->first + tl->nr - 1 > hi)
				hi = tl->first + tl->nr - 1;
		}
		if (hi - lo < tl->max_bins)
			return cover_range(tl, lo, hi);
		coarsen(tl);
	}
}

size_t timeline__bin(const struct timeline *tl, uint64_t t)
{
	return t / tl->width - tl->first;
}

uint64_t timeline__bin_start(const struct timeline *tl, size_t i)
{
	return (tl->first + i) * tl->width;
}

int timeline__spread(struct timeline *tl, struct timeline_series *s,
			   uint64_t start, uint64_t end, double amount)
{
	uint64_t k, last;

	if (timeline__ensure(tl, start))
		return -ENOMEM;
	if (end <= start) {
		s->v[timeline__bin(tl, start)] += amount;
		return 0;
	}
	if (timeline__ensure(tl, end - 1))
		return -ENOMEM;

	last = (end - 1) / tl->width;
	for (k = start / tl->width; k <= last; k++) {
		uint64_t lo = k * tl->width, hi = lo + tl->width;

		if (lo < start)
			lo = start;
		if (hi > end)
			hi = end;
		s->v[k - tl->first] += amount * (double)(hi - lo) / (double)(end - start);
	}
	return 0;
}

int timeline__sample(struct timeline *tl, struct timeline_series *s,
			   uint64_t t, double value)
{
	size_t i;

	if (timeline__ensure(tl, t))
		return -ENOMEM;
	i = timeline__bin(tl, t);
	s->v[i] = merge_values(s->merge, s->v[i], value);
	return 0;
}
