/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PIPELINE_STATS_H
#define MEMTRACK_PIPELINE_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/track/encoder.h"
#include "util/probe/pressure.h"

/*
 * The JSON lines that `track --stats` writes about its own pipeline
 * (memtrack-stats(1), FILE FORMAT).  Every writer takes a NULL sink, so that
 * callers need no test when no stats path was given.  Safe across threads.
 * A write error stops the sampling with one warning; the run goes on.
 */
struct pstats;

struct ring_tick {
	const char *ring;
	uint64_t t0, prod0, cons0;
	uint64_t t1, prod1, cons1;
	uint64_t peak;
};

/* writes to fd (taken, closed in any case); path names it in messages; NULL: out of memory */
struct pstats *pstats__create(int fd, const char *path);
/* watermark: bytes in the ring at which producers are stopped (our addition) */
void pstats__ring_open(struct pstats *ps, const char *ring, uint64_t size,
		       uint64_t watermark);
void pstats__ring_tick(struct pstats *ps, const struct ring_tick *tick);
/* frozen: the tree's cgroup was thawed (each pid paused at the freeze), not SIGCONTs sent */
void pstats__pressure(struct pstats *ps, const char *ring, uint64_t t,
		      const struct stopped_pid *pids, int n, bool frozen);
void pstats__backlog(struct pstats *ps, uint64_t sent, uint64_t received);
void pstats__resolve(struct pstats *ps, uint64_t t0, uint64_t t1, uint64_t n);
void pstats__encode(struct pstats *ps, const struct encoder_window_stats *w);
/* flushes and closes; -1 if anything could not be written */
int pstats__close(struct pstats *ps);

#endif
