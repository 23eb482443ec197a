// SPDX-License-Identifier: GPL-2.0
/*
 * The live heap over time for report --timeline: a series per process on
 * the shared time bins of util/timeline.c (largest and latest value of
 * each bin), and the gnuplot script that draws them.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/gnuplot.h"
#include "util/quote.h"
#include "util/report/report-timeline.h"
#include "util/timeline.h"
#include "util/util.h"

#define FIRST_BIN_NS	1000ULL
#define PLOT_WIDTH	1200
#define PLOT_HEIGHT	600

struct series {
	int32_t key;
	uint64_t peak;
	struct timeline_series max, last;
};

struct report_timeline {
	struct timeline tl;
	struct series *series;		/* fixed: the timeline points into it */
	unsigned int nr_series;
	unsigned int last_hit;		/* where the last lookup found its series */
	bool failed;			/* out of memory once: stop adding series */
};

struct report_timeline *report_timeline__new(unsigned int bins)
{
	struct report_timeline *rt = calloc(1, sizeof(*rt));

	if (!rt)
		return NULL;
	timeline__init(&rt->tl, FIRST_BIN_NS, bins < 16 ? 16 : bins);
	rt->series = calloc(REPORT_TIMELINE_SERIES + 1, sizeof(*rt->series));
	if (!rt->series) {
		free(rt);
		return NULL;
	}
	return rt;
}

void report_timeline__delete(struct report_timeline *rt)
{
	if (!rt)
		return;
	timeline__exit(&rt->tl);
	free(rt->series);
	free(rt);
}

static struct series *find_series(struct report_timeline *rt, int32_t key)
{
	struct series *s;
	unsigned int i;

	if (rt->last_hit < rt->nr_series && rt->series[rt->last_hit].key == key)
		return &rt->series[rt->last_hit];
	for (i = 0; i < rt->nr_series; i++) {
		if (rt->series[i].key == key) {
			rt->last_hit = i;
			return &rt->series[i];
		}
	}
	/* the total always gets a series; processes while there is room */
	if (rt->failed || (rt->nr_series >= REPORT_TIMELINE_SERIES &&
			   key != REPORT_TIMELINE_TOTAL))
		return NULL;
	s = &rt->series[rt->nr_series];
	if (timeline__add_series(&rt->tl, &s->max, TIMELINE_MAX) ||
	    timeline__add_series(&rt->tl, &s->last, TIMELINE_LAST)) {
		rt->failed = true;
		return NULL;
	}
	s->key = key;
	s->peak = 0;
	rt->last_hit = rt->nr_series++;
	return s;
}

void report_timeline__add(struct report_timeline *rt, int32_t key,
			  uint64_t t_ns, uint64_t value)
{
	struct series *s = find_series(rt, key);

	if (!s)
		return;
	if (timeline__sample(&rt->tl, &s->max, t_ns, value) ||
	    timeline__sample(&rt->tl, &s->last, t_ns, value)) {
		rt->failed = true;
		return;
	}
	if (value > s->peak)
		s->peak = value;
}

static int by_peak(const void *a, const void *b)
{
	const struct series *x = *(const struct series *const *)a;
	const struct series *y = *(const struct series *const *)b;

	return x->peak < y->peak ? 1 : x->peak > y->peak ? -1 : 0;
}

typedef void point_fn(double t_ns, double bytes, void *arg);

/*
 * The points of a series, a step per bin from its first: the bin's start
 * and largest value, the last one carried forward over bins without any;
 * a 0 first, where it starts.  Returns how many.
 */
static size_t series_points(const struct timeline *tl, const struct series *s,
			    point_fn *point, void *arg)
{
	double carried = 0;
	size_t i, n = 0;

	for (i = 0; i < tl->nr; i++) {
		double t = timeline__bin_start(tl, i);
		double max = s->max.v[i];

		if (isnan(max) && !n)
			continue;
		if (!n) {
			point(t, 0, arg);
			n++;
		}
		point(t, isnan(max) ? carried : max, arg);
		n++;
		if (!isnan(s->last.v[i]))
			carried = s->last.v[i];
	}
	return n;
}

static void gnuplot_point(double t_ns, double bytes, void *arg)
{
	fprintf(arg, "%.9f %.0f\n", t_ns / 1e9, bytes);
}

/* one data block, numbers only: seconds and bytes */
static void write_block(const struct timeline *tl, const struct series *s,
			FILE *out, unsigned int idx)
{
	fprintf(out, "$s%u << EOD\n", idx);
	/* a series needs two points to be drawn, even one without heap events */
	if (!series_points(tl, s, gnuplot_point, out))
		fprintf(out, "0 0\n1e-06 0\n");
	fprintf(out, "EOD\n");
}

/*
 * The max_series processes of highest peak, then the total, into order[]
 * (room for every series); returns how many.
 */
static unsigned int order_series(struct report_timeline *rt, unsigned int max_series,
				 struct series **order)
{
	unsigned int i, n = 0;

