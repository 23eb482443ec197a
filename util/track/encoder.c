// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "util/artifact/msgpack-put.h"
#include "util/track/encoder.h"
#include "util/prefetch.h"
#include "util/util.h"

#define DEFAULT_WINDOW_EVENTS	4096
#define DEFAULT_LEVEL		3
#define LEVEL1_HASH_LOG		11
#define PREFETCH_EVENTS		4	/* ahead of the one written: past a window's end is harmless */
#define SPARE_WINDOWS		3

struct window {
	uint64_t seq;
	uint64_t opened_ns;
	unsigned int n;
	struct mt_alloc_event *ev;
};

struct worker {
	struct encoder *enc;
	pthread_t thread;
	ZSTD_CCtx *cctx;
	msgpack_sbuffer sbuf;
	void *zbuf;
	size_t zcap;
};

struct encoder {
	struct encoder_opts opts;
	pthread_mutex_t lock;
	pthread_cond_t window_freed;
	pthread_cond_t window_filled;
	pthread_cond_t window_written;

	struct window *windows;
	unsigned int nwindows;
	struct window **free_list;
	unsigned int nfree;
	struct window **filled;		/* FIFO of nwindows slots */
	unsigned int filled_head, nfilled;
	uint64_t next_seq, next_write;
	bool closing;
	int error;			/* first write error, -errno */

	struct window *cur;		/* the producer's, outside the lock */
	struct worker *workers;
	unsigned int nworkers;
	struct worker tail;		/* encodes the trailer's records after drain */
	struct worker side;		/* side records, under side_lock */
	pthread_mutex_t side_lock;
	msgpack_sbuffer side_queue;	/* side frames waiting for a window's turn, under lock */
	uint64_t side_queue_after;	/* the window whose writer writes them */

	_Atomic uint64_t events_in, events_out, bytes_written;
};

/*
 * Events are most of an artifact: they are written straight as bytes, the
 * very bytes msgpack-c would pack (tests/unit/test-encoder.c holds the two
 * side by side), without a callback per key and value.
 */
size_t encode_alloc_event(unsigned char *buf, const struct mt_alloc_event *e)
{
	bool has_size = e->kind != MT_FREE;
	bool has_old = e->kind == MT_REALLOC;
	bool has_stack = e->stack != 0;
	bool freeres = e->flags & MT_EVENT_FREERES;
	unsigned char *p = buf;

	*p++ = 0x80 | (5 + has_size + has_old + has_stack + freeres);	/* fixmap */
	p = put_int32(PUT_KEY(p, AK_PID), e->pid);
	p = put_int32(PUT_KEY(p, AK_TID), e->tid);
	p = put_uint(PUT_KEY(p, AK_TIMESTAMP), e->ts);
	p = put_uint(PUT_KEY(p, AK_ADDR), e->addr);
	p = put_fixstr(p, ARTIFACT_TYPE_KEY, sizeof(ARTIFACT_TYPE_KEY) - 1);
	if (e->kind < MT_KIND_MAX && artifact_kind_names[e->kind].s)
		p = put_fixstr(p, artifact_kind_names[e->kind].s, artifact_kind_names[e->kind].len);
	else
		*p++ = 0xc0;	/* nil: not an allocation kind */
	if (has_size)
		p = put_uint(PUT_KEY(p, AK_SIZE), e->size);
	if (has_old)
		p = put_uint(PUT_KEY(p, AK_OLD_ADDR), e->old_addr);
	if (has_stack)
		p = put_uint(PUT_KEY(p, AK_STACK), e->stack);
	if (freeres) {
		p = PUT_KEY(p, AK_FREERES);
		*p++ = 0xc3;	/* true */
	}
	return p - buf;
}

void pack_alloc_event(msgpack_packer *pk, const struct mt_alloc_event *e)
{
	unsigned char buf[ALLOC_EVENT_MAX_BYTES];

	pk->callback(pk->data, (const char *)buf, encode_alloc_event(buf, e));
}

