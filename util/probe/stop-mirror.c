// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "util/probe/stop-mirror.h"
#include "util/util.h"

/* long enough for a loaded machine to deliver SIGCHLD and the parent to act on it */
#define WATCH_NS	(500 * NSEC_PER_MSEC)
/* pollers tick thousands of times a second; a parent's reaction takes longer than this */
#define SCAN_EVERY_NS	NSEC_PER_MSEC

struct watch {
	pid_t parent;
	uint64_t held_at, until;
};

/* resumed from the events poller (holds) and the pressure releases of every ring */
struct stop_mirror {
	pthread_mutex_t lock;
	struct stop_mirror_ops ops;
	void *ctx;
	struct watch *w;
	size_t n, cap;
	uint64_t scanned_at;
};

static void send_sigcont(pid_t pid)
{
	kill(pid, SIGCONT);
}

struct stop_mirror *stop_mirror__new(const struct stop_mirror_ops *ops, void *ctx)
{
	struct stop_mirror *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->ops = *ops;
	if (!m->ops.state)
		m->ops.state = proc_state;
	if (!m->ops.resume)
		m->ops.resume = send_sigcont;
	m->ctx = ctx;
	return m;
}

void stop_mirror__delete(struct stop_mirror *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->w);
	free(m);
}

bool proc_state(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* the comm may hold anything: the state follows its last ')' */
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %c %d", state, ppid) == 2;
}

/*
 * One watch a parent, spanning all its children's holds.  With a watch per
 * released child, a tick resumed the parent once per watch; each resume let
 * it continue its child, which, still over the watermark, wrote one more
 * event and stopped again: hundreds of rounds between two drains overfilled
 * a 4 KiB ring under load.
 */
static struct watch *watch_of(struct stop_mirror *m, pid_t parent)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->w[i].parent == parent)
			return &m->w[i];
	return NULL;
}

void stop_mirror__resumed(struct stop_mirror *m, pid_t child, uint64_t held_at, uint64_t now)
{
	struct watch *w;
	char state;
	pid_t parent;

	/* memtrack, the root's parent, mirrors nothing */
	if (!m || !m->ops.state(child, &state, &parent) || parent <= 1 || parent == getpid())
		return;
	pthread_mutex_lock(&m->lock);
	w = watch_of(m, parent);
	if (w) {
		if (held_at < w->held_at)
			w->held_at = held_at;
		w->until = now + WATCH_NS;
	} else if (!grow_array((void **)&m->w, &m->cap, m->n + 1, sizeof(*m->w))) {
		m->w[m->n++] = (struct watch){
			.parent = parent, .held_at = held_at, .until = now + WATCH_NS,
		};
	}
	pthread_mutex_unlock(&m->lock);
}

/* it stopped itself after its child's hold began */
static bool mirrored(struct stop_mirror *m, const struct watch *w)
{
	uint64_t when = m->ops.self_stop(m->ctx, w->parent);
	char state;
	pid_t ppid;

	return (when & MT_THEIR_STOP_SELF) && (when & ~MT_THEIR_STOP_SELF) >= w->held_at &&
	       m->ops.state(w->parent, &state, &ppid) && state == 'T';
}

unsigned int stop_mirror__tick(struct stop_mirror *m, uint64_t now)
{
	unsigned int resumed = 0;
	size_t i, kept = 0;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->lock);
	if (!m->n || now - m->scanned_at < SCAN_EVERY_NS) {
		pthread_mutex_unlock(&m->lock);
		return 0;
	}
	m->scanned_at = now;
	for (i = 0; i < m->n; i++) {
		struct watch *w = &m->w[i];

		if (now >= w->until)
			continue;
		if (mirrored(m, w)) {
			m->ops.resume(w->parent);
			resumed++;
		} else {
			m->w[kept++] = *w;
		}
	}
	m->n = kept;
	pthread_mutex_unlock(&m->lock);
	return resumed;
}