	for (i = 0; i < rt->nr_series; i++)
		if (rt->series[i].key != REPORT_TIMELINE_TOTAL)
			order[n++] = &rt->series[i];
	qsort(order, n, sizeof(*order), by_peak);
	if (n > max_series)
		n = max_series;
	for (i = 0; i < rt->nr_series; i++)
		if (rt->series[i].key == REPORT_TIMELINE_TOTAL)
			order[n++] = &rt->series[i];
	return n;
}

/* the axis in the unit of the text report (KiB, MiB: powers of 1024), the peak's */
struct byte_unit {
	const char *name;
	uint64_t size;
};

static struct byte_unit unit_of(uint64_t peak)
{
	static const struct byte_unit units[] = {
		{ "bytes", 1 }, { "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 },
		{ "GiB", 1ULL << 30 }, { "TiB", 1ULL << 40 },
	};
	size_t i = 0;

	while (i + 1 < ARRAY_SIZE(units) && peak >= units[i + 1].size)
		i++;
	return units[i];
}

static void write_settings(FILE *out, const char *output, uint64_t peak)
{
	gnuplot__set_png(out, PLOT_WIDTH, PLOT_HEIGHT, output);
	fprintf(out, "set title 'live heap%s'\nset xlabel 'seconds'\n"
		"set ylabel '%s'\nset format y '%%g'\n"
		"set key outside right top\nset grid\n", peak ? "" : ": none",
		unit_of(peak).name);
	/* [0:*] of all zeroes is an empty range, which gnuplot refuses */
	fputs(peak ? "set yrange [0:*]\n" : "set yrange [0:1]\nset ytics 1\nset xrange [0:1]\n",
	      out);
}

int report_timeline__write_gnuplot(struct report_timeline *rt, FILE *out,
				   const char *output, unsigned int max_series,
				   report_timeline_name_fn *name, void *arg)
{
	struct series **order = calloc(rt->nr_series + 1, sizeof(*order));
	unsigned int i, n = 0;
	uint64_t peak = 0, unit;
	char title[128];

	if (!order)
		return -ENOMEM;
	for (i = 0; i < rt->nr_series; i++)
		if (rt->series[i].peak > peak)
			peak = rt->series[i].peak;
	n = order_series(rt, max_series, order);

	write_settings(out, output, peak);
	unit = unit_of(peak).size;
	for (i = 0; i < n; i++)
		write_block(&rt->tl, order[i], out, i);
	if (!n)
		fprintf(out, "$s0 << EOD\n0 0\n1e-06 0\nEOD\n");
	fprintf(out, "plot ");
	for (i = 0; i < n || (!n && !i); i++) {
		bool total = !n || order[i]->key == REPORT_TIMELINE_TOTAL;

		if (total)
			snprintf(title, sizeof(title), "all processes");
		else
			name(order[i]->key, title, sizeof(title), arg);
		fprintf(out, "%s$s%u using 1:($2/%" PRIu64 ") with steps %s title ",
			i ? ", \\\n     " : "", i, unit, total ? "lw 2 lc rgb 'black'" : "lw 1");
		quote_gnuplot(out, title);
	}
	fprintf(out, "\n");
	free(order);
	return ferror(out) ? -EIO : 0;
}

struct points_ctx {
	struct report_timeline_series *s;
	size_t n;
};

static void store_point(double t_ns, double bytes, void *arg)
{
	struct points_ctx *c = arg;

	if (c->s->t_ns) {
		c->s->t_ns[c->n] = t_ns;
		c->s->bytes[c->n] = bytes;
	}
	c->n++;
}

/* one series' points: counted first, then stored */
static int export_series(const struct timeline *tl, const struct series *s,
			 struct report_timeline_series *out)
{
	struct points_ctx c = { .s = out };

	out->key = s->key;
	out->peak = s->peak;
	out->n = series_points(tl, s, store_point, &c);
	out->t_ns = malloc((out->n + 1) * sizeof(*out->t_ns));
	out->bytes = malloc((out->n + 1) * sizeof(*out->bytes));
	if (!out->t_ns || !out->bytes)
		return -ENOMEM;
	c.n = 0;
	series_points(tl, s, store_point, &c);
	return 0;
}

int report_timeline__export(struct report_timeline *rt, unsigned int max_series,
			    struct report_timeline_series **out, size_t *nr)
{
	struct series **order = calloc(rt->nr_series + 1, sizeof(*order));
	struct report_timeline_series *v = calloc(rt->nr_series + 1, sizeof(*v));
	unsigned int i, n = 0;
	int err = order && v ? 0 : -ENOMEM;

	if (!err)
		n = order_series(rt, max_series, order);
	for (i = 0; !err && i < n; i++)
		err = export_series(&rt->tl, order[i], &v[i]);
	free(order);
	if (err) {
		report_timeline_series__free(v, n);
		return err;
	}
	*out = v;
	*nr = n;
	return 0;
}

void report_timeline_series__free(struct report_timeline_series *v, size_t nr)
{
	size_t i;

	for (i = 0; v && i < nr; i++) {
		free(v[i].t_ns);
		free(v[i].bytes);
	}
	free(v);
}
