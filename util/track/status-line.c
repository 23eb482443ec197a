// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util/track/status-line.h"
#include "util/usage.h"
#include "util/util.h"

#define REDRAW_NS	(250 * NSEC_PER_MSEC)
#define CLEAR_LINE	"\r\033[K"

struct status_line {
	int fd;
	status_fill_fn *fill;
	void *arg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	uint64_t start_ns, last_ns, last_events;
};

/* 1234 -> "1234", 56789 -> "56.8k", 1600042 -> "1.6M" */
static const char *human_count(double v, char *buf, size_t len)
{
	if (v < 1e4)
		snprintf(buf, len, "%.0f", v);
	else if (v < 1e6)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v < 1e9)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else
		snprintf(buf, len, "%.1fG", v / 1e9);
	return buf;
}

void status_line__format(char *buf, size_t len, unsigned int width, uint64_t elapsed_ns,
			 const struct status_figures *f, double events_per_s, uint64_t rss)
{
	char events[32], rate[32], mem[32];

	snprintf(buf, len, "memtrack: %.1f s, %s events (%s/s), %" PRIu64 " process%s, "
		 "%" PRIu64 " pressure episode%s, RSS %s", elapsed_ns / 1e9,
		 human_count(f->events, events, sizeof(events)),
		 human_count(events_per_s, rate, sizeof(rate)),
		 f->processes, f->processes == 1 ? "" : "es",
		 f->episodes, f->episodes == 1 ? "" : "s", human_bytes(rss, mem, sizeof(mem)));
	if (width && strlen(buf) > width)
		buf[width] = 0;
}

/* 0 when unknown: then the line is not cut */
static unsigned int terminal_width(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	/* the last column would wrap on some terminals */
	return ws.ws_col - 1;
}

static void draw(struct status_line *sl)
{
	struct status_figures f = { 0 };
	uint64_t now = now_ns(), dt = now - sl->last_ns;
	char line[512];
	double rate;

	sl->fill(&f, sl->arg);
	rate = dt ? (double)(f.events - sl->last_events) * NSEC_PER_SEC / dt : 0;
	sl->last_ns = now;
	sl->last_events = f.events;
	memcpy(line, CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
	status_line__format(line + sizeof(CLEAR_LINE) - 1, sizeof(line) - sizeof(CLEAR_LINE),
			    terminal_width(sl->fd), now - sl->start_ns, &f, rate,
			    self_rss_bytes());
	/* one write: a line is never cut by another thread's message */
	if (write_all(sl->fd, line, strlen(line)))
		sl->stop = true;
}

static void *status_thread(void *arg)
{
	struct status_line *sl = arg;
	struct timespec ts;
	uint64_t next;

	pthread_mutex_lock(&sl->lock);
	while (!sl->stop) {
		next = now_ns() + REDRAW_NS;
		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		while (!sl->stop && pthread_cond_timedwait(&sl->wake, &sl->lock, &ts) != ETIMEDOUT)
			;
		if (!sl->stop)
			draw(sl);
	}
	pthread_mutex_unlock(&sl->lock);
	return NULL;
}

struct status_line *status_line__start(int fd, status_fill_fn *fill, void *arg)
{
	const char *term = getenv("TERM");
	struct status_line *sl;
	pthread_condattr_t ca;

	if (!isatty(fd) || (term && !strcmp(term, "dumb")))
		return NULL;
	sl = calloc(1, sizeof(*sl));
	if (!sl)
		return NULL;
	sl->fd = fd;
	sl->fill = fill;
	sl->arg = arg;
	sl->start_ns = sl->last_ns = now_ns();
	pthread_mutex_init(&sl->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sl->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&sl->thread, NULL, status_thread, sl)) {
		pthread_cond_destroy(&sl->wake);
		pthread_mutex_destroy(&sl->lock);
		free(sl);
		return NULL;
	}
	usage__status_line_shown(true);
	return sl;
}

void status_line__stop(struct status_line *sl)
{
	if (!sl)
		return;
	pthread_mutex_lock(&sl->lock);
	sl->stop = true;
	pthread_cond_signal(&sl->wake);
	pthread_mutex_unlock(&sl->lock);
	pthread_join(sl->thread, NULL);
	/* the figures at the end, then a clean line for the summary */
	draw(sl);
	write_all(sl->fd, CLEAR_LINE, sizeof(CLEAR_LINE) - 1);
	usage__status_line_shown(false);
	pthread_cond_destroy(&sl->wake);
	pthread_mutex_destroy(&sl->lock);
	free(sl);
}
