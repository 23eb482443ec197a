// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report-timeline.h"

#define FIRST_BIN_NS	1000ULL

struct bin {
	uint64_t max, last;
	bool set;
};

struct series {
	int32_t key;
	uint64_t peak;
	struct bin *bins;
};

struct report_timeline {
	unsigned int nr_bins;
	uint64_t width;			/* ns per bin */
	uint64_t end;			/* the latest time seen */
	struct series *series;
	unsigned int nr_series;
	unsigned int last_hit;		/* where the last lookup found its series */
	bool failed;			/* out of memory once: stop adding series */
};

struct report_timeline *report_timeline__new(unsigned int bins)
{
	struct report_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->nr_bins = bins < 16 ? 16 : bins & ~1u;
	tl->width = FIRST_BIN_NS;
	tl->series = calloc(REPORT_TIMELINE_SERIES + 1, sizeof(*tl->series));
	if (!tl->series) {
		free(tl);
		return NULL;
	}
	return tl;
}

void report_timeline__delete(struct report_timeline *tl)
{
	unsigned int i;

	if (!tl)
		return;
	for (i = 0; i < tl->nr_series; i++)
		free(tl->series[i].bins);
	free(tl->series);
	free(tl);
}

static struct series *find_series(struct report_timeline *tl, int32_t key)
{
	struct series *s;
	unsigned int i;

	if (tl->last_hit < tl->nr_series && tl->series[tl->last_hit].key == key)
		return &tl->series[tl->last_hit];
	for (i = 0; i < tl->nr_series; i++) {
		if (tl->series[i].key == key) {
			tl->last_hit = i;
			return &tl->series[i];
		}
	}
	/* the total always gets a series; processes while there is room */
	if (tl->failed || (tl->nr_series >= REPORT_TIMELINE_SERIES &&
			   key != REPORT_TIMELINE_TOTAL))
		return NULL;
	s = &tl->series[tl->nr_series];
	s->bins = calloc(tl->nr_bins, sizeof(*s->bins));
	if (!s->bins) {
		tl->failed = true;
		return NULL;
	}
	s->key = key;
	s->peak = 0;
	tl->last_hit = tl->nr_series++;
	return s;
}

static struct bin merge_bins(const struct bin *a, const struct bin *b)
{
	struct bin m = *a;

	if (!b->set)
		return m;
	if (!m.set || b->max > m.max)
		m.max = b->max;
	m.last = b->last;
	m.set = true;
	return m;
}

/* halves the resolution: bin i takes bins 2i and 2i+1 */
static void widen(struct report_timeline *tl)
{
	unsigned int i, j, half = tl->nr_bins / 2;

	for (i = 0; i < tl->nr_series; i++) {
		struct bin *b = tl->series[i].bins;

		for (j = 0; j < half; j++)
			b[j] = merge_bins(&b[2 * j], &b[2 * j + 1]);
		memset(b + half, 0, half * sizeof(*b));
	}
	tl->width *= 2;
}

void report_timeline__add(struct report_timeline *tl, int32_t key,
			  uint64_t t_ns, uint64_t value)
{
	struct series *s;
	struct bin *b;

	while (t_ns / tl->width >= tl->nr_bins)
		widen(tl);
	if (t_ns > tl->end)
		tl->end = t_ns;
	s = find_series(tl, key);
	if (!s)
		return;
	b = &s->bins[t_ns / tl->width];
	if (!b->set || value > b->max)
		b->max = value;
	b->last = value;
	b->set = true;
	if (value > s->peak)
		s->peak = value;
}

static int by_peak(const void *a, const void *b)
{
	const struct series *x = *(const struct series *const *)a;
	const struct series *y = *(const struct series *const *)b;

	return x->peak < y->peak ? 1 : x->peak > y->peak ? -1 : 0;
}

/* one data block: seconds and bytes, a step per bin, carried forward */
static void write_block(const struct report_timeline *tl, const struct series *s,
			FILE *out, unsigned int idx)
{
	unsigned int i, last_bin = tl->end / tl->width;
	uint64_t carried = 0;
	bool started = false;

	fprintf(out, "$s%u << EOD\n", idx);
	for (i = 0; i <= last_bin && i < tl->nr_bins; i++) {
		const struct bin *b = &s->bins[i];

		if (!b->set && !started)
			continue;
		if (!started)
			fprintf(out, "%.9f 0\n", (double)i * tl->width / 1e9);
		started = true;
		fprintf(out, "%.9f %llu\n", (double)i * tl->width / 1e9,
			(unsigned long long)(b->set ? b->max : carried));
		if (b->set)
			carried = b->last;
	}
	if (!started)
		fprintf(out, "0 0\n");
	fprintf(out, "EOD\n");
}

static void quote_title(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s == '\n' ? ' ' : *s, out);
	}
	fputc('"', out);
}

int report_timeline__write_gnuplot(struct report_timeline *tl, FILE *out,
				   const char *png, unsigned int max_series,
				   report_timeline_name_fn *name, void *arg)
{
	struct series **order = calloc(tl->nr_series + 1, sizeof(*order));
	unsigned int i, n = 0;
	char title[128];

	if (!order)
		return -ENOMEM;
	for (i = 0; i < tl->nr_series; i++)
		if (tl->series[i].key != REPORT_TIMELINE_TOTAL)
			order[n++] = &tl->series[i];
	qsort(order, n, sizeof(*order), by_peak);
	if (n > max_series)
		n = max_series;
	for (i = 0; i < tl->nr_series; i++)
		if (tl->series[i].key == REPORT_TIMELINE_TOTAL)
			order[n++] = &tl->series[i];

	fprintf(out, "set terminal pngcairo size 1200,600 noenhanced\n");
	fprintf(out, "set output ");
	quote_title(out, png);
	fprintf(out, "\nset title \"live heap\"\nset xlabel \"seconds\"\n");
	fprintf(out, "set ylabel \"bytes\"\nset format y \"%%.1s %%cB\"\n");
	fprintf(out, "set key outside right top\nset grid\nset yrange [0:*]\n");
	for (i = 0; i < n; i++)
		write_block(tl, order[i], out, i);
	fprintf(out, "plot ");
	for (i = 0; i < n; i++) {
		if (order[i]->key == REPORT_TIMELINE_TOTAL)
			snprintf(title, sizeof(title), "all processes");
		else
			name(order[i]->key, title, sizeof(title), arg);
		fprintf(out, "%s$s%u using 1:2 with steps %s title ",
			i ? ", \\\n     " : "", i,
			order[i]->key == REPORT_TIMELINE_TOTAL ?
			"lw 2 lc rgb \"black\"" : "lw 1");
		quote_title(out, title);
	}
	fprintf(out, "\n");
	free(order);
	return ferror(out) ? -EIO : 0;
}
