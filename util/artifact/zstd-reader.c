// SPDX-License-Identifier: GPL-2.0
/*
 * The zstd layer of the artifact reader.  out[] holds decompressed bytes
 * not yet consumed; fill() makes room and decompresses more, here or, for
 * regular files, on a thread that hands over chunks (struct chunk).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/artifact/zstd-reader.h"

#define CHUNK_SIZE	(128u << 10)	/* decompressed bytes per hand-over */
#define NR_CHUNKS	4
#define SKIPPABLE_HEADER	8	/* a skippable frame's magic and size */

/*
 * Decompressed bytes handed from the decompressing thread to the reader,
 * with the state of the decompressor after them, which the reader takes as
 * its own as it consumes them: its error messages and offsets come out as
 * if it had decompressed them itself.  All of a chunk's bytes come from one
 * zstd frame.  final: 1 more chunks follow, 0 the end of the file, < 0 an
 * error (with reason and error_offset).
 */
struct chunk {
	unsigned char *data;
	size_t len, pos;
	int final;
	uint64_t in_base, in_pos, in_size, frame_start, data_frame, error_offset;
	bool eof, in_frame;
	char reason[256];
};

struct zstd_decompressor {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct zstd_reader *z;	/* the thread's: fd, zstd and input state */
	struct chunk chunks[NR_CHUNKS];
	unsigned int head, tail;	/* filled: [head, tail), mod NR_CHUNKS */
	bool stop;
};

static int fail(struct zstd_reader *z, int err, uint64_t offset)
{
	z->error_offset = offset;
	return err;
}

/* an error in the frame being decoded */
static int fail_frame(struct zstd_reader *z, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_frame(struct zstd_reader *z, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(z->reason, sizeof(z->reason), fmt, ap);
	va_end(ap);
	return fail(z, err, z->frame_start);
}

static int read_input(struct zstd_reader *z)
{
	ssize_t n;

	z->in_base += z->zin.size;
	z->zin.size = 0;
	z->zin.pos = 0;
	do
		n = read(z->fd, z->in, z->in_cap);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int err = errno;

		snprintf(z->reason, sizeof(z->reason), "read error: %s", strerror(err));
		return fail(z, -err, z->in_base);
	}
	if (!n)
		z->eof = true;
	z->zin.size = n;
	return 0;
}

static int grow_out(struct zstd_reader *z)
{
	size_t cap = z->out_cap * 2;
	unsigned char *out;

	if (z->out_cap >= z->max_cap) {
		snprintf(z->reason, sizeof(z->reason), "more than %zu bytes in a row", z->max_cap);
		return fail(z, -E2BIG, z->data_frame);
	}
	out = realloc(z->out, cap);
	if (!out) {
		snprintf(z->reason, sizeof(z->reason), "out of memory");
		return fail(z, -ENOMEM, z->frame_start);
	}
	z->out = out;
	z->out_cap = cap;
	return 0;
}

/* moves the bytes not yet decoded to the front of out[], growing it if full */
static int make_room(struct zstd_reader *z)
{
	if (z->out_pos) {
		memmove(z->out, z->out + z->out_pos, z->out_len - z->out_pos);
		z->out_base += z->out_pos;
		z->out_len -= z->out_pos;
		z->out_pos = 0;
	}
	return z->out_len == z->out_cap ? grow_out(z) : 0;
}

/* one decompression step; returns the bytes it added to out[] or an error */
static int decompress_step(struct zstd_reader *z, size_t *added)
{
	ZSTD_outBuffer zout = { z->out, z->out_cap, z->out_len };
	size_t in_before = z->zin.pos;
	size_t ret = ZSTD_decompressStream(z->zds, &zout, &z->zin);

	if (ZSTD_isError(ret)) {
		if (!z->in_frame)
			return fail_frame(z, -ENOMSG, "not a zstd frame (%s)",
					  ZSTD_getErrorName(ret));
		return fail_frame(z, -EBADMSG, "corrupt zstd frame (%s)",
				  ZSTD_getErrorName(ret));
	}
	if (zout.pos > z->out_len)
		z->data_frame = z->frame_start;
	if (ret == 0) {
		z->in_frame = false;
		z->frame_start = z->in_base + z->zin.pos;
	} else if (z->zin.pos > in_before || zout.pos > z->out_len) {
		z->in_frame = true;
	}
	*added = zout.pos - z->out_len;
	z->out_len = zout.pos;
	return 0;
}

