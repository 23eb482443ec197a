/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_TIMELINE_H
#define MEMTRACK_REPORT_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

/*
 * Live heap over time, per process and for the whole tree, on the time
 * bins of util/timeline.c: at most a given number of bins, merged pairwise
 * as time runs on.  Each bin keeps the largest value seen in it (so peaks
 * survive) and the last one (carried forward over bins without events).
 * Memory: bins * series, whatever the length.
 */

#define REPORT_TIMELINE_TOTAL	INT32_MIN	/* the series of the whole tree */
#define REPORT_TIMELINE_SERIES	256		/* processes followed, at most */

struct report_timeline;

struct report_timeline *report_timeline__new(unsigned int bins);
void report_timeline__delete(struct report_timeline *tl);
/* value of a series at t_ns (nanoseconds from the start) */
void report_timeline__add(struct report_timeline *tl, int32_t series,
			  uint64_t t_ns, uint64_t value);

/* the name gnuplot shows for a process */
typedef void report_timeline_name_fn(int32_t pid, char *buf, size_t len, void *arg);

/*
 * Writes a gnuplot script, data inline, that draws the total and the
 * max_series processes of highest peak into the PNG output (NULL: to
 * gnuplot's standard output).  Names go through quote_gnuplot().
 */
int report_timeline__write_gnuplot(struct report_timeline *tl, FILE *out,
				   const char *output, unsigned int max_series,
				   report_timeline_name_fn *name, void *arg);

/* a series as points: a step per bin (report --html draws them) */
struct report_timeline_series {
	int32_t key;			/* a pid, or REPORT_TIMELINE_TOTAL */
	uint64_t peak;
	size_t n;
	double *t_ns, *bytes;		/* n points: nanoseconds from the start, live bytes */
};

/*
 * The max_series processes of highest peak, then the total, as points into
 * *out (free with report_timeline_series__free()); 0 or -ENOMEM.
 */
int report_timeline__export(struct report_timeline *rt, unsigned int max_series,
			    struct report_timeline_series **out, size_t *nr);
void report_timeline_series__free(struct report_timeline_series *v, size_t nr);

#endif
