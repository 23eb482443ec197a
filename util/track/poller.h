/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_POLLER_H
#define MEMTRACK_POLLER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "bpf/memtrack.h"
#include "util/track/pipeline-stats.h"
#include "util/probe/pressure.h"
#include "util/track/ring.h"

#define MAX_STOPPED_PIDS MT_MAX_STOPPED

/*
 * One thread per ring.  Each tick drains the ring until it catches the
 * producer, writes a `ring` row, and resumes the processes that BPF stopped
 * at the watermark.  A tick happens every poll interval, or at once when
 * BPF forces a wakeup (a producer was stopped).
 */
struct poller {
	struct ring ring;
	unsigned int interval_ms;
	int pressure_fd;		/* -1: none */
	const struct pressure_ops *pressure_ops;	/* NULL: pressure_bpf_ops */
	uint32_t pressure_flag;		/* which stops are this ring's */
	uint64_t watermark;		/* bytes: stopped processes resume below it */
	const volatile uint64_t *pressure_stops;	/* BPF's count of stops */
	uint64_t stops_seen;
	struct stopped_pid *released;	/* MAX_STOPPED_PIDS, for one release */
	struct pstats *stats;
	ring_record_fn *on_record;
	void *ctx;
	void (*on_tick)(void *ctx);	/* after each tick, in the poller thread */
	/* after a release resumed these (at most MAX_STOPPED_PIDS of them) */
	void (*on_release)(void *ctx, const struct stopped_pid *pids, int n);
	/* events of another fd the owner added to epoll_fd (by poller__watch) */
	void (*on_fd)(void *ctx, int fd, uint32_t events);
	/* before sleeping: false when there is work already (no sleep); and after */
	bool (*may_sleep)(void *ctx);
	void (*woke)(void *ctx);
	uint64_t drained_at;		/* t0 of the last tick that emptied the ring */

	int epoll_fd;
	int wake_fd;
	pthread_t thread;
	atomic_bool stopping;
	int error;			/* the record callback's, -errno */
	uint64_t records;
	uint64_t episodes;
	uint64_t resumed;
};

/* creates the epoll set, so that the owner can add fds before poller__start() */
int poller__init(struct poller *p);
/* adds fd to the poller's epoll set: its events go to on_fd */
int poller__watch(struct poller *p, int fd);
int poller__start(struct poller *p);
/* a last full drain and release, then joins the thread; returns p->error */
int poller__stop(struct poller *p);

#endif