/* room for n more events at the end of sbuf */
static int sbuffer_reserve(msgpack_sbuffer *sbuf, size_t n)
{
	return grow_array((void **)&sbuf->data, &sbuf->alloc,
			  sbuf->size + n * ALLOC_EVENT_MAX_BYTES, 1);
}

ZSTD_CCtx *encoder__new_cctx(const struct encoder *enc)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();

	if (!c)
		return NULL;
	ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, enc->opts.level);
	/*
	 * Level 1's hash table is 16K entries; events repeat their keys every
	 * 60 bytes, and 2K entries found as many matches, 9% faster and 7% smaller
	 * on a storm's events, 6% faster and 1% smaller on python3's.
	 */
	if (enc->opts.level == 1)
		ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, LEVEL1_HASH_LOG);
	ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
	return c;
}

static int worker__init(struct worker *w, struct encoder *enc)
{
	w->enc = enc;
	w->cctx = encoder__new_cctx(enc);
	if (!w->cctx)
		return -ENOMEM;
	msgpack_sbuffer_init(&w->sbuf);
	return 0;
}

static void worker__exit(struct worker *w)
{
	ZSTD_freeCCtx(w->cctx);
	msgpack_sbuffer_destroy(&w->sbuf);
	free(w->zbuf);
}

/* compresses w->sbuf into one zstd frame in w->zbuf; returns its size or 0 */
static size_t worker__compress(struct worker *w)
{
	size_t bound = ZSTD_compressBound(w->sbuf.size), n;

	if (bound > w->zcap) {
		void *p = realloc(w->zbuf, bound);

		if (!p)
			return 0;
		w->zbuf = p;
		w->zcap = bound;
	}
	n = ZSTD_compress2(w->cctx, w->zbuf, w->zcap, w->sbuf.data, w->sbuf.size);
	return ZSTD_isError(n) ? 0 : n;
}

/* appends a compressed frame (0 bytes: it could not be made); the caller holds the turn */
static int write_frame(struct encoder *enc, const void *z, size_t zsize)
{
	int err;

	if (enc->error)
		return enc->error;
	err = zsize ? write_all(enc->opts.fd, z, zsize) : -ENOMEM;
	if (err)
		enc->error = err;
	else
		enc->bytes_written += zsize;
	return err;
}

static int worker__write(struct worker *w, size_t zsize)
{
	return write_frame(w->enc, w->zbuf, zsize);
}

static struct window *take_filled(struct encoder *enc, uint64_t *wait_ns)
{
	uint64_t t0 = now_ns();
	struct window *w = NULL;

	pthread_mutex_lock(&enc->lock);
	while (!enc->nfilled && !enc->closing)
		pthread_cond_wait(&enc->window_filled, &enc->lock);
	if (enc->nfilled) {
		w = enc->filled[enc->filled_head];
		enc->filled_head = (enc->filled_head + 1) % enc->nwindows;
		enc->nfilled--;
		enc->events_out += w->n;
	}
	pthread_mutex_unlock(&enc->lock);
	*wait_ns = now_ns() - t0;
	return w;
}

static void wait_for_turn(struct encoder *enc, uint64_t seq)
{
	pthread_mutex_lock(&enc->lock);
	while (enc->next_write != seq)
		pthread_cond_wait(&enc->window_written, &enc->lock);
	pthread_mutex_unlock(&enc->lock);
}

/* side frames queued while the turn was held, written in it */
static void write_queued_side(struct encoder *enc, msgpack_sbuffer *q)
{
	int err = enc->error;

	if (!err)
		err = write_all(enc->opts.fd, q->data, q->size);
	if (err && !enc->error)
		enc->error = err;
	else if (!err)
		enc->bytes_written += q->size;
	msgpack_sbuffer_destroy(q);
}

/*
 * Ends the writing turn.  Side frames queued for this window are written
 * first, still in its turn: their author (the resolver) never waits for a
 * turn, since the windows before them may wait for stacks only it resolves.
 */
