// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the gnuplot script for memtrack stats and runs gnuplot on it.
 *
 * Every series is written once as an inline data block ($name << EOD), one
 * row per time bin, and the panels plot columns of those blocks:
 *
 *   $fN_rM   t_s fill_peak_% drained_tick_% write_MB/s drain_MB/s busy_%
 *   $fN_pipe t_s resolver_busy_% encoder_busy_% enc_in_MB/s enc_out_MB/s
 *            in_flight rss_MB
 *   $fN_episodes  start_s end_s
 *   $lanes        lane start_s end_s
 *
 * t_s is the start of a bin, and a last row repeats the last bin's values
 * at its end, so the binned series are drawn with steps: flat across each
 * bin, a run of one bin too.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/gnuplot.h"
#include "util/quote.h"
#include "util/stats/stats-plot.h"
#include "util/usage.h"

#define NS_PER_S	1e9

static const char *const panel_names[STATS_PANEL_MAX] = {
	[STATS_PANEL_FILL]		= "ring fill",
	[STATS_PANEL_THROUGHPUT]	= "throughput",
	[STATS_PANEL_BUSY]		= "busy",
	[STATS_PANEL_BACKLOG]		= "events in flight and RSS",
	[STATS_PANEL_LANES]		= "pause swimlane",
};

struct plot {
	FILE *out;
	struct stats_file *const *files;
	size_t nr;
	const struct stats_plot_opts *opts;
	char **labels;			/* "" for one file, "<name>:" for several */
	uint64_t origin;		/* ns of the first record of all files */
	double xmin, xmax;		/* s: the records, and the bins that hold them */
	double min_bar;			/* s: the narrowest bar still visible */
	double mbps_floor;		/* lowest MB/s on the log axis */
	unsigned int panels;
};

/* the resolver and encoder of each file, told apart by shade */
static const char *const resolver_colors[] = { "#1b7837", "#5aae61", "#00441b", "#a6dba0" };
static const char *const encoder_colors[] = { "#404040", "#8c510a", "#000000", "#bf812d" };

#define SHADE(colors, f)	((colors)[(f) % (sizeof(colors) / sizeof((colors)[0]))])

struct lane {
	size_t file;
	const struct stats_pid *pid;
};

static bool ring_has_bytes(const struct stats_ring *r)
{
	return r->rows && (r->last_prod1 > r->first_prod0 || r->drained);
}

static bool file_has_fill(const struct stats_file *sf)
{
	size_t i;

	for (i = 0; i < sf->nr_rings; i++)
		if (sf->rings[i]->rows && sf->rings[i]->size)
			return true;
	return false;
}

static bool file_has_throughput(const struct stats_file *sf)
{
	size_t i;

	if (sf->encoder_in || sf->encoder_out)
		return true;
	for (i = 0; i < sf->nr_rings; i++)
		if (ring_has_bytes(sf->rings[i]))
			return true;
	return false;
}

unsigned int stats_plot__panels(struct stats_file *const *files, size_t nr,
				const char *why[STATS_PANEL_MAX])
{
	unsigned int panels = 0;
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct stats_file *sf = files[i];

		if (file_has_fill(sf))
			panels |= 1 << STATS_PANEL_FILL;
		if (file_has_throughput(sf))
			panels |= 1 << STATS_PANEL_THROUGHPUT;
		if (sf->rows[STATS_KIND_RING] || sf->rows[STATS_KIND_RESOLVE] ||
		    sf->rows[STATS_KIND_ENCODE])
			panels |= 1 << STATS_PANEL_BUSY;
		if (sf->rows[STATS_KIND_BACKLOG])
			panels |= 1 << STATS_PANEL_BACKLOG;
		if (sf->nr_pids)
			panels |= 1 << STATS_PANEL_LANES;
	}
	why[STATS_PANEL_FILL] = "no ring_open rows give the ring sizes";
	why[STATS_PANEL_THROUGHPUT] = "no bytes were written, drained or encoded";
	why[STATS_PANEL_BUSY] = "no ring, resolve or encode rows";
	why[STATS_PANEL_BACKLOG] = "no backlog rows";
	why[STATS_PANEL_LANES] = NULL;
	return panels;
}

