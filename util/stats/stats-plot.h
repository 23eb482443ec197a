/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_PLOT_H
#define MEMTRACK_STATS_PLOT_H

/*
 * The gnuplot script of memtrack stats --plot/--gnuplot: one PNG, panels
 * stacked on a shared time axis, the data inline so that the script renders
 * anywhere with "gnuplot <script>".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/stats/stats-derive.h"

#define STATS_PLOT_WIDTH	1280
#define STATS_PLOT_PANEL_HEIGHT	280
#define STATS_PLOT_MAX_LANES	40
#define STATS_PLOT_WATERMARK	75	/* track's default, for files that do not say */

enum stats_panel {
	STATS_PANEL_FILL,
	STATS_PANEL_THROUGHPUT,
	STATS_PANEL_BUSY,
	STATS_PANEL_BACKLOG,
	STATS_PANEL_LANES,
	STATS_PANEL_MAX,
};

struct stats_plot_opts {
	const char *output;		/* the PNG the script names; NULL: stdout */
	unsigned int width, height;	/* pixels; 0 for the defaults */
	unsigned int watermark;		/* percent of the ring; 0: each ring's own */
	unsigned int max_lanes;		/* pids in the swimlane; 0 for the default */
};

/*
 * Which panels the files have data for, as a mask of 1 << enum stats_panel;
 * why[panel] says why a panel is left out (NULL for the swimlane when there
 * was no pressure episode, which is not worth a warning).
 */
unsigned int stats_plot__panels(struct stats_file *const *files, size_t nr,
				const char *why[STATS_PANEL_MAX]);

/*
 * Writes the script to out, warning about each panel left out.  Returns 0,
 * or -1 after an error (nothing to plot); the caller checks out for write
 * errors.
 */
int stats_plot__write(FILE *out, struct stats_file *const *files, size_t nr,
		      const struct stats_plot_opts *opts);

#endif