static void end_turn(struct encoder *enc)
{
	msgpack_sbuffer q;

	pthread_mutex_lock(&enc->lock);
	while (enc->side_queue.size && enc->next_write >= enc->side_queue_after) {
		q = enc->side_queue;
		msgpack_sbuffer_init(&enc->side_queue);
		pthread_mutex_unlock(&enc->lock);
		write_queued_side(enc, &q);
		pthread_mutex_lock(&enc->lock);
	}
	enc->next_write++;
	pthread_cond_broadcast(&enc->window_written);
	pthread_mutex_unlock(&enc->lock);
}

static void release_window(struct encoder *enc, struct window *w)
{
	pthread_mutex_lock(&enc->lock);
	enc->free_list[enc->nfree++] = w;
	pthread_cond_signal(&enc->window_freed);
	pthread_mutex_unlock(&enc->lock);
	end_turn(enc);
}

static void encode_window(struct worker *wk, struct window *w, uint64_t wait_ns)
{
	struct encoder_window_stats st = { .events = w->n, .wait_ns = wait_ns };
	struct encoder *enc = wk->enc;
	uint64_t t0, t1;
	size_t zsize;
	unsigned int i, n = w->n;
	struct mt_alloc_event *ev = w->ev;
	unsigned char *out;

	t0 = now_ns();
	/* the seqs are taken even if the window cannot be written: they would wait forever */
	for (i = 0; enc->opts.stack_id && i < n; i++)
		if (ev[i].flags & MT_EVENT_STACK_SEQ)
			ev[i].stack = enc->opts.stack_id(enc->opts.stack_id_arg, ev[i].stack);
	msgpack_sbuffer_clear(&wk->sbuf);
	zsize = 0;
	if (!sbuffer_reserve(&wk->sbuf, n)) {
		out = (unsigned char *)wk->sbuf.data;
		for (i = 0; i < n; i++)
			out += encode_alloc_event(out, &ev[i]);
		wk->sbuf.size = out - (unsigned char *)wk->sbuf.data;
		zsize = worker__compress(wk);
	}
	t1 = now_ns();

	wait_for_turn(enc, w->seq);
	worker__write(wk, zsize);
	st.t = now_ns();
	st.encode_ns = t1 - t0;
	st.write_ns = st.t - t1;
	st.msgpack_bytes = wk->sbuf.size;
	st.zstd_bytes = zsize;
	if (enc->opts.on_window)
		enc->opts.on_window(&st, enc->opts.on_window_arg);
	release_window(enc, w);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct window *w;
	uint64_t wait_ns;

	name_thread("encode");
	while ((w = take_filled(wk->enc, &wait_ns)))
		encode_window(wk, w, wait_ns);
	return NULL;
}

static unsigned int default_threads(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	/* leave a core to the pollers and the workload on small machines */
	return cpus >= 4 ? 2 : 1;
}

/* the artifact starts with the header that says it is memtrack's */
static void write_header(struct encoder *enc)
{
	unsigned char hdr[ARTIFACT_HEADER_SIZE];
	size_t len = artifact__header(hdr);

	enc->error = write_all(enc->opts.fd, hdr, len);
	if (!enc->error)
		enc->bytes_written = len;
}

struct encoder *encoder__new(const struct encoder_opts *opts)
{
	struct encoder *enc = calloc(1, sizeof(*enc));
	unsigned int i;

	if (!enc)
		return NULL;
	enc->opts = *opts;
	if (!enc->opts.threads)
		enc->opts.threads = default_threads();
	if (!enc->opts.window_events)
		enc->opts.window_events = DEFAULT_WINDOW_EVENTS;
	if (!enc->opts.level)
		enc->opts.level = DEFAULT_LEVEL;
	write_header(enc);
	pthread_mutex_init(&enc->lock, NULL);
	pthread_mutex_init(&enc->side_lock, NULL);
	msgpack_sbuffer_init(&enc->side_queue);
	pthread_cond_init(&enc->window_freed, NULL);
	pthread_cond_init(&enc->window_filled, NULL);
	pthread_cond_init(&enc->window_written, NULL);