static void put_value(FILE *out, double v)
{
	if (isnan(v))
		fputs(" NaN", out);
	else
		fprintf(out, " %.6g", v);
}

static double bin_time(const struct plot *p, const struct timeline *tl,
		       size_t i)
{
	return ((double)timeline__bin_start(tl, i) - (double)p->origin) / NS_PER_S;
}

#define BLOCK_COLUMNS	6

/* a row at the start of bin i; the last bin's values are repeated at its end */
static void put_row(struct plot *p, const struct timeline *tl, size_t i,
		    const double *v, size_t n)
{
	size_t k, last = i + 1 == tl->nr;

	do {
		fprintf(p->out, "%.6f", bin_time(p, tl, i++));
		for (k = 0; k < n; k++)
			put_value(p->out, v[k]);
		fputc('\n', p->out);
	} while (last--);
}

static double per_second(double amount, const struct timeline *tl)
{
	return amount * NS_PER_S / tl->width;
}

static double percent_of_bin(double ns, const struct timeline *tl)
{
	return 100.0 * ns / tl->width;
}

static void write_ring_block(struct plot *p, size_t f, size_t r)
{
	const struct stats_file *sf = p->files[f];
	const struct timeline *tl = &sf->timeline;
	const struct stats_ring *ring = sf->rings[r];
	double size = ring->size, carry = NAN, v[BLOCK_COLUMNS];
	size_t i;

	/* numbers only: nothing from the file in a block, which a line could end */
	fprintf(p->out, "$f%zu_r%zu << EOD\n", f, r);
	fprintf(p->out, "# t_s fill_peak_pct drained_tick_pct write_MBps drain_MBps busy_pct\n");
	for (i = 0; i < tl->nr; i++) {
		double peak = ring->fill_peak.v[i];
		double drained = ring->consumed.v[i];

		/* no row: neither position moved, the fill stayed put */
		if (isnan(peak))
			peak = carry;
		if (!isnan(ring->fill_last.v[i]))
			carry = ring->fill_last.v[i];
		if (isnan(drained))
			drained = 0;

		v[0] = size ? 100.0 * peak / size : NAN;
		v[1] = size ? 100.0 * drained / size : NAN;
		v[2] = per_second(ring->written.v[i], tl) / 1e6;
		v[3] = per_second(ring->drained_bytes.v[i], tl) / 1e6;
		v[4] = percent_of_bin(ring->busy.v[i], tl);
		put_row(p, tl, i, v, 5);
	}
	fputs("EOD\n", p->out);
}

static void write_pipeline_block(struct plot *p, size_t f)
{
	const struct stats_file *sf = p->files[f];
	const struct timeline *tl = &sf->timeline;
	double v[BLOCK_COLUMNS];
	size_t i;

	fprintf(p->out, "$f%zu_pipe << EOD\n", f);
	fprintf(p->out, "# t_s resolver_busy_pct encoder_busy_pct encoder_in_MBps encoder_out_MBps in_flight rss_MB\n");
	for (i = 0; i < tl->nr; i++) {
		v[0] = percent_of_bin(sf->resolve_busy.v[i], tl);
		v[1] = percent_of_bin(sf->encode_busy.v[i], tl);
		v[2] = per_second(sf->encode_in.v[i], tl) / 1e6;
		v[3] = per_second(sf->encode_out.v[i], tl) / 1e6;
		v[4] = sf->in_flight.v[i];
		v[5] = sf->rss.v[i] / 1e6;
		put_row(p, tl, i, v, 6);
	}
	fputs("EOD\n", p->out);
}

static double seconds(const struct plot *p, uint64_t t)
{
	return ((double)t - (double)p->origin) / NS_PER_S;
}

static void write_episode_block(struct plot *p, size_t f)
{
	const struct stats_spans *spans = &p->files[f]->episode_spans;
	size_t i;

	fprintf(p->out, "$f%zu_episodes << EOD\n# start_s end_s\n", f);
	for (i = 0; i < spans->nr; i++)
		fprintf(p->out, "%.6f %.6f\n", seconds(p, spans->v[i].start),
			seconds(p, spans->v[i].end));
	fputs("EOD\n", p->out);
}

