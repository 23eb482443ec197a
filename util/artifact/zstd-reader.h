/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ZSTD_READER_H
#define MEMTRACK_ZSTD_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

/*
 * A file of concatenated zstd frames read as one stream of decompressed
 * bytes:
 *
 *   file --read()--> in[] --ZSTD_decompressStream--> out[] --> the caller
 *
 * The caller consumes out[] from the front (out_pos) and calls
 * zstd_reader__fill() for more.  For a regular file the first two steps run
 * on a thread of its own (see struct chunk in zstd-reader.c), a few chunks
 * ahead; errors and offsets read the same either way.
 */
struct zstd_decompressor;

struct zstd_reader {
	/* decompressed: out[out_pos, out_len) not consumed yet; out[0] is byte out_base */
	unsigned char *out;
	size_t out_cap, out_pos, out_len;
	uint64_t out_base;
	size_t max_cap;		/* out[] grows to this, then fill() fails with -E2BIG */

	/* compressed: in[0] is byte in_base of the file */
	int fd;
	ZSTD_DStream *zds;
	unsigned char *in;
	size_t in_cap;
	ZSTD_inBuffer zin;
	uint64_t in_base;
	bool eof;
	bool in_frame;		/* a frame has started and not ended */
	uint64_t frame_start;	/* file offset of the frame being decoded */
	uint64_t data_frame;	/* file offset of the frame of the last output */

	struct zstd_decompressor *dec;	/* NULL: fill() decompresses */

	/* the skippable frame the file starts with, if any: its magic and payload */
	uint32_t lead_magic;
	unsigned char lead[16];
	size_t lead_len;

	/* after an error: why, and the file offset of the frame that broke */
	uint64_t error_offset;
	char reason[256];
};

/* 0 or -ENOMEM; the fd stays the caller's */
int zstd_reader__init(struct zstd_reader *z, int fd, size_t cap, size_t max_cap);
/*
 * Reads the first bytes of the file, and the skippable frame they start
 * with (lead_magic, lead): writers put there what the file is.  0 or -errno.
 */
int zstd_reader__peek(struct zstd_reader *z);
/* decompresses on a thread from now on; without one, fill() does */
void zstd_reader__start_thread(struct zstd_reader *z);
void zstd_reader__exit(struct zstd_reader *z);

/*
 * Moves the bytes not consumed to the front of out[] (growing it when it is
 * full) and adds more: > 0 more bytes, 0 the end of the file, or an error:
 * -EBADMSG (corrupt), -ENOMSG (a frame that is not zstd), -E2BIG (out[] at
 * max_cap and full), -ENOMEM, or -errno of a read.
 */
int zstd_reader__fill(struct zstd_reader *z);

/* compressed bytes consumed */
static inline uint64_t zstd_reader__offset(const struct zstd_reader *z)
{
	return z->in_base + z->zin.pos;
}

#endif
