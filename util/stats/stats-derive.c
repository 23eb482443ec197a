// SPDX-License-Identifier: GPL-2.0
/*
 * The figures memtrack stats derives from pipeline stats rows: per ring
 * (written, write and drain rates, fill, busy, pressure), per pipeline
 * stage, and the time bins behind the plots.  No I/O here.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/stats/stats-derive.h"
#include "util/u64-map.h"
#include "util/usage.h"
#include "util/util.h"

#define NS_PER_S	1e9
#define NS_PER_MS	1e6

/* the figures of one ring row */
struct stats_ring_row {
	const char *ring;
	uint64_t t0, prod0, cons0;
	uint64_t t1, prod1, cons1;
	uint64_t peak;
	bool has_peak;
};

struct stats_encode_row {
	uint64_t t, events;
	uint64_t wait_ns, encode_ns, write_ns;
	uint64_t msgpack_bytes, zstd_bytes;
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

struct stats_file *stats_file__new(const char *path)
{
	struct stats_file *sf = calloc(1, sizeof(*sf));
	struct timeline *tl;

	if (!sf)
		return NULL;
	sf->path = strdup(path);
	if (!sf->path) {
		free(sf);
		return NULL;
	}
	tl = &sf->timeline;
	timeline__init(tl, STATS_BIN_NS, STATS_MAX_BINS);
	/* no bins are allocated yet, so none of these can fail */
	timeline__add_series(tl, &sf->resolve_busy, TIMELINE_SUM);
	timeline__add_series(tl, &sf->encode_busy, TIMELINE_SUM);
	timeline__add_series(tl, &sf->encode_in, TIMELINE_SUM);
	timeline__add_series(tl, &sf->encode_out, TIMELINE_SUM);
	timeline__add_series(tl, &sf->in_flight, TIMELINE_MAX);
	timeline__add_series(tl, &sf->rss, TIMELINE_MAX);
	return sf;
}

void stats_file__delete(struct stats_file *sf)
{
	size_t i;

	if (!sf)
		return;
	timeline__exit(&sf->timeline);
	for (i = 0; i < sf->nr_rings; i++) {
		free(sf->rings[i]->pending);
		free(sf->rings[i]->name);
		free(sf->rings[i]);
	}
	free(sf->rings);
	u64_map__exit(&sf->ring_index);
	for (i = 0; i < sf->nr_pids; i++)
		free(sf->pids[i].spans.v);
	free(sf->pids);
	free(sf->pid_slots);
	free(sf->episode_spans.v);
	free(sf->path);
	free(sf);
}

static void note_time(struct stats_file *sf, uint64_t t)
{
	if (!sf->has_time) {
		sf->first_t = sf->last_t = t;
		sf->has_time = true;
		return;
	}
	sf->first_t = min_u64(sf->first_t, t);
	sf->last_t = max_u64(sf->last_t, t);
}

uint64_t stats_file__span_ns(const struct stats_file *sf)
{
	return sf->has_time ? sf->last_t - sf->first_t : 0;
}

/* FNV-1a: sf->ring_index maps it to the ring's index + 1 */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

struct stats_ring *stats_file__find_ring(const struct stats_file *sf,
					 const char *name)
{
	const uint64_t *i = u64_map__find(&sf->ring_index, name_hash(name));
	size_t k;

	if (i && !strcmp(sf->rings[*i - 1]->name, name))
		return sf->rings[*i - 1];
	/* two names of one hash (a file can be made so): the second is looked for */
	for (k = 0; sf->ring_collisions && k < sf->nr_rings; k++)
		if (!strcmp(sf->rings[k]->name, name))
			return sf->rings[k];
	return NULL;
}

static int index_ring(struct stats_file *sf, const char *name, size_t i)
{
	uint64_t *slot;

	slot = u64_map__get(&sf->ring_index, name_hash(name));
	if (!slot)
		return -ENOMEM;
	/* taken: by another name, as this one was not found; the first keeps it */
	if (*slot)
		sf->ring_collisions = true;
	else
		*slot = i + 1;
	return 0;
}

static int ring__add_series(struct stats_ring *r, struct timeline *tl)
{
	if (timeline__add_series(tl, &r->written, TIMELINE_SUM) ||
	    timeline__add_series(tl, &r->drained_bytes, TIMELINE_SUM) ||
	    timeline__add_series(tl, &r->busy, TIMELINE_SUM) ||
	    timeline__add_series(tl, &r->fill_peak, TIMELINE_MAX) ||
	    timeline__add_series(tl, &r->fill_last, TIMELINE_LAST) ||
	    timeline__add_series(tl, &r->consumed, TIMELINE_MAX))
		return -ENOMEM;
	return 0;
}

/*
 * The ring of that name, made when first seen; NULL when out of memory or,
 * with *skipped set, past STATS_MAX_RINGS: each ring takes its series of
 * bins, so a file of ring names only must not take memory without end.
 */
/* a row of a ring past STATS_MAX_RINGS: counted, and read no further */
static int skip_row(struct stats_file *sf)
{
	sf->skipped_rows++;
	return 1;
}

static struct stats_ring *get_ring(struct stats_file *sf, const char *name, bool *skipped)
{
	struct stats_ring *r = stats_file__find_ring(sf, name), **rings;