static int lane_by_paused(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->pid->paused_ns != y->pid->paused_ns)
		return x->pid->paused_ns > y->pid->paused_ns ? -1 : 1;
	return x->pid->pid - y->pid->pid;
}

static int lane_by_file_and_start(const void *a, const void *b)
{
	const struct lane *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->pid->first_stop != y->pid->first_stop)
		return x->pid->first_stop < y->pid->first_stop ? -1 : 1;
	return x->pid->pid - y->pid->pid;
}

/* the pids paused longest, in the order they were first stopped */
static struct lane *pick_lanes(const struct plot *p, size_t *nr, size_t *total)
{
	unsigned int max = p->opts->max_lanes ? p->opts->max_lanes : STATS_PLOT_MAX_LANES;
	struct lane *lanes;
	size_t f, i, n = 0;

	*total = 0;
	for (f = 0; f < p->nr; f++)
		*total += p->files[f]->nr_pids;
	lanes = calloc(*total ? *total : 1, sizeof(*lanes));
	if (!lanes)
		return NULL;
	for (f = 0; f < p->nr; f++)
		for (i = 0; i < p->files[f]->nr_pids; i++) {
			lanes[n].file = f;
			lanes[n++].pid = &p->files[f]->pids[i];
		}
	qsort(lanes, n, sizeof(*lanes), lane_by_paused);
	if (n > max)
		n = max;
	qsort(lanes, n, sizeof(*lanes), lane_by_file_and_start);
	*nr = n;
	return lanes;
}

static void write_lane_block(struct plot *p, const struct lane *lanes, size_t nr)
{
	size_t i, j;

	fputs("$lanes << EOD\n# lane start_s end_s\n", p->out);
	for (i = 0; i < nr; i++) {
		const struct stats_spans *spans = &lanes[i].pid->spans;

		for (j = 0; j < spans->nr; j++)
			fprintf(p->out, "%zu %.6f %.6f\n", i,
				seconds(p, spans->v[j].start),
				seconds(p, spans->v[j].end));
	}
	fputs("EOD\n", p->out);
}

static bool want(const struct plot *p, enum stats_panel panel)
{
	return p->panels & (1 << panel);
}

/* separates the elements of one plot command */
static void next_element(struct plot *p, bool *first)
{
	fputs(*first ? "plot " : ", \\\n     ", p->out);
	*first = false;
}

static void put_title(struct plot *p, size_t f, const char *what, const char *name)
{
	char title[512];

	snprintf(title, sizeof(title), "%s%s%s%s", p->labels[f], name ? name : "",
		 name ? " " : "", what);
	fputs(" title ", p->out);
	quote_gnuplot(p->out, title);
}

/* a percent not yet in v (to a tenth) is added; no more than max */
static void add_pct(double *v, size_t *nr, size_t max, double pct)
{
	size_t i;

	for (i = 0; i < *nr; i++)
		if (fabs(v[i] - pct) < 0.05)
			return;
	if (*nr < max)
		v[(*nr)++] = pct;
}

#define MAX_WATERMARKS	8

/* --watermark, else the one of each ring the panel shows, else track's default */
static void plot_watermarks(struct plot *p, bool *first)
{
	double pct[MAX_WATERMARKS];
	size_t nr = 0, f, r, i;

	if (p->opts->watermark)
		add_pct(pct, &nr, MAX_WATERMARKS, p->opts->watermark);
	for (f = 0; f < p->nr && !p->opts->watermark; f++) {
		const struct stats_file *sf = p->files[f];

		for (r = 0; r < sf->nr_rings; r++) {
			const struct stats_ring *ring = sf->rings[r];

			if (ring->rows && ring->size && ring->watermark)
				add_pct(pct, &nr, MAX_WATERMARKS,
					100.0 * ring->watermark / ring->size);
		}
	}
	if (!nr)
		add_pct(pct, &nr, MAX_WATERMARKS, STATS_PLOT_WATERMARK);
	for (i = 0; i < nr; i++) {
		next_element(p, first);
		fprintf(p->out, "%.4g with lines dt 2 lw 1.5 lc rgb 'red' title 'watermark %.3g%%'",
			pct[i], pct[i]);
	}
}

