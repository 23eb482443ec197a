/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_FREEZE_WATCH_H
#define MEMTRACK_FREEZE_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/probe/freezer.h"
#include "util/track/pipeline-stats.h"
#include "util/probe/pressure.h"
#include "util/track/ring.h"

/*
 * The thread that freezes the tree while a BPF ring is at or above its
 * freeze mark, and thaws it once every ring is below half its mark.  Not
 * the pollers: a poller blocks in a record it hands downstream (a full
 * queue to the resolver or the encoder), and the stacks ring once went
 * from the mark to the watermark while its poller was so blocked.  It
 * wakes on BPF's wakeups past the mark (edge-triggered on the rings' fds),
 * and every millisecond while the tree is frozen.  Each thaw is a
 * `pressure` row of the ring that froze the tree, with the cgroup's pids.
 */
struct freeze_watch {
	struct freezer *freezer;
	struct pstats *stats;
	struct {
		const struct ring *ring;
		uint64_t mark;
	} rings[MT_RING_MAX];
	unsigned int nrings;
	int trigger;			/* the ring that froze the tree, -1: not frozen */
	pid_t *pids;			/* MT_MAX_STOPPED, for a thaw's row */
	struct stopped_pid *rows;

	int epoll_fd, wake_fd;
	pthread_t thread;
	atomic_bool stopping, started;
	_Atomic uint64_t freezes;
	_Atomic uint64_t episodes;	/* thaws, each a pressure row */
};

/* a ring to watch, its freeze mark in bytes; before freeze_watch__start() */
void freeze_watch__add(struct freeze_watch *w, const struct ring *r, uint64_t mark);
int freeze_watch__start(struct freeze_watch *w);
/* joins the thread (if started) and frees; the tree stays as it is (freezer__delete() thaws) */
void freeze_watch__stop(struct freeze_watch *w);

#endif
