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
#define MIN_ROWS	4
/* DEC save and restore cursor: the program's cursor is where it left it */
#define SAVE_CURSOR	"\0337"
#define RESTORE_CURSOR	"\0338"

struct status_line {
	int fd;
	unsigned int rows;		/* the terminal's, when the region was set */
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
			 const struct status_figures *f, double events_per_s)
{
	char events[32], rate[32], mem[32];

	snprintf(buf, len, "memtrack: %.1f s, %s events (%s/s), %" PRIu64 " process%s, "
		 "heap %s live, %" PRIu64 " pressure episode%s", elapsed_ns / 1e9,
		 human_count(f->events, events, sizeof(events)),
		 human_count(events_per_s, rate, sizeof(rate)),
		 f->processes, f->processes == 1 ? "" : "es",
		 human_bytes(f->live_bytes, mem, sizeof(mem)),
		 f->episodes, f->episodes == 1 ? "" : "s");
	if (width && strlen(buf) > width)
		buf[width] = 0;
}

/* false when unknown */
static bool terminal_size(int fd, unsigned int *rows, unsigned int *cols)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col || !ws.ws_row)
		return false;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return true;
}

/*
 * The program's rows: 1 to rows - 1 scroll, the last is the status line's.
 * Setting the region homes the cursor, so it is saved and restored around
 * it; a new line first, and back up, frees the last row without covering
 * what it held.
 */
static bool set_region(struct status_line *sl, unsigned int rows)
{
	char seq[64];

	snprintf(seq, sizeof(seq), "%s" SAVE_CURSOR "\033[1;%ur" RESTORE_CURSOR "%s",
		 sl->rows ? "" : "\n", rows - 1, sl->rows ? "" : "\033[1A");
	sl->rows = rows;
	return !write_all(sl->fd, seq, strlen(seq));
}

static void draw(struct status_line *sl)
{
	struct status_figures f = { 0 };
	uint64_t now = now_ns(), dt = now - sl->last_ns;
	unsigned int rows, cols;
	char line[600];
	int head;
	double rate;

	if (!terminal_size(sl->fd, &rows, &cols) || rows < MIN_ROWS)
		return;
	if (rows != sl->rows && !set_region(sl, rows)) {
		sl->stop = true;
		return;
	}
	sl->fill(&f, sl->arg);
	rate = dt ? (double)(f.events - sl->last_events) * NSEC_PER_SEC / dt : 0;
	sl->last_ns = now;
	sl->last_events = f.events;
	head = snprintf(line, sizeof(line), SAVE_CURSOR "\033[%u;1H\033[K", rows);
	/* the last column would wrap on some terminals */
	status_line__format(line + head, sizeof(line) - head - sizeof(RESTORE_CURSOR), cols - 1,
			    now - sl->start_ns, &f, rate);
	strcat(line, RESTORE_CURSOR);
	/* one write: a line is never cut by another thread's message */
	if (write_all(sl->fd, line, strlen(line)))
		sl->stop = true;
}

/* the whole screen scrolls again, and the status row is empty */
static void remove_region(struct status_line *sl)
{
	char seq[64];

	if (!sl->rows)
		return;
	snprintf(seq, sizeof(seq), SAVE_CURSOR "\033[r\033[%u;1H\033[K" RESTORE_CURSOR,
		 sl->rows);
	write_all(sl->fd, seq, strlen(seq));
	sl->rows = 0;
}

static void *status_thread(void *arg)
{
	struct status_line *sl = arg;
	struct timespec ts;
	uint64_t next;

	name_thread("status");
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

bool status_line__wanted(int fd)
{
	const char *term = getenv("TERM");
	unsigned int rows, cols;

	return isatty(fd) && !(term && !strcmp(term, "dumb")) &&
	       terminal_size(fd, &rows, &cols) && rows >= MIN_ROWS;
}

struct status_line *status_line__start(int fd, status_fill_fn *fill, void *arg)
{
	struct status_line *sl;
	pthread_condattr_t ca;

	if (!status_line__wanted(fd))
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
	/* the summary line says the figures at the end: the status row goes */
	remove_region(sl);
	pthread_cond_destroy(&sl->wake);
	pthread_mutex_destroy(&sl->lock);
	free(sl);
}