static void plot_fill(struct plot *p)
{
	bool first = true, shaded = false;
	size_t f, r, lt = 0;

	fprintf(p->out, "\nset title 'ring fill %%: largest fill of a tick (lines), "
		"drained by one tick (dotted), pressure episodes (shaded)'\n"
		"set ylabel 'fill %% of the ring'\nset yrange [0:105]\n");
	for (f = 0; f < p->nr; f++) {
		if (!p->files[f]->episode_spans.nr)
			continue;
		next_element(p, &first);
		fprintf(p->out, "$f%zu_episodes using (($1+$2)/2):(50):1:"
			"(($2>$1+%g)?$2:$1+%g):(0):(100) with boxxyerror "
			"fs transparent solid 0.25 noborder lc rgb '#e08030' %s",
			f, p->min_bar, p->min_bar,
			shaded ? "notitle" : "title 'pressure episode'");
		shaded = true;
	}
	for (f = 0; f < p->nr; f++) {
		const struct stats_file *sf = p->files[f];

		for (r = 0; r < sf->nr_rings; r++, lt++) {
			const struct stats_ring *ring = sf->rings[r];

			if (!ring->rows || !ring->size)
				continue;
			next_element(p, &first);
			fprintf(p->out, "$f%zu_r%zu using 1:3 with steps dt 3 lw 1.5 lt %zu",
				f, r, lt + 1);
			put_title(p, f, "drained/tick", ring->name);
			next_element(p, &first);
			fprintf(p->out, "$f%zu_r%zu using 1:2 with steps lw 1.5 lt %zu",
				f, r, lt + 1);
			put_title(p, f, "peak", ring->name);
		}
	}
	plot_watermarks(p, &first);
	fputc('\n', p->out);
}

static void plot_throughput(struct plot *p)
{
	bool first = true;
	size_t f, r, lt = 0;
	double fl = p->mbps_floor;

	fprintf(p->out, "\nset title 'throughput (MB/s, log scale): ring write and drain, encoder in and out'\n"
		"set ylabel 'MB/s'\nset logscale y\nset yrange [%g:*]\n", fl);
	for (f = 0; f < p->nr; f++) {
		const struct stats_file *sf = p->files[f];

		for (r = 0; r < sf->nr_rings; r++, lt++) {
			if (!ring_has_bytes(sf->rings[r]))
				continue;
			next_element(p, &first);
			fprintf(p->out, "$f%zu_r%zu using 1:($4>%g?$4:%g) with steps lw 1.5 lt %zu",
				f, r, fl, fl, lt + 1);
			put_title(p, f, "write", sf->rings[r]->name);
			next_element(p, &first);
			fprintf(p->out, "$f%zu_r%zu using 1:($5>%g?$5:%g) with steps lw 1.5 dt 3 lt %zu",
				f, r, fl, fl, lt + 1);
			put_title(p, f, "drain", sf->rings[r]->name);
		}
	}
	for (f = 0; f < p->nr; f++) {
		if (!p->files[f]->encoder_in && !p->files[f]->encoder_out)
			continue;
		next_element(p, &first);
		fprintf(p->out, "$f%zu_pipe using 1:($4>%g?$4:%g) with steps lw 1.5 lc rgb '%s'",
			f, fl, fl, SHADE(encoder_colors, f));
		put_title(p, f, "encoder in", NULL);
		next_element(p, &first);
		fprintf(p->out, "$f%zu_pipe using 1:($5>%g?$5:%g) with steps lw 1.5 dt 3 lc rgb '%s'",
			f, fl, fl, SHADE(encoder_colors, f));
		put_title(p, f, "encoder out", NULL);
	}
	fputs("\nunset logscale y\n", p->out);
}

static void bin_width_text(const struct plot *p, char *buf, size_t len)
{
	uint64_t width = 0;
	size_t f;

	for (f = 0; f < p->nr; f++)
		if (p->files[f]->timeline.width > width)
			width = p->files[f]->timeline.width;
	if (width < 1000000000)
		snprintf(buf, len, "%g ms", width / 1e6);
	else
		snprintf(buf, len, "%g s", width / 1e9);
}