	*skipped = false;
	if (r)
		return r;
	if (sf->nr_rings == STATS_MAX_RINGS) {
		*skipped = true;
		return NULL;
	}
	if (index_ring(sf, name, sf->nr_rings))
		return NULL;
	rings = realloc(sf->rings, (sf->nr_rings + 1) * sizeof(*rings));
	if (!rings)
		return NULL;
	sf->rings = rings;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->name = strdup(name);
	if (!r->name) {
		free(r);
		return NULL;
	}
	r->write_peak = NAN;
	r->drain_peak = NAN;
	/* freed with the file from here on, even if a series fails */
	sf->rings[sf->nr_rings++] = r;
	if (ring__add_series(r, &sf->timeline))
		return NULL;
	return r;
}

static int add_ring_open(struct stats_file *sf, const char *ring, uint64_t t, bool has_t,
			 uint64_t size, uint64_t watermark)
{
	bool skipped;
	struct stats_ring *r = get_ring(sf, ring, &skipped);

	if (skipped)
		return skip_row(sf);
	if (!r)
		return -ENOMEM;
	r->size = size;
	r->watermark = watermark;
	if (has_t)
		note_time(sf, t);
	sf->rows[STATS_KIND_RING_OPEN]++;
	return 0;
}

static void drain_bin__flush(struct stats_ring *r)
{
	struct stats_drain_bin *bin = &r->drain_bin;

	if (bin->used && bin->busy_ns > 0)
		r->drain_peak = fmax(r->drain_peak, bin->bytes / bin->busy_ns);
	bin->used = false;
	bin->bytes = bin->busy_ns = 0;
}

static void drain_bin__add(struct stats_ring *r, uint64_t index, double bytes,
			   double busy_ns)
{
	struct stats_drain_bin *bin = &r->drain_bin;

	if (!bin->used || bin->index != index) {
		drain_bin__flush(r);
		bin->index = index;
		bin->used = true;
	}
	bin->bytes += bytes;
	bin->busy_ns += busy_ns;
}

/*
 * Drain rate while busy, per 100 ms bin: the tick's bytes and busy time go
 * to the bins it covers in proportion.  Rows of one ring come in time order
 * (one poller writes them), so only the latest bin is still open.  Bins a
 * tick covers whole have exactly the tick's rate.
 */
static void ring__account_drain(struct stats_ring *r, uint64_t t0, uint64_t t1,
				uint64_t bytes)
{
	uint64_t first = t0 / STATS_BIN_NS, last;
	double rate, piece;

	if (t1 <= t0) {
		drain_bin__add(r, first, bytes, 0);
		return;
	}
	last = (t1 - 1) / STATS_BIN_NS;
	rate = (double)bytes / (double)(t1 - t0);
	if (first == last) {
		drain_bin__add(r, first, bytes, t1 - t0);
		return;
	}
	piece = (double)((first + 1) * STATS_BIN_NS - t0);
	drain_bin__add(r, first, rate * piece, piece);
	if (last > first + 1) {
		drain_bin__flush(r);
		r->drain_peak = fmax(r->drain_peak, rate);
	}
	piece = (double)(t1 - last * STATS_BIN_NS);
	drain_bin__add(r, last, rate * piece, piece);
}

/* Write rate: Δprod1/Δt1 between successive rows, the first from its t0. */
static int ring__account_write(struct stats_file *sf, struct stats_ring *r,
			       const struct stats_ring_row *row)
{
	uint64_t start = r->rows ? r->last_t1 : row->t0;
	uint64_t from = r->rows ? r->last_prod1 : row->prod0;
	uint64_t bytes;

	if (row->prod1 < from)		/* a row out of order: nothing new */
		return 0;
	bytes = row->prod1 - from;
	if (row->t1 > start)
		r->write_peak = fmax(r->write_peak,
				     (double)bytes / (double)(row->t1 - start));
	else
		start = row->t1;
	return timeline__spread(&sf->timeline, &r->written, start,
				      row->t1, bytes);
}

static int ring__add_bins(struct stats_file *sf, struct stats_ring *r,
			  const struct stats_ring_row *row, uint64_t tick_fill)
{
	struct timeline *tl = &sf->timeline;
	uint64_t drained = row->cons1 - row->cons0;

	if (timeline__spread(tl, &r->drained_bytes, row->t0, row->t1, drained) ||
	    timeline__spread(tl, &r->busy, row->t0, row->t1, row->t1 - row->t0) ||
	    timeline__sample(tl, &r->fill_peak, row->t1, tick_fill) ||
	    timeline__sample(tl, &r->fill_last, row->t1, row->prod1 - row->cons1) ||
	    timeline__sample(tl, &r->consumed, row->t1, drained))
		return -ENOMEM;
	return 0;
}

/*
 * The caller checks that t0 <= t1, prod0 <= prod1, cons0 <= cons1 and
 * cons <= prod at both ends.
 */
/* a row in time order: what successive rows give (write rate, drain bins) is right */
static int count_ring_row(struct stats_file *sf, struct stats_ring *r,
			  const struct stats_ring_row *row)
{
	uint64_t fill;

	if (r->rows && row->t1 < r->last_t1)
		r->late_rows++;
	if (ring__account_write(sf, r, row))
		return -ENOMEM;
	ring__account_drain(r, row->t0, row->t1, row->cons1 - row->cons0);

	fill = max_u64(row->prod0 - row->cons0, row->prod1 - row->cons1);
	if (row->has_peak)
		fill = max_u64(fill, row->peak);
	r->fill_max = max_u64(r->fill_max, fill);
	r->drained += row->cons1 - row->cons0;
	r->busy_ns += row->t1 - row->t0;

	if (!r->rows) {
		r->first_t0 = row->t0;
		r->first_prod0 = row->prod0;
		r->last_t1 = row->t1;
		r->last_prod1 = row->prod1;
	} else {
		r->first_t0 = min_u64(r->first_t0, row->t0);
		r->first_prod0 = min_u64(r->first_prod0, row->prod0);
		r->last_t1 = max_u64(r->last_t1, row->t1);
		r->last_prod1 = max_u64(r->last_prod1, row->prod1);
	}
	r->rows++;
	return ring__add_bins(sf, r, row, fill);
}

/* ---- rows put back in time order: a min-heap on t1, per ring ---- */

static bool row_before(const struct stats_ring_row *a, const struct stats_ring_row *b)
{
	return a->t1 != b->t1 ? a->t1 < b->t1 : a->t0 < b->t0;
}

static void swap_rows(struct stats_ring_row *a, struct stats_ring_row *b)
{
	struct stats_ring_row t = *a;

	*a = *b;
	*b = t;
}

static int pending__push(struct stats_ring *r, const struct stats_ring_row *row)
{
	size_t i;

	if (grow_array((void **)&r->pending, &r->alloc_pending, r->nr_pending + 1,
		       sizeof(*r->pending)))
		return -ENOMEM;
	i = r->nr_pending++;
	r->pending[i] = *row;
	r->pending[i].ring = NULL;
	for (; i && row_before(&r->pending[i], &r->pending[(i - 1) / 2]); i = (i - 1) / 2)
		swap_rows(&r->pending[i], &r->pending[(i - 1) / 2]);
	return 0;
}

static struct stats_ring_row pending__pop(struct stats_ring *r)
{
	struct stats_ring_row first = r->pending[0];
	size_t i = 0, n = --r->nr_pending;

