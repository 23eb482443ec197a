/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_READ_H
#define MEMTRACK_STATS_READ_H

/*
 * Reading pipeline stats files (JSON lines, memtrack-stats(1) "FILE FORMAT")
 * one line at a time into a struct stats_file.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/stats/stats-derive.h"

#define STATS_MAX_LINE		(16 << 20)

struct stats_read_opts {
	bool strict;			/* a malformed line is an error */
	unsigned int max_warnings;	/* malformed lines reported one by one */
};

/*
 * Reads sf->path ("-" is the standard input).  Malformed lines are reported
 * with the file and line number and skipped, unless opts->strict.  Returns
 * 0, or -1 after printing an error.
 */
int stats_file__read(struct stats_file *sf, const struct stats_read_opts *opts);

/*
 * Adds one line (NUL-terminated, len bytes before the NUL; it may be
 * modified).  Returns 0 for a row that was added, 1 for a line that was
 * ignored (blank, or a kind of row we do not know), -EINVAL for a malformed
 * line with the reason in why, or -ENOMEM.
 */
int stats_file__parse_line(struct stats_file *sf, char *line, size_t len,
			   char *why, size_t why_len);

/*
 * One line read by the keys of stats-format.h, for stats_file__parse_line()
 * and for checking what a writer wrote.  v points into obj.
 */
struct stats_line {
	struct cJSON *obj;
	enum stats_kind kind;
	struct stats_values v;
	struct stats_pause *pauses;
};

/*
 * 0 with the row in l, 1 for a row of a kind we do not know (its name in
 * *unknown), or -EINVAL with why filled in; stats_line__exit() in any case.
 */
int stats_line__parse(struct stats_line *l, char *line, size_t len, char *why,
		      size_t why_len, const char **unknown);
void stats_line__exit(struct stats_line *l);

/* -1 after printing why when the file has nothing to summarise */
int stats_file__check(const struct stats_file *sf);

/* how messages name the file */
const char *stats_file__name(const struct stats_file *sf);

#endif
