/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_HTML_H
#define MEMTRACK_REPORT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "util/report/report-sites.h"
#include "util/report/report-summary.h"
#include "util/report/report-timeline.h"
#include "util/report/report-tree.h"

/*
 * report --html: one self-contained page (util/report/report-html.html and its
 * script util/report/report-html.js, built into memtrack) with the figures
 * aggregated here: the call tree of the flame graph, the heap over time per
 * process, the processes and the call sites, as JSON in the page.  Nothing
 * is fetched: no network, no other file.  Every string from an artifact
 * goes through quote_html() or quote_html_script(), and the script puts
 * them in the page as text only.
 */

/* nodes of the tree drawn: those of at least 1/REPORT_HTML_MIN_SHARE of a figure */
#define REPORT_HTML_MIN_SHARE	100000
#define REPORT_HTML_PROCESSES	8	/* processes in the timeline */

/* one artifact: the only one, or a diff's base or head */
struct report_html_run {
	const char *path;
	struct report_summary *s;
	bool truncated;
	bool has_stacks;
	/* the call sites of the tables; NULL without call stacks */
	const struct report_site *const *sites;
	size_t nr_sites;
	unsigned int depth;		/* their frames */
};

struct report_html {
	const char *version;
	bool diff;
	struct report_html_run run[2];	/* [0]: the artifact or the base; [1]: the head */
	const struct report_tree *tree;	/* NULL without call stacks */
};

/* the page into out; 0, or -ENOMEM or -EIO */
int report_html__write(FILE *out, const struct report_html *h);

#endif
