// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/track/pipeline-stats.h"
#include "util/quote.h"
#include "util/stats/stats-format.h"
#include "util/usage.h"
#include "util/util.h"

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

static void put_value(FILE *fp, enum stats_key key, const struct stats_values *v)
{
	size_t i;

	switch (stats_key_types[key]) {
	case STATS_U64:
		fprintf(fp, "%" PRIu64, v->u[key]);
		break;
	case STATS_STRING:
		quote_json(fp, v->ring);
		break;
	case STATS_PAUSES:
		fputc('[', fp);
		for (i = 0; i < v->nr_pauses; i++)
			fprintf(fp, "%s[%d,%" PRIu64 "]", i ? "," : "", v->pauses[i].pid,
				v->pauses[i].stopped_at);
		fputc(']', fp);
		break;
	}
}

/* one row: "k", then every key of its kind as stats-format.h lists them */
static void emit_row(struct pstats *ps, enum stats_kind kind, const struct stats_values *v)
{
	const struct stats_row_format *fmt = &stats_row_formats[kind];
	unsigned int i;

	pthread_mutex_lock(&ps->lock);
	if (!ps->failed) {
		fprintf(ps->fp, "{\"k\":\"%s\"", stats_kind_names[kind]);
		for (i = 0; i < fmt->nr; i++) {
			fprintf(ps->fp, ",\"%s\":", stats_key_names[fmt->fields[i].key]);
			put_value(ps->fp, fmt->fields[i].key, v);
		}
		fputs("}\n", ps->fp);
		if (ferror(ps->fp))
			stop_sampling(ps);
	}
	pthread_mutex_unlock(&ps->lock);
}

void pstats__ring_open(struct pstats *ps, const char *ring, uint64_t size,
		       uint64_t watermark)
{
	struct stats_values v = { .ring = ring };

	if (!ps)
		return;
	v.u[STATS_KEY_T] = now_ns();
	v.u[STATS_KEY_SIZE] = size;
	v.u[STATS_KEY_WATERMARK] = watermark;
	emit_row(ps, STATS_KIND_RING_OPEN, &v);
}

void pstats__ring_tick(struct pstats *ps, const struct ring_tick *k)
{
	struct stats_values v = { .ring = k->ring };

	if (!ps)
		return;
	v.u[STATS_KEY_T0] = k->t0;
	v.u[STATS_KEY_PROD0] = k->prod0;
	v.u[STATS_KEY_CONS0] = k->cons0;
	v.u[STATS_KEY_T1] = k->t1;
	v.u[STATS_KEY_PROD1] = k->prod1;
	v.u[STATS_KEY_CONS1] = k->cons1;
	v.u[STATS_KEY_PEAK] = k->peak;
	emit_row(ps, STATS_KIND_RING, &v);
}

/* one row lists every released pid, however many */
void pstats__pressure(struct pstats *ps, const char *ring, uint64_t t,
		      const struct stopped_pid *pids, int n, bool frozen)
{
	struct stats_values v = { .ring = ring, .nr_pauses = n };
	struct stats_pause *pauses;
	int i;

	if (!ps)
		return;
	pauses = calloc(n ? n : 1, sizeof(*pauses));
	if (!pauses)
		return;
	for (i = 0; i < n; i++) {
		pauses[i].pid = pids[i].pid;
		pauses[i].stopped_at = pids[i].stopped_at;
	}
	v.pauses = pauses;
	v.u[STATS_KEY_T] = t;
	v.u[STATS_KEY_FROZEN] = frozen;
	emit_row(ps, STATS_KIND_PRESSURE, &v);
	free(pauses);
}

void pstats__backlog(struct pstats *ps, uint64_t sent, uint64_t received)
{
	struct stats_values v = { 0 };

	if (!ps)
		return;
	v.u[STATS_KEY_T] = now_ns();
	v.u[STATS_KEY_SENT] = sent;
	v.u[STATS_KEY_RECEIVED] = received;
	v.u[STATS_KEY_RSS] = self_rss_bytes();
	emit_row(ps, STATS_KIND_BACKLOG, &v);
}

void pstats__resolve(struct pstats *ps, uint64_t t0, uint64_t t1, uint64_t n)
{
	struct stats_values v = { 0 };

	if (!ps)
		return;
	v.u[STATS_KEY_T0] = t0;
	v.u[STATS_KEY_T1] = t1;
	v.u[STATS_KEY_N] = n;
	emit_row(ps, STATS_KIND_RESOLVE, &v);
}

void pstats__encode(struct pstats *ps, const struct encoder_window_stats *w)
{
	struct stats_values v = { 0 };

	if (!ps)
		return;
	v.u[STATS_KEY_T] = w->t;
	v.u[STATS_KEY_EVENTS] = w->events;
	v.u[STATS_KEY_WAIT_NS] = w->wait_ns;
	v.u[STATS_KEY_ENCODE_NS] = w->encode_ns;
	v.u[STATS_KEY_WRITE_NS] = w->write_ns;
	v.u[STATS_KEY_MSGPACK_BYTES] = w->msgpack_bytes;
	v.u[STATS_KEY_ZSTD_BYTES] = w->zstd_bytes;
	emit_row(ps, STATS_KIND_ENCODE, &v);
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