static void plot_busy(struct plot *p)
{
	bool first = true;
	size_t f, r, lt = 0;
	char width[32];

	bin_width_text(p, width, sizeof(width));
	fprintf(p->out, "\nset title 'busy %% per %s bin: pollers, resolver, encoder'\n"
		"set ylabel 'busy %%'\nset yrange [0:*]\nset offsets 0, 0, graph 0.1, 0\n", width);
	for (f = 0; f < p->nr; f++) {
		const struct stats_file *sf = p->files[f];

		for (r = 0; r < sf->nr_rings; r++, lt++) {
			if (!sf->rings[r]->rows)
				continue;
			next_element(p, &first);
			fprintf(p->out, "$f%zu_r%zu using 1:6 with steps lw 1.5 lt %zu",
				f, r, lt + 1);
			put_title(p, f, "poller", sf->rings[r]->name);
		}
	}
	for (f = 0; f < p->nr; f++) {
		const struct stats_file *sf = p->files[f];

		if (sf->rows[STATS_KIND_RESOLVE]) {
			next_element(p, &first);
			fprintf(p->out, "$f%zu_pipe using 1:2 with steps lw 1.5 lc rgb '%s'",
				f, SHADE(resolver_colors, f));
			put_title(p, f, "resolver", NULL);
		}
		if (sf->rows[STATS_KIND_ENCODE]) {
			next_element(p, &first);
			fprintf(p->out, "$f%zu_pipe using 1:3 with steps lw 1.5 lc rgb '%s'",
				f, SHADE(encoder_colors, f));
			put_title(p, f, "encoder", NULL);
		}
	}
	fputs("\nset offsets\n", p->out);
}

static void plot_backlog(struct plot *p)
{
	bool first = true;
	size_t f;

	fprintf(p->out, "\nset title 'events in flight (sent - received) and memtrack RSS'\n"
		"set ylabel 'events in flight'\nset y2label 'RSS (MB)'\n"
		"set ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
		"set offsets 0, 0, graph 0.1, 0\n");
	for (f = 0; f < p->nr; f++) {
		if (!p->files[f]->rows[STATS_KIND_BACKLOG])
			continue;
		next_element(p, &first);
		fprintf(p->out, "$f%zu_pipe using 1:6 with steps lw 1.5 lc rgb '#2166ac' axes x1y1", f);
		put_title(p, f, "in flight", NULL);
		next_element(p, &first);
		fprintf(p->out, "$f%zu_pipe using 1:7 with steps lw 1.5 lc rgb '#b2182b' axes x1y2", f);
		put_title(p, f, "RSS", NULL);
	}
	fputs("\nunset y2tics\nunset y2label\nset ytics mirror\nset offsets\n", p->out);
}

static void plot_lanes(struct plot *p, const struct lane *lanes, size_t nr,
		       size_t total)
{
	size_t i;

	fprintf(p->out, "\nset title 'processes paused by back-pressure: stopped_at to release");
	if (nr < total)
		fprintf(p->out, " (the %zu of %zu pids paused longest)", nr, total);
	fprintf(p->out, "'\nset ylabel 'pid'\nset yrange [%g:-0.5]\nset ytics (", nr - 0.5);
	for (i = 0; i < nr; i++) {
		char label[256];

		snprintf(label, sizeof(label), "%s%d", p->labels[lanes[i].file],
			 lanes[i].pid->pid);
		fputs(i ? ", " : "", p->out);
		quote_gnuplot(p->out, label);
		fprintf(p->out, " %zu", i);
	}
	fprintf(p->out, ")\nset key off\n"
		"plot $lanes using (($2+$3)/2):1:2:(($3>$2+%g)?$3:$2+%g):($1-0.35):($1+0.35) "
		"with boxxyerror fs solid 0.8 noborder lc rgb '#b2182b' notitle\n",
		p->min_bar, p->min_bar);
}

static unsigned int count_panels(unsigned int panels)
{
	return __builtin_popcount(panels);
}

