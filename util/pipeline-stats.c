// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline-stats.h"
#include "usage.h"
#include "util.h"

#define PSTATS_BUFFER	(256 << 10)

struct pstats {
	char *path;
	FILE *fp;
	pthread_mutex_t lock;
	bool failed;
};

struct pstats *pstats__create(int fd, const char *path)
{
	struct pstats *ps = calloc(1, sizeof(*ps));

	if (!ps || !(ps->fp = fdopen(fd, "w")) || !(ps->path = strdup(path))) {
		if (ps && ps->fp)
			fclose(ps->fp);
		else
			close(fd);
		free(ps);
		errno = ENOMEM;
		return NULL;
	}
	setvbuf(ps->fp, NULL, _IOFBF, PSTATS_BUFFER);
	pthread_mutex_init(&ps->lock, NULL);
	return ps;
}

static void stop_sampling(struct pstats *ps)
{
	ps->failed = true;
	warning("cannot write memtrack stats file '%s': %s; no more stats are written",
		ps->path, strerror(errno));
}

static void emit_line(struct pstats *ps, const char *fmt, ...)
{
	va_list ap;
	int ret;

	pthread_mutex_lock(&ps->lock);
	if (!ps->failed) {
		va_start(ap, fmt);
		ret = vfprintf(ps->fp, fmt, ap);
		va_end(ap);
		if (ret < 0 || ferror(ps->fp))
			stop_sampling(ps);
	}
	pthread_mutex_unlock(&ps->lock);
}

void pstats__ring_open(struct pstats *ps, const char *ring, uint64_t size,
		       uint64_t watermark)
{
	if (ps)
		emit_line(ps, "{\"k\":\"ring_open\",\"t\":%lu,\"ring\":\"%s\",\"size\":%lu,"
			  "\"watermark\":%lu}\n", now_ns(), ring, size, watermark);
}

void pstats__ring_tick(struct pstats *ps, const struct ring_tick *k)
{
	if (ps)
		emit_line(ps, "{\"k\":\"ring\",\"ring\":\"%s\",\"t0\":%lu,\"prod0\":%lu,"
			  "\"cons0\":%lu,\"t1\":%lu,\"prod1\":%lu,\"cons1\":%lu,\"peak\":%lu}\n",
			  k->ring, k->t0, k->prod0, k->cons0, k->t1, k->prod1,
			  k->cons1, k->peak);
}

void pstats__pressure(struct pstats *ps, const char *ring, uint64_t t,
		      const struct stopped_pid *pids, int n)
{
	char *list = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	if (!ps)
		return;
	/* one row lists every released pid, however many */
	f = open_memstream(&list, &len);
	if (!f)
		return;
	for (i = 0; i < n; i++)
		fprintf(f, "%s[%u,%lu]", i ? "," : "", pids[i].pid, pids[i].stopped_at);
	if (fclose(f) == 0)
		emit_line(ps, "{\"k\":\"pressure\",\"ring\":\"%s\",\"t\":%lu,\"pids\":[%s]}\n",
			  ring, t, list);
	free(list);
}

void pstats__backlog(struct pstats *ps, uint64_t sent, uint64_t received)
{
	if (ps)
		emit_line(ps, "{\"k\":\"backlog\",\"t\":%lu,\"sent\":%lu,\"received\":%lu,"
			  "\"rss\":%lu}\n", now_ns(), sent, received, self_rss_bytes());
}

void pstats__resolve(struct pstats *ps, uint64_t t0, uint64_t t1, uint64_t n)
{
	if (ps)
		emit_line(ps, "{\"k\":\"resolve\",\"t0\":%lu,\"t1\":%lu,\"n\":%lu}\n",
			  t0, t1, n);
}

void pstats__encode(struct pstats *ps, const struct encoder_window_stats *w)
{
	if (ps)
		emit_line(ps, "{\"k\":\"encode\",\"t\":%lu,\"events\":%lu,\"wait_ns\":%lu,"
			  "\"encode_ns\":%lu,\"write_ns\":%lu,\"msgpack_bytes\":%lu,"
			  "\"zstd_bytes\":%lu}\n", w->t, w->events, w->wait_ns,
			  w->encode_ns, w->write_ns, w->msgpack_bytes, w->zstd_bytes);
}

int pstats__close(struct pstats *ps)
{
	int ret = 0;

	if (!ps)
		return 0;
	if (fflush(ps->fp) && !ps->failed) {
		stop_sampling(ps);
		ret = -1;
	}
	if (fclose(ps->fp) && !ps->failed)
		ret = -1;
	ret = ps->failed ? -1 : ret;
	pthread_mutex_destroy(&ps->lock);
	free(ps->path);
	free(ps);
	return ret;
}
