// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/track/freeze-watch.h"
#include "util/util.h"

#define FROZEN_POLL_MS	1
#define IDLE_POLL_MS	100

void freeze_watch__add(struct freeze_watch *w, const struct ring *r, uint64_t mark)
{
	if (w->nrings < MT_RING_MAX && mark) {
		w->rings[w->nrings].ring = r;
		w->rings[w->nrings].mark = mark;
		w->nrings++;
	}
}

static uint64_t fill_of(const struct ring *r)
{
	return ring__producer(r) - ring__consumer(r);
}

/* the first ring at or above its mark, -1: none */
static int full_ring(const struct freeze_watch *w)
{
	unsigned int i;

	for (i = 0; i < w->nrings; i++)
		if (fill_of(w->rings[i].ring) >= w->rings[i].mark)
			return i;
	return -1;
}

static bool all_drained(const struct freeze_watch *w)
{
	unsigned int i;

	for (i = 0; i < w->nrings; i++)
		if (fill_of(w->rings[i].ring) >= w->rings[i].mark / 2)
			return false;
	return true;
}

static void thaw(struct freeze_watch *w)
{
	int trigger = w->trigger, n, i;
	uint64_t since;

	since = freezer__release(w->freezer, 0, w->pids, MT_MAX_STOPPED, &n);
	if (!since)
		return;
	w->trigger = -1;
	/* a tree that ended while frozen paused no one: as a poller's release of no pid */
	if (!n)
		return;
	for (i = 0; i < n; i++)
		w->rows[i] = (struct stopped_pid){ .pid = w->pids[i], .stopped_at = since };
	pstats__pressure(w->stats, w->rings[trigger].ring->name, now_ns(), w->rows, n, true);
	atomic_fetch_add(&w->episodes, 1);
}

static void look(struct freeze_watch *w)
{
	int full;

	if (w->trigger >= 0) {
		if (all_drained(w))
			thaw(w);
		return;
	}
	full = full_ring(w);
	if (full >= 0 && freezer__hold(w->freezer, 0)) {
		w->trigger = full;
		atomic_fetch_add(&w->freezes, 1);
	}
}

static void *watch_main(void *arg)
{
	struct freeze_watch *w = arg;
	struct epoll_event ev[MT_RING_MAX + 1];
	uint64_t v;

	name_thread("freeze-watch");
	while (!atomic_load(&w->stopping)) {
		int n = epoll_wait(w->epoll_fd, ev, MT_RING_MAX + 1,
				   w->trigger >= 0 ? FROZEN_POLL_MS : IDLE_POLL_MS), i;

		for (i = 0; i < n; i++)
			if (ev[i].data.fd == w->wake_fd && read(w->wake_fd, &v, sizeof(v)) < 0)
				continue;
		look(w);
	}
	return NULL;
}

int freeze_watch__start(struct freeze_watch *w)
{
	unsigned int i;
	int err;

	w->trigger = -1;
	w->pids = calloc(MT_MAX_STOPPED, sizeof(*w->pids));
	w->rows = calloc(MT_MAX_STOPPED, sizeof(*w->rows));
	if (!w->pids || !w->rows)
		return -ENOMEM;
	w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epoll_fd < 0)
		return -errno;
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wake_fd < 0)
		return -errno;
	/* edge-triggered: BPF's forced wakeups, not every byte there is */
	for (i = 0; i < w->nrings; i++) {
		err = epoll_add_fd(w->epoll_fd, w->rings[i].ring->map_fd, EPOLLIN | EPOLLET);
		if (err)
			return err;
	}
	err = epoll_add_fd(w->epoll_fd, w->wake_fd, EPOLLIN);
	if (err)
		return err;
	err = -pthread_create(&w->thread, NULL, watch_main, w);
	if (!err)
		atomic_store(&w->started, true);
	return err;
}

void freeze_watch__stop(struct freeze_watch *w)
{
	uint64_t one = 1;

	if (atomic_load(&w->started)) {
		atomic_store(&w->stopping, true);
		if (write(w->wake_fd, &one, sizeof(one)) < 0)
			pthread_cancel(w->thread);
		pthread_join(w->thread, NULL);
		atomic_store(&w->started, false);
	}
	if (w->epoll_fd >= 0)
		close(w->epoll_fd);
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->epoll_fd = w->wake_fd = -1;
	free(w->pids);
	free(w->rows);
	w->pids = NULL;
	w->rows = NULL;
}