static void write_header(struct plot *p)
{
	unsigned int width = p->opts->width ? p->opts->width : STATS_PLOT_WIDTH;
	unsigned int height = p->opts->height ? p->opts->height :
			      STATS_PLOT_PANEL_HEIGHT * count_panels(p->panels);

	fprintf(p->out, "# memtrack stats: the pipeline of %zu file%s (the title names them)\n"
		"# Render with: gnuplot <this file>.  Time is in seconds from the\n"
		"# first record, %llu ns (CLOCK_MONOTONIC).\n\n", p->nr, p->nr == 1 ? "" : "s",
		(unsigned long long)p->origin);
	gnuplot__set_png(p->out, width, height, p->opts->output);
	fputc('\n', p->out);
}

static void write_layout(struct plot *p)
{
	char title[1024];
	size_t f, len = 0;

	len += snprintf(title + len, sizeof(title) - len, "memtrack stats:");
	for (f = 0; f < p->nr && len < sizeof(title); f++)
		len += snprintf(title + len, sizeof(title) - len, " %s",
				p->files[f]->path);

	fprintf(p->out, "\nset multiplot layout %u,1 margins 0.07,0.78,%g,0.95 spacing 0,%g title ",
		count_panels(p->panels), 0.3 / count_panels(p->panels),
		0.25 / count_panels(p->panels));
	quote_gnuplot(p->out, title);
	fprintf(p->out, "\nset grid\nset key outside right top\n"
		"set xrange [%g:%g]\nset format x '%%g'\n", p->xmin, p->xmax);
}

static void scan_files(struct plot *p)
{
	double lowest = INFINITY;
	uint64_t last = 0;
	size_t f, r, i;

	p->origin = UINT64_MAX;
	for (f = 0; f < p->nr; f++) {
		const struct stats_file *sf = p->files[f];
		const struct timeline *tl = &sf->timeline;

		if (!sf->has_time)
			continue;
		if (sf->first_t < p->origin)
			p->origin = sf->first_t;
		if (sf->last_t > last)
			last = sf->last_t;
		for (i = 0; i < tl->nr; i++) {
			for (r = 0; r < sf->nr_rings; r++) {
				double w = sf->rings[r]->written.v[i];
				double d = sf->rings[r]->drained_bytes.v[i];

				if (w > 0)
					lowest = fmin(lowest, per_second(w, tl) / 1e6);
				if (d > 0)
					lowest = fmin(lowest, per_second(d, tl) / 1e6);
			}
			if (sf->encode_in.v[i] > 0)
				lowest = fmin(lowest, per_second(sf->encode_in.v[i], tl) / 1e6);
			if (sf->encode_out.v[i] > 0)
				lowest = fmin(lowest, per_second(sf->encode_out.v[i], tl) / 1e6);
		}
	}
	if (p->origin == UINT64_MAX)
		p->origin = 0;
	p->xmax = last > p->origin ? seconds(p, last) : 1e-3;
	p->xmin = 0;
	/*
	 * Bins are aligned in absolute time: a run shorter than one has its
	 * bin's middle, where the point is drawn, outside the records.
	 */
	for (f = 0; f < p->nr; f++) {
		const struct timeline *tl = &p->files[f]->timeline;

		if (!p->files[f]->has_time || !tl->nr)
			continue;
		p->xmin = fmin(p->xmin, seconds(p, timeline__bin_start(tl, 0)));
		p->xmax = fmax(p->xmax, seconds(p, timeline__bin_start(tl, tl->nr)));
	}
	p->min_bar = (p->xmax - p->xmin) / 600;
	/* a power of ten below the smallest rate: idle bins sit on the floor */
	p->mbps_floor = isinf(lowest) ? 1e-3 : pow(10, floor(log10(lowest)) - 1);
}

/* "name:" from the file name without its directory and .jsonl, when it is unique */
static int make_labels(struct plot *p)
{
	size_t f, g;

	p->labels = calloc(p->nr, sizeof(*p->labels));
	if (!p->labels)
		return -ENOMEM;
	for (f = 0; f < p->nr; f++) {
		const char *path = p->files[f]->path;
		const char *base = strrchr(path, '/');
		size_t len;

		base = base ? base + 1 : path;
		len = strlen(base);
		if (len > 6 && !strcmp(base + len - 6, ".jsonl"))
			len -= 6;
		if (p->nr == 1)
			len = 0;
		p->labels[f] = malloc(len + 2);
		if (!p->labels[f])
			return -ENOMEM;
		memcpy(p->labels[f], base, len);
		strcpy(p->labels[f] + len, len ? ":" : "");
	}
	for (f = 0; f < p->nr; f++)
		for (g = f + 1; g < p->nr; g++)
			if (!strcmp(p->labels[f], p->labels[g])) {
				warning("two files plot as '%s'; their series share a name",
					p->labels[f]);
				return 0;
			}
	return 0;
}