	enc->nwindows = enc->opts.threads + SPARE_WINDOWS;
	enc->windows = calloc(enc->nwindows, sizeof(*enc->windows));
	enc->free_list = calloc(enc->nwindows, sizeof(*enc->free_list));
	enc->filled = calloc(enc->nwindows, sizeof(*enc->filled));
	enc->workers = calloc(enc->opts.threads, sizeof(*enc->workers));
	if (!enc->windows || !enc->free_list || !enc->filled || !enc->workers)
		goto fail;
	for (i = 0; i < enc->nwindows; i++) {
		enc->windows[i].ev = malloc(enc->opts.window_events *
					    sizeof(struct mt_alloc_event));
		if (!enc->windows[i].ev)
			goto fail;
		enc->free_list[enc->nfree++] = &enc->windows[i];
	}
	if (worker__init(&enc->tail, enc) ||
	    worker__init(&enc->side, enc))
		goto fail;
	for (i = 0; i < enc->opts.threads; i++) {
		struct worker *wk = &enc->workers[i];

		if (worker__init(wk, enc))
			goto fail;
		if (pthread_create(&wk->thread, NULL, worker_main, wk)) {
			worker__exit(wk);
			goto fail;
		}
		enc->nworkers++;
	}
	return enc;
fail:
	encoder__delete(enc);
	return NULL;
}

static struct window *take_free_window(struct encoder *enc)
{
	struct window *w;

	pthread_mutex_lock(&enc->lock);
	while (!enc->nfree)
		pthread_cond_wait(&enc->window_freed, &enc->lock);
	w = enc->free_list[--enc->nfree];
	pthread_mutex_unlock(&enc->lock);
	w->n = 0;
	w->opened_ns = now_ns();
	return w;
}

static void hand_over(struct encoder *enc)
{
	struct window *w = enc->cur;

	enc->cur = NULL;
	pthread_mutex_lock(&enc->lock);
	w->seq = enc->next_seq++;
	enc->filled[(enc->filled_head + enc->nfilled) % enc->nwindows] = w;
	enc->nfilled++;
	pthread_cond_signal(&enc->window_filled);
	pthread_mutex_unlock(&enc->lock);
}