/* decompresses more bytes into out[]: > 0 added, 0 at the end of the file */
static int fill(struct zstd_reader *z)
{
	size_t added;
	int err = make_room(z);

	while (!err) {
		if (z->zin.pos == z->zin.size && !z->eof) {
			err = read_input(z);
			continue;
		}
		if (z->zin.pos == z->zin.size && z->eof && !z->in_frame)
			return 0;
		err = decompress_step(z, &added);
		if (!err && added)
			return 1;
		if (!err && z->zin.pos == z->zin.size && z->eof)
			return 0;
	}
	return err;
}

/* ---- decompression on a thread of its own --------------------------------- */

/* decompresses into c->data, in the thread: like fill(), one frame per chunk */
static void fill_chunk(struct zstd_reader *z, struct chunk *c)
{
	size_t added;
	int err = 0;

	z->out = c->data;
	z->out_cap = CHUNK_SIZE;
	z->out_len = z->out_pos = 0;
	c->final = 1;
	while (z->out_len < CHUNK_SIZE) {
		if (z->zin.pos == z->zin.size && !z->eof) {
			err = read_input(z);
			if (err)
				break;
			continue;
		}
		if (z->zin.pos == z->zin.size && z->eof && !z->in_frame) {
			c->final = 0;
			break;
		}
		/* the next output is from another frame than what is in c */
		if (z->out_len && z->frame_start != z->data_frame)
			break;
		err = decompress_step(z, &added);
		if (err)
			break;
		if (!added && z->zin.pos == z->zin.size && z->eof) {
			c->final = 0;
			break;
		}
	}
	if (err) {
		c->final = err;
		c->error_offset = z->error_offset;
		memcpy(c->reason, z->reason, sizeof(c->reason));
	}
	c->len = z->out_len;
	c->pos = 0;
	c->in_base = z->in_base;
	c->in_pos = z->zin.pos;
	c->in_size = z->zin.size;
	c->frame_start = z->frame_start;
	c->data_frame = z->data_frame;
	c->eof = z->eof;
	c->in_frame = z->in_frame;
}

