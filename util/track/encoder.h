/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ENCODER_H
#define MEMTRACK_ENCODER_H

#include <linux/types.h>
#include <msgpack.h>
#include <zstd.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/artifact/artifact-format.h"
#include "bpf/memtrack.h"

/*
 * The artifact encoder: it writes the artifact's header, then events are
 * gathered into windows; each window is
 * msgpack-encoded and compressed into one zstd frame by a worker thread and
 * appended in order.  The number of windows is fixed, so a producer that
 * outruns the workers waits in encoder__add() (and the BPF rings fill).
 */
struct encoder;

struct encoder_window_stats {
	uint64_t t;		/* CLOCK_MONOTONIC ns at the end of the window */
	uint64_t events;
	uint64_t wait_ns;	/* the worker waiting for this window */
	uint64_t encode_ns;	/* msgpack and zstd */
	uint64_t write_ns;
	uint64_t msgpack_bytes;
	uint64_t zstd_bytes;
};

typedef void encoder_window_fn(const struct encoder_window_stats *w, void *arg);

struct encoder_opts {
	int fd;
	unsigned int threads;		/* workers; 0: default */
	unsigned int window_events;	/* events per window; 0: default */
	int level;			/* zstd level; 0: default */
	encoder_window_fn *on_window;	/* called in artifact order */
	void *on_window_arg;
	/* trades an event's stack reference for the id the artifact keeps; may wait */
	uint64_t (*stack_id)(void *arg, uint64_t ref);
	void *stack_id_arg;
};

struct encoder *encoder__new(const struct encoder_opts *opts);
/* appends one event; may wait for a free window */
int encoder__add(struct encoder *enc, const struct mt_alloc_event *e);
/* hands over the current window if it holds events older than max_age_ns */
int encoder__flush_older(struct encoder *enc, uint64_t max_age_ns);
/* waits for every window to be written; no more events after this */
int encoder__drain(struct encoder *enc);
typedef void encoder_pack_fn(msgpack_packer *pk, void *arg);
/* a compressor set as the encoder's own: level, checksum; NULL when out of memory */
ZSTD_CCtx *encoder__new_cctx(const struct encoder *enc);
/* appends a zstd frame compressed elsewhere (encoder__new_cctx()); after encoder__drain() */
int encoder__append_frame(struct encoder *enc, const void *z, size_t zsize);

/* appends a frame of the records pack() builds; after encoder__drain() */
int encoder__append_records(struct encoder *enc, encoder_pack_fn *pack, void *arg);
/*
 * Appends records built by pack() as side records (a skippable frame, see
 * artifact-format.h), in order after the windows handed over so far; from
 * any thread, until encoder__drain().
 */
int encoder__add_side(struct encoder *enc, void (*pack)(msgpack_packer *pk, void *arg),
		      void *arg);
uint64_t encoder__events_in(struct encoder *enc);	/* taken by encoder__add */
uint64_t encoder__events_out(struct encoder *enc);	/* taken by a worker */
uint64_t encoder__bytes_written(struct encoder *enc);
void encoder__delete(struct encoder *enc);

/* the most bytes one event takes as msgpack */
#define ALLOC_EVENT_MAX_BYTES	128
/* encodes one event as the artifact's msgpack map */
size_t encode_alloc_event(unsigned char *buf, const struct mt_alloc_event *e);
void pack_alloc_event(msgpack_packer *pk, const struct mt_alloc_event *e);

#endif
