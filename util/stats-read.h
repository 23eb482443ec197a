/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_READ_H
#define MEMTRACK_STATS_READ_H

/*
 * Reading pipeline stats files (JSON lines, DESIGN.md "Pipeline stats")
 * one line at a time into a struct stats_file.
 */

#include <stdbool.h>
#include <stddef.h>

#include "stats-derive.h"

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

/* -1 after printing why when the file has nothing to summarise */
int stats_file__check(const struct stats_file *sf);

/* how messages name the file */
const char *stats_file__name(const struct stats_file *sf);

#endif