static void *decompressor_main(void *arg)
{
	struct zstd_decompressor *d = arg;
	struct chunk *c;
	int final = 1;

	pthread_mutex_lock(&d->lock);
	while (final == 1) {
		while (!d->stop && d->tail - d->head == NR_CHUNKS)
			pthread_cond_wait(&d->cond, &d->lock);
		if (d->stop)
			break;
		c = &d->chunks[d->tail % NR_CHUNKS];
		pthread_mutex_unlock(&d->lock);
		fill_chunk(d->z, c);
		final = c->final;
		pthread_mutex_lock(&d->lock);
		d->tail++;
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* fill() with the bytes of the thread's chunks */
static int fill_threaded(struct zstd_reader *z)
{
	struct zstd_decompressor *d = z->dec;
	struct chunk *c;
	size_t n;
	int err = make_room(z);

	if (err)
		return err;
	pthread_mutex_lock(&d->lock);
	while (d->tail == d->head)
		pthread_cond_wait(&d->cond, &d->lock);
	pthread_mutex_unlock(&d->lock);
	c = &d->chunks[d->head % NR_CHUNKS];

	z->in_base = c->in_base;
	z->zin.pos = c->in_pos;
	z->zin.size = c->in_size;
	z->frame_start = c->frame_start;
	z->eof = c->eof;
	z->in_frame = c->in_frame;
	n = c->len - c->pos;
	if (n) {
		z->data_frame = c->data_frame;
		if (n > z->out_cap - z->out_len)
			n = z->out_cap - z->out_len;
		memcpy(z->out + z->out_len, c->data + c->pos, n);
		z->out_len += n;
		c->pos += n;
	}
	/* a final chunk stays, to tell its end to every later call */
	if (c->pos == c->len && c->final == 1) {
		pthread_mutex_lock(&d->lock);
		d->head++;
		pthread_cond_broadcast(&d->cond);
		pthread_mutex_unlock(&d->lock);
	}
	if (n || c->final == 1)
		return 1;
	if (c->final < 0) {
		memcpy(z->reason, c->reason, sizeof(z->reason));
		return fail(z, c->final, c->error_offset);
	}
	return 0;
}

static void decompressor_free(struct zstd_decompressor *d)
{
	unsigned int i;

	for (i = 0; i < NR_CHUNKS; i++)
		free(d->chunks[i].data);
	if (d->z) {
		d->z->out = NULL;	/* a chunk's */
		zstd_reader__exit(d->z);
		free(d->z);
	}
	free(d);
}

void zstd_reader__start_thread(struct zstd_reader *z)
{
	struct zstd_decompressor *d = calloc(1, sizeof(*d));
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < NR_CHUNKS; i++)
		if (!(d->chunks[i].data = malloc(CHUNK_SIZE)))
			goto fail;
	/* the thread's own reader: its out[] is the chunk being filled */
	d->z = calloc(1, sizeof(*d->z));
	if (!d->z || zstd_reader__init(d->z, z->fd, 0, 0))
		goto fail;
	/* the bytes read so far (zstd_reader__peek()) go on from there */
	memcpy(d->z->in, z->in, z->zin.size);
	d->z->zin.size = z->zin.size;
	d->z->zin.pos = z->zin.pos;
	d->z->in_base = z->in_base;
	d->z->eof = z->eof;
	if (pthread_mutex_init(&d->lock, NULL))
		goto fail;
	if (pthread_cond_init(&d->cond, NULL)) {
		pthread_mutex_destroy(&d->lock);
		goto fail;
	}
	if (pthread_create(&d->thread, NULL, decompressor_main, d)) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		goto fail;
	}
	z->dec = d;
	return;
fail:
	decompressor_free(d);
}

static void decompressor_stop(struct zstd_decompressor *d)
{
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	decompressor_free(d);
}

int zstd_reader__init(struct zstd_reader *z, int fd, size_t cap, size_t max_cap)
{
	memset(z, 0, sizeof(*z));
	z->fd = fd;
	z->in_cap = ZSTD_DStreamInSize();
	z->in = malloc(z->in_cap);
	z->out_cap = cap;
	z->max_cap = max_cap;
	z->out = cap ? malloc(cap) : NULL;
	z->zds = ZSTD_createDStream();
	if (!z->in || (cap && !z->out) || !z->zds) {
		zstd_reader__exit(z);
		return -ENOMEM;
	}
	ZSTD_initDStream(z->zds);
	z->zin.src = z->in;
	return 0;
}

void zstd_reader__exit(struct zstd_reader *z)
{
	if (z->dec)
		decompressor_stop(z->dec);
	ZSTD_freeDStream(z->zds);
	free(z->in);
	free(z->out);
	memset(z, 0, sizeof(*z));
}

static uint32_t load_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

int zstd_reader__peek(struct zstd_reader *z)
{
	int err = read_input(z);
	size_t size;

	if (err || z->zin.size < SKIPPABLE_HEADER)
		return err;
	if ((load_le32(z->in) & ZSTD_MAGIC_SKIPPABLE_MASK) != ZSTD_MAGIC_SKIPPABLE_START)
		return 0;
	z->lead_magic = load_le32(z->in);
	size = load_le32(z->in + 4);
	z->lead_len = z->zin.size - SKIPPABLE_HEADER;
	if (z->lead_len > size)
		z->lead_len = size;
	if (z->lead_len > sizeof(z->lead))
		z->lead_len = sizeof(z->lead);
	memcpy(z->lead, z->in + SKIPPABLE_HEADER, z->lead_len);
	return 0;
}

int zstd_reader__fill(struct zstd_reader *z)
{
	return z->dec ? fill_threaded(z) : fill(z);
}
