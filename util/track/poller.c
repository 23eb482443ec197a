// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/track/poller.h"
#include "util/util.h"

/*
 * Resumes the processes stopped for this ring, once it is below the
 * watermark again.  Not before: a SIGCONT cancels a group stop that has not
 * reached every thread yet, and threads that never stopped would go on
 * filling the ring past its end.
 */
static void release_stopped(struct poller *p)
{
	struct stopped_pid *pids = p->released;
	uint64_t stops;
	int n;

	if (p->pressure_fd < 0)
		return;
	if (p->watermark && ring__producer(&p->ring) - ring__consumer(&p->ring) >= p->watermark)
		return;
	/* scanning an empty hash map costs a pass over all its buckets */
	stops = __atomic_load_n(p->pressure_stops, __ATOMIC_ACQUIRE);
	if (stops == p->stops_seen)
		return;
	p->stops_seen = stops;
	n = pressure__release(p->pressure_ops ? p->pressure_ops : &pressure_bpf_ops,
			      p->pressure_fd, p->pressure_flag, pids, MAX_STOPPED_PIDS);
	if (n <= 0)
		return;
	p->episodes++;
	p->resumed += n;
	if (n > MAX_STOPPED_PIDS)
		n = MAX_STOPPED_PIDS;
	pstats__pressure(p->stats, p->ring.name, now_ns(), pids, n, false);
	if (p->on_release)
		p->on_release(p->ctx, pids, n);
}

static void tick(struct poller *p)
{
	struct ring_tick k = { .ring = p->ring.name };
	long n;

	k.t0 = now_ns();
	k.prod0 = ring__producer(&p->ring);
	k.cons0 = ring__consumer(&p->ring);
	k.peak = k.prod0 - k.cons0;
	n = ring__drain(&p->ring, p->on_record, p->ctx, &k.peak);
	if (n < 0 && !p->error)
		p->error = n;
	else if (n > 0)
		p->records += n;
	k.t1 = now_ns();
	k.prod1 = ring__producer(&p->ring);
	k.cons1 = ring__consumer(&p->ring);
	/* all reserved by this read is drained: what comes later was stamped after t0 */
	if (k.prod1 == k.cons1)
		p->drained_at = k.t0;
	if (k.prod1 != k.prod0 || k.cons1 != k.cons0)
		pstats__ring_tick(p->stats, &k);
	release_stopped(p);
	if (p->on_tick)
		p->on_tick(p->ctx);
}

static int sleep_ms(struct poller *p)
{
	return p->may_sleep && !p->may_sleep(p->ctx) ? 0 : (int)p->interval_ms;
}

static void *poller_main(void *arg)
{
	struct poller *p = arg;
	struct epoll_event ev[16];
	uint64_t v;

	name_thread("poll-%s", p->ring.name);
	while (!atomic_load(&p->stopping)) {
		int n = epoll_wait(p->epoll_fd, ev, ARRAY_SIZE(ev), sleep_ms(p)), i;

		if (p->woke)
			p->woke(p->ctx);
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == p->wake_fd) {
				if (read(p->wake_fd, &v, sizeof(v)) < 0)
					continue;
			} else if (fd != p->ring.map_fd && p->on_fd) {
				p->on_fd(p->ctx, fd, ev[i].events);
			}
		}
		tick(p);
	}
	/* the producers are detached by now: one last tick takes what is left */
	tick(p);
	return NULL;
}

int poller__init(struct poller *p)
{
	if (p->epoll_fd > 0)
		return 0;
	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	return p->epoll_fd < 0 ? -errno : 0;
}

int poller__watch(struct poller *p, int fd)
{
	int err = poller__init(p);

	if (err)
		return err;
	return epoll_add_fd(p->epoll_fd, fd, EPOLLIN);
}

int poller__start(struct poller *p)
{
	int err = poller__init(p);

	if (err)
		return err;
	p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->wake_fd < 0)
		return -errno;
	/* edge-triggered: wake on BPF's forced wakeups only, not on any data */
	err = epoll_add_fd(p->epoll_fd, p->ring.map_fd, EPOLLIN | EPOLLET);
	if (!err)
		err = epoll_add_fd(p->epoll_fd, p->wake_fd, EPOLLIN);
	if (err)
		return err;
	if (p->pressure_fd >= 0) {
		p->released = calloc(MAX_STOPPED_PIDS, sizeof(*p->released));
		if (!p->released)
			return -ENOMEM;
	}
	pstats__ring_open(p->stats, p->ring.name, p->ring.size, p->watermark);
	return -pthread_create(&p->thread, NULL, poller_main, p);
}

int poller__stop(struct poller *p)
{
	uint64_t one = 1;

	atomic_store(&p->stopping, true);
	if (write(p->wake_fd, &one, sizeof(one)) < 0)
		return -errno;
	pthread_join(p->thread, NULL);
	close(p->epoll_fd);
	close(p->wake_fd);
	/* no stale fds: poller__init() (or a restart) makes new ones */
	p->epoll_fd = p->wake_fd = -1;
	free(p->released);
	p->released = NULL;
	return p->error;
}
