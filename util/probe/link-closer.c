// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/fd-pass.h"
#include "util/probe/link-closer.h"
#include "util/probe/pressure.h"
#include "util/util.h"

struct link_closer {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t queued;
	int *fds;
	size_t n, cap;
	int guardian_fd;
	bool stopping;
};

/*
 * Handed to the guardian, a link is released there, and our close only
 * drops a reference: a release that waits here would delay memtrack's
 * exit, which waits for every thread.
 */
static void close_batch(int guardian_fd, const int *fds, int n)
{
	int i;

	if (guardian_fd >= 0) {
		pressure__close_by_guardian(guardian_fd, fds, n);
		return;
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void *closer_main(void *arg)
{
	struct link_closer *c = arg;
	int batch[SEND_FDS_MAX];

	name_thread("close-links");
	pthread_mutex_lock(&c->lock);
	for (;;) {
		int n = 0, guardian_fd;

		while (!c->n && !c->stopping)
			pthread_cond_wait(&c->queued, &c->lock);
		if (!c->n)
			break;
		while (c->n && n < SEND_FDS_MAX)
			batch[n++] = c->fds[--c->n];
		guardian_fd = c->guardian_fd;
		pthread_mutex_unlock(&c->lock);
		close_batch(guardian_fd, batch, n);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

struct link_closer *link_closer__new(void)
{
	struct link_closer *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->guardian_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->queued, NULL);
	if (pthread_create(&c->thread, NULL, closer_main, c)) {
		free(c);
		return NULL;
	}
	return c;
}

void link_closer__use_guardian(struct link_closer *c, int guardian_fd)
{
	pthread_mutex_lock(&c->lock);
	c->guardian_fd = guardian_fd;
	pthread_mutex_unlock(&c->lock);
}

void link_closer__close(struct link_closer *c, int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&c->lock);
	if (grow_array((void **)&c->fds, &c->cap, c->n + 1, sizeof(*c->fds))) {
		pthread_mutex_unlock(&c->lock);
		close(fd);
		return;
	}
	c->fds[c->n++] = fd;
	pthread_cond_signal(&c->queued);
	pthread_mutex_unlock(&c->lock);
}

size_t link_closer__stop(struct link_closer *c, int **left)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	n = c->n;
	*left = c->fds;
	c->fds = NULL;
	c->n = c->cap = 0;
	pthread_cond_signal(&c->queued);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	return n;
}

void link_closer__delete(struct link_closer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_signal(&c->queued);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->queued);
	free(c->fds);
	free(c);
}