int encoder__add(struct encoder *enc, const struct mt_alloc_event *e)
{
	if (!enc->cur)
		enc->cur = take_free_window(enc);
	/*
	 * The worker on the other core read this window last: a store that
	 * waits for its line holds up the merge behind it, 50 ns an event.
	 */
	prefetch_for_write((const void *)((uintptr_t)&enc->cur->ev[enc->cur->n] +
					  PREFETCH_EVENTS * sizeof(*e)));
	enc->cur->ev[enc->cur->n++] = *e;
	/* one writer: a plain add, not a locked one per event */
	atomic_store_explicit(&enc->events_in,
			      atomic_load_explicit(&enc->events_in, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	if (enc->cur->n == enc->opts.window_events)
		hand_over(enc);
	return enc->error;
}

int encoder__flush_older(struct encoder *enc, uint64_t max_age_ns)
{
	if (enc->cur && enc->cur->n && now_ns() - enc->cur->opened_ns >= max_age_ns)
		hand_over(enc);
	return enc->error;
}

static void join_workers(struct encoder *enc)
{
	unsigned int i;

	pthread_mutex_lock(&enc->lock);
	enc->closing = true;
	pthread_cond_broadcast(&enc->window_filled);
	pthread_mutex_unlock(&enc->lock);
	for (i = 0; i < enc->nworkers; i++) {
		pthread_join(enc->workers[i].thread, NULL);
		worker__exit(&enc->workers[i]);
	}
	enc->nworkers = 0;
}

int encoder__drain(struct encoder *enc)
{
	if (enc->cur && enc->cur->n)
		hand_over(enc);
	join_workers(enc);
	return enc->error;
}

int encoder__append_frame(struct encoder *enc, const void *z, size_t zsize)
{
	return write_frame(enc, z, zsize);
}

int encoder__append_records(struct encoder *enc, encoder_pack_fn *pack, void *arg)
{
	struct worker *w = &enc->tail;
	msgpack_packer pk;

	msgpack_sbuffer_clear(&w->sbuf);
	msgpack_packer_init(&pk, &w->sbuf, msgpack_sbuffer_write);
	pack(&pk, arg);
	if (!w->sbuf.size)
		return enc->error;
	return worker__write(w, worker__compress(w));
}

/* the skippable frame's header around zsize bytes of compressed records */
static void side_frame_header(unsigned char hdr[8], size_t zsize)
{
	hdr[0] = ARTIFACT_SIDE_MAGIC & 0xff;
	hdr[1] = ARTIFACT_SIDE_MAGIC >> 8 & 0xff;
	hdr[2] = ARTIFACT_SIDE_MAGIC >> 16 & 0xff;
	hdr[3] = ARTIFACT_SIDE_MAGIC >> 24;
	hdr[4] = zsize & 0xff;
	hdr[5] = zsize >> 8 & 0xff;
	hdr[6] = zsize >> 16 & 0xff;
	hdr[7] = zsize >> 24 & 0xff;
}

/*
 * The side frame in w->zbuf: written now when no window holds or awaits
 * the writing turn, else queued for the writer of the last window handed
 * over.
 */
static int put_side_frame(struct worker *w, size_t zsize)
{
	struct encoder *enc = w->enc;
	unsigned char hdr[8];
	int err = 0;

	if (!zsize)
		return -ENOMEM;
	side_frame_header(hdr, zsize);
	pthread_mutex_lock(&enc->lock);
	if (enc->next_write != enc->next_seq) {
		if (msgpack_sbuffer_write(&enc->side_queue, (const char *)hdr, sizeof(hdr)) ||
		    msgpack_sbuffer_write(&enc->side_queue, w->zbuf, zsize))
			err = -ENOMEM;
		enc->side_queue_after = enc->next_seq - 1;
		pthread_mutex_unlock(&enc->lock);
		return err;
	}
	enc->next_seq++;	/* the turn is this frame's: a window handed over now waits */
	pthread_mutex_unlock(&enc->lock);
	err = enc->error;
	if (!err)
		err = write_all(enc->opts.fd, hdr, sizeof(hdr));
	if (!err)
		enc->bytes_written += sizeof(hdr);
	else if (!enc->error)
		enc->error = err;
	if (!err)
		err = worker__write(w, zsize);
	end_turn(enc);
	return err;
}

int encoder__add_side(struct encoder *enc, void (*pack)(msgpack_packer *pk, void *arg),
		      void *arg)
{
	struct worker *w = &enc->side;
	msgpack_packer pk;
	int err = 0;

	pthread_mutex_lock(&enc->side_lock);
	msgpack_sbuffer_clear(&w->sbuf);
	msgpack_packer_init(&pk, &w->sbuf, msgpack_sbuffer_write);
	pack(&pk, arg);
	if (w->sbuf.size)
		err = put_side_frame(w, worker__compress(w));
	pthread_mutex_unlock(&enc->side_lock);
	return err;
}

uint64_t encoder__events_in(struct encoder *enc)
{
	return enc->events_in;
}

uint64_t encoder__events_out(struct encoder *enc)
{
	return enc->events_out;
}

uint64_t encoder__bytes_written(struct encoder *enc)
{
	return enc->bytes_written;
}

void encoder__delete(struct encoder *enc)
{
	unsigned int i;

	if (!enc)
		return;
	join_workers(enc);
	if (enc->tail.cctx)
		worker__exit(&enc->tail);
	if (enc->side.cctx)
		worker__exit(&enc->side);
	pthread_mutex_destroy(&enc->side_lock);
	msgpack_sbuffer_destroy(&enc->side_queue);
	for (i = 0; enc->windows && i < enc->nwindows; i++)
		free(enc->windows[i].ev);
	free(enc->windows);
	free(enc->free_list);
	free(enc->filled);
	free(enc->workers);
	pthread_mutex_destroy(&enc->lock);
	pthread_cond_destroy(&enc->window_freed);
	pthread_cond_destroy(&enc->window_filled);
	pthread_cond_destroy(&enc->window_written);
	free(enc);
}
