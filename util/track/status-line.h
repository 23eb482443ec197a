/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATUS_LINE_H
#define MEMTRACK_STATUS_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The live status of `memtrack track` on a terminal: the terminal's last
 * row, kept out of the scrolling region (as apt draws its progress) so that
 * the program's own output scrolls above it and never runs into it;
 * redrawn four times a second by a thread of its own, removed at the end:
 *
 *   memtrack: 3.2 s, 1.6M events (512.3k/s), 17 processes, heap 12.1 MiB live, 2 pressure episodes
 *
 * Off a terminal, with TERM=dumb, or on one of fewer than 4 rows there is none.
 */

/* what the tracer knows; filled by the caller's function, from the thread */
struct status_figures {
	uint64_t events;
	uint64_t processes;
	uint64_t live_bytes;		/* the tree's live heap */
	uint64_t episodes;		/* pressure episodes */
};

typedef void status_fill_fn(struct status_figures *f, void *arg);

struct status_line;

/* whether a status line would be drawn on fd */
bool status_line__wanted(int fd);
/* starts the line on fd when status_line__wanted(fd); NULL when not (or no memory) */
struct status_line *status_line__start(int fd, status_fill_fn *fill, void *arg);
/* draws the last figures, then clears the line and stops; NULL is fine */
void status_line__stop(struct status_line *sl);

/*
 * The line itself, at most width columns (cut, never wrapped; 0: no limit): elapsed
 * time, events and their rate, processes, the live heap, pressure episodes.
 */
void status_line__format(char *buf, size_t len, unsigned int width, uint64_t elapsed_ns,
			 const struct status_figures *f, double events_per_s);

#endif