	r->pending[0] = r->pending[n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && row_before(&r->pending[l], &r->pending[m]))
			m = l;
		if (l + 1 < n && row_before(&r->pending[l + 1], &r->pending[m]))
			m = l + 1;
		if (m == i)
			break;
		swap_rows(&r->pending[i], &r->pending[m]);
		i = m;
	}
	return first;
}

/*
 * One poller writes a ring's rows in time order, but files get
 * concatenated, merged and sorted: a reversed file had a write peak of 0.
 * Rows wait here until STATS_REORDER_ROWS later ones have come, and are
 * counted in time order; a row later than that is counted late.
 */
static int add_ring(struct stats_file *sf, const struct stats_ring_row *row)
{
	struct stats_ring_row first;
	bool skipped;
	struct stats_ring *r = get_ring(sf, row->ring, &skipped);

	if (skipped)
		return skip_row(sf);
	if (!r || pending__push(r, row))
		return -ENOMEM;
	note_time(sf, row->t0);
	note_time(sf, row->t1);
	sf->rows[STATS_KIND_RING]++;
	if (r->nr_pending <= STATS_REORDER_ROWS)
		return 0;
	first = pending__pop(r);
	return count_ring_row(sf, r, &first);
}

int stats_file__finish(struct stats_file *sf)
{
	size_t i;

	for (i = 0; i < sf->nr_rings; i++) {
		struct stats_ring *r = sf->rings[i];

		while (r->nr_pending) {
			struct stats_ring_row row = pending__pop(r);

			if (count_ring_row(sf, r, &row))
				return -ENOMEM;
		}
	}
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct stats_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void stats_spans__merge(struct stats_spans *spans, uint64_t gap)
{
	size_t i, n = 0;

	if (!spans->nr)
		return;
	qsort(spans->v, spans->nr, sizeof(*spans->v), span_cmp);
	for (i = 1; i < spans->nr; i++) {
		struct stats_span *last = &spans->v[n];

		if (spans->v[i].start <= last->end + gap)
			last->end = max_u64(last->end, spans->v[i].end);
		else
			spans->v[++n] = spans->v[i];
	}
	spans->nr = n + 1;
}

int stats_spans__add(struct stats_spans *spans, uint64_t start, uint64_t end,
		     uint64_t gap, size_t max)
{
	if (spans->nr) {
		struct stats_span *last = &spans->v[spans->nr - 1];

		if (start <= last->end + gap && end + gap >= last->start) {
			last->start = min_u64(last->start, start);
			last->end = max_u64(last->end, end);
			return 0;
		}
	}
	if (spans->nr == spans->alloc) {
		size_t alloc = spans->alloc ? spans->alloc * 2 : 16;
		struct stats_span *v = realloc(spans->v, alloc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		spans->v = v;
		spans->alloc = alloc;
	}
	spans->v[spans->nr].start = start;
	spans->v[spans->nr].end = end;
	spans->nr++;

	if (max && spans->nr > max) {
		stats_spans__merge(spans, gap);
		while (spans->nr > max / 2 + 1) {
			gap = gap ? gap * 2 : 1;
			stats_spans__merge(spans, gap);
		}
	}
	return 0;
}

static unsigned int pid_hash(int pid)
{
	return (unsigned int)pid * 2654435761u;
}

static int pid_table__grow(struct stats_file *sf)
{
	size_t nr = sf->nr_pid_slots ? sf->nr_pid_slots * 2 : 64, i;
	int *slots = calloc(nr, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < sf->nr_pids; i++) {
		size_t h = pid_hash(sf->pids[i].pid) & (nr - 1);

		while (slots[h])
			h = (h + 1) & (nr - 1);
		slots[h] = i + 1;
	}
	free(sf->pid_slots);
	sf->pid_slots = slots;
	sf->nr_pid_slots = nr;
	return 0;
}

static struct stats_pid *get_pid(struct stats_file *sf, int pid)
{
	struct stats_pid *p;
	size_t h;

	if ((sf->nr_pids + 1) * 2 > sf->nr_pid_slots && pid_table__grow(sf))
		return NULL;

	h = pid_hash(pid) & (sf->nr_pid_slots - 1);
	while (sf->pid_slots[h]) {
		p = &sf->pids[sf->pid_slots[h] - 1];
		if (p->pid == pid)
			return p;
		h = (h + 1) & (sf->nr_pid_slots - 1);
	}

	if (sf->nr_pids == sf->alloc_pids) {
		size_t alloc = sf->alloc_pids ? sf->alloc_pids * 2 : 16;

		p = realloc(sf->pids, alloc * sizeof(*p));
		if (!p)
			return NULL;
		sf->pids = p;
		sf->alloc_pids = alloc;
	}
	p = &sf->pids[sf->nr_pids];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	sf->pid_slots[h] = ++sf->nr_pids;
	return p;
}

static int file__add_pause(struct stats_file *sf, struct stats_ring *r,
			   const struct stats_pause *pause, uint64_t t)
{
	uint64_t stop = min_u64(pause->stopped_at, t), paused = t - stop;
	struct stats_pid *p = get_pid(sf, pause->pid);

	if (!p)
		return -ENOMEM;
	if (!p->pauses || stop < p->first_stop)
		p->first_stop = stop;
	p->pauses++;
	p->paused_ns += paused;

	sf->pauses++;
	sf->paused_ns_sum += paused;
	sf->paused_ns_max = max_u64(sf->paused_ns_max, paused);
	if (r) {
		r->pauses++;
		r->paused_ns_sum += paused;
		r->paused_ns_max = max_u64(r->paused_ns_max, paused);
	}
	return stats_spans__add(&p->spans, stop, t, sf->timeline.width,
				2 * STATS_MAX_BINS);
}

/*
 * One pressure row is one episode: from the first stop among its pids to
 * the release at t.  Each pid was paused for t - stopped_at.
 */
static int add_pressure(struct stats_file *sf, const char *ring, uint64_t t,
			const struct stats_pause *pauses, size_t nr)
{
	struct stats_ring *r = NULL;
	uint64_t start = t;
	size_t i;

	if (ring) {
		bool skipped;

		/* past STATS_MAX_RINGS the pauses still count, with no ring */
		r = get_ring(sf, ring, &skipped);
		if (!r && !skipped)
			return -ENOMEM;
		if (r)
			r->episodes++;
	}
	note_time(sf, t);
	sf->episodes++;
	sf->rows[STATS_KIND_PRESSURE]++;

	for (i = 0; i < nr; i++) {
		if (file__add_pause(sf, r, &pauses[i], t))
			return -ENOMEM;
		start = min_u64(start, pauses[i].stopped_at);
	}
	return stats_spans__add(&sf->episode_spans, start, t, sf->timeline.width,
				2 * STATS_MAX_BINS);
}

static int add_backlog(struct stats_file *sf, uint64_t t, uint64_t sent,
		       uint64_t received, uint64_t rss)
{
	int64_t in_flight = (int64_t)(sent - received);

	note_time(sf, t);
	if (!sf->rows[STATS_KIND_BACKLOG] || in_flight > sf->in_flight_max)
		sf->in_flight_max = in_flight;
	sf->rss_max = max_u64(sf->rss_max, rss);
	sf->rows[STATS_KIND_BACKLOG]++;

	if (timeline__sample(&sf->timeline, &sf->in_flight, t, in_flight) ||
	    timeline__sample(&sf->timeline, &sf->rss, t, rss))
		return -ENOMEM;
	return 0;
}

static int add_resolve(struct stats_file *sf, uint64_t t0, uint64_t t1)
{
	note_time(sf, t0);
	note_time(sf, t1);
	sf->resolve_busy_ns += t1 - t0;
	sf->rows[STATS_KIND_RESOLVE]++;
	return timeline__spread(&sf->timeline, &sf->resolve_busy, t0, t1,
				      t1 - t0);
}

/*
 * An encoder window ends at t.  Its work (encoding and writing) is placed
 * at the end of the window, after the wait for input; its bytes are spread
 * over the whole window.
 */
static int add_encode(struct stats_file *sf, const struct stats_encode_row *row)
{
	struct timeline *tl = &sf->timeline;
	uint64_t busy = row->encode_ns + row->write_ns;
	uint64_t window = busy + row->wait_ns;
	uint64_t busy_start = row->t > busy ? row->t - busy : 0;
	uint64_t window_start = row->t > window ? row->t - window : 0;

	note_time(sf, row->t);
	sf->encode_busy_ns += busy;
	sf->encode_events += row->events;
	sf->encoder_in += row->msgpack_bytes;
	sf->encoder_out += row->zstd_bytes;
	sf->rows[STATS_KIND_ENCODE]++;

	if (timeline__spread(tl, &sf->encode_busy, busy_start, row->t, busy) ||
	    timeline__spread(tl, &sf->encode_in, window_start, row->t,
				   row->msgpack_bytes) ||
	    timeline__spread(tl, &sf->encode_out, window_start, row->t,
				   row->zstd_bytes))
		return -ENOMEM;
	return 0;
}

int stats_file__add_row(struct stats_file *sf, enum stats_kind kind,
			const struct stats_values *v)
{
	const uint64_t *u = v->u;

	switch (kind) {
	case STATS_KIND_RING_OPEN:
		return add_ring_open(sf, v->ring, u[STATS_KEY_T], v->has & STATS_HAS(T),
				     u[STATS_KEY_SIZE], u[STATS_KEY_WATERMARK]);
	case STATS_KIND_RING: {
		struct stats_ring_row r = {
			.ring = v->ring,
			.t0 = u[STATS_KEY_T0], .prod0 = u[STATS_KEY_PROD0],
			.cons0 = u[STATS_KEY_CONS0], .t1 = u[STATS_KEY_T1],
			.prod1 = u[STATS_KEY_PROD1], .cons1 = u[STATS_KEY_CONS1],
			.peak = u[STATS_KEY_PEAK], .has_peak = v->has & STATS_HAS(PEAK),
		};

		return add_ring(sf, &r);
	}
	case STATS_KIND_PRESSURE:
		return add_pressure(sf, v->ring, u[STATS_KEY_T], v->pauses, v->nr_pauses);
	case STATS_KIND_BACKLOG:
		return add_backlog(sf, u[STATS_KEY_T], u[STATS_KEY_SENT],
				   u[STATS_KEY_RECEIVED], u[STATS_KEY_RSS]);
	case STATS_KIND_RESOLVE:
		return add_resolve(sf, u[STATS_KEY_T0], u[STATS_KEY_T1]);
	case STATS_KIND_ENCODE: {
		struct stats_encode_row e = {
			.t = u[STATS_KEY_T], .events = u[STATS_KEY_EVENTS],
			.wait_ns = u[STATS_KEY_WAIT_NS], .encode_ns = u[STATS_KEY_ENCODE_NS],
			.write_ns = u[STATS_KEY_WRITE_NS],
			.msgpack_bytes = u[STATS_KEY_MSGPACK_BYTES],
			.zstd_bytes = u[STATS_KEY_ZSTD_BYTES],
		};

		return add_encode(sf, &e);
	}
	case STATS_KIND_MAX:
		break;
	}
	return 0;
}

static double percent_of_span(uint64_t ns, uint64_t span)
{
	return span ? 100.0 * (double)ns / (double)span : NAN;
}

static double drain_peak(const struct stats_ring *r)
{
	const struct stats_drain_bin *bin = &r->drain_bin;
	double peak = r->drain_peak;

	if (bin->used && bin->busy_ns > 0)
		peak = fmax(peak, bin->bytes / bin->busy_ns);
	return peak * NS_PER_S;
}

void stats_ring__summarize(const struct stats_file *sf,
			   const struct stats_ring *r,
			   struct stats_ring_summary *sum)
{
	uint64_t active = r->last_t1 - r->first_t0;

	memset(sum, 0, sizeof(*sum));
	sum->name = r->name;
	sum->size = r->size;
	sum->rows = r->rows;
	sum->written = r->rows ? r->last_prod1 - r->first_prod0 : 0;
	sum->write_avg = r->rows && active ?
			 (double)sum->written * NS_PER_S / (double)active : NAN;
	/* rows out of order beyond the window: a peak between them would be made up */
	sum->write_peak = r->late_rows ? NAN : r->write_peak * NS_PER_S;
	sum->drain_avg = r->busy_ns ?
			 (double)r->drained * NS_PER_S / (double)r->busy_ns : NAN;
	sum->drain_peak = r->late_rows ? NAN : drain_peak(r);
	sum->fill_max_pct = r->size && r->rows ?
			    100.0 * (double)r->fill_max / (double)r->size : NAN;
	sum->watermark_pct = r->size && r->watermark ?
			     100.0 * (double)r->watermark / (double)r->size : NAN;
	sum->busy_pct = percent_of_span(r->busy_ns, stats_file__span_ns(sf));
	sum->episodes = r->episodes;
	sum->paused_ms_sum = r->paused_ns_sum / NS_PER_MS;
	sum->paused_ms_max = r->paused_ns_max / NS_PER_MS;
	sum->late_rows = r->late_rows;
}

void stats_file__summarize(const struct stats_file *sf,
			   struct stats_pipeline_summary *sum)
{
	uint64_t span = stats_file__span_ns(sf);

	memset(sum, 0, sizeof(*sum));
	sum->span_s = span / NS_PER_S;
	sum->resolver_busy_pct = sf->rows[STATS_KIND_RESOLVE] ?
				 percent_of_span(sf->resolve_busy_ns, span) : NAN;
	sum->encoder_busy_pct = sf->rows[STATS_KIND_ENCODE] ?
				percent_of_span(sf->encode_busy_ns, span) : NAN;
	sum->encoder_in = sf->encoder_in;
	sum->encoder_out = sf->encoder_out;
	sum->encoder_ratio = sf->encoder_out ?
			     (double)sf->encoder_in / (double)sf->encoder_out : NAN;
	sum->has_backlog = sf->rows[STATS_KIND_BACKLOG] > 0;
	sum->in_flight_max = sf->in_flight_max;
	sum->rss_peak = sf->rss_max;
	sum->episodes = sf->episodes;
	sum->paused_ms_sum = sf->paused_ns_sum / NS_PER_MS;
	sum->paused_ms_max = sf->paused_ns_max / NS_PER_MS;
}