static void free_labels(struct plot *p)
{
	size_t f;

	for (f = 0; p->labels && f < p->nr; f++)
		free(p->labels[f]);
	free(p->labels);
}

static void warn_skipped_panels(unsigned int panels, const char *why[STATS_PANEL_MAX])
{
	int i;

	for (i = 0; i < STATS_PANEL_MAX; i++)
		if (!(panels & (1 << i)) && why[i])
			warning("plot: skipping the %s panel: %s", panel_names[i], why[i]);
}

/* top to bottom; the time axis is labelled once, under the bottom panel */
static void write_panels(struct plot *p, const struct lane *lanes, size_t nr_lanes,
			 size_t total_lanes)
{
	int panel, last = 0;

	for (panel = 0; panel < STATS_PANEL_MAX; panel++)
		if (want(p, panel))
			last = panel;
	for (panel = 0; panel < STATS_PANEL_MAX; panel++) {
		if (!want(p, panel))
			continue;
		if (panel == last)
			fputs("\nset xlabel 'time (s) since the first record'", p->out);
		switch (panel) {
		case STATS_PANEL_FILL:
			plot_fill(p);
			break;
		case STATS_PANEL_THROUGHPUT:
			plot_throughput(p);
			break;
		case STATS_PANEL_BUSY:
			plot_busy(p);
			break;
		case STATS_PANEL_BACKLOG:
			plot_backlog(p);
			break;
		case STATS_PANEL_LANES:
			plot_lanes(p, lanes, nr_lanes, total_lanes);
			break;
		}
	}
}

/*
 * Pauses and episodes were merged with the bin width of their time; merge
 * them all alike for the picture, down to what a bar can show.
 */
static void merge_spans(struct plot *p)
{
	size_t f, i;

	for (f = 0; f < p->nr; f++) {
		struct stats_file *sf = p->files[f];
		uint64_t gap = fmax(sf->timeline.width, p->min_bar * NS_PER_S);

		stats_spans__merge(&sf->episode_spans, gap);
		for (i = 0; i < sf->nr_pids; i++)
			stats_spans__merge(&sf->pids[i].spans, gap);
	}
}

static void write_blocks(struct plot *p)
{
	size_t f, r;

	for (f = 0; f < p->nr; f++) {
		for (r = 0; r < p->files[f]->nr_rings; r++)
			if (p->files[f]->rings[r]->rows)
				write_ring_block(p, f, r);
		write_pipeline_block(p, f);
		if (p->files[f]->episode_spans.nr)
			write_episode_block(p, f);
	}
}

int stats_plot__write(FILE *out, struct stats_file *const *files, size_t nr,
		      const struct stats_plot_opts *opts)
{
	struct plot p = { .out = out, .files = files, .nr = nr, .opts = opts };
	const char *why[STATS_PANEL_MAX];
	struct lane *lanes = NULL;
	size_t nr_lanes = 0, total_lanes = 0;
	int ret = -1;

	p.panels = stats_plot__panels(files, nr, why);
	warn_skipped_panels(p.panels, why);
	if (!p.panels)
		return error("nothing to plot");
	if (make_labels(&p))
		goto out;
	if (want(&p, STATS_PANEL_LANES)) {
		lanes = pick_lanes(&p, &nr_lanes, &total_lanes);
		if (!lanes)
			goto out;
	}
	scan_files(&p);
	merge_spans(&p);

	write_header(&p);
	write_blocks(&p);
	if (lanes)
		write_lane_block(&p, lanes, nr_lanes);

	write_layout(&p);
	write_panels(&p, lanes, nr_lanes, total_lanes);
	fputs("unset multiplot\n", p.out);
	ret = 0;
out:
	if (ret)
		error("out of memory writing the plot script");
	free(lanes);
	free_labels(&p);
	return ret;
}
