/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STATS_FORMAT_H
#define MEMTRACK_STATS_FORMAT_H

/*
 * The pipeline stats file, in one place (memtrack-stats(1), FILE FORMAT): one
 * JSON object per line, key "k" first, then the keys of its kind in the
 * order below.  util/track/pipeline-stats.c writes rows from this table and
 * util/stats/stats-read.c reads them from it; tests/unit/test-stats-format.c
 * checks both against the list of keys it keeps.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(enum suffix, name) */
#define STATS_KINDS(X)				\
	X(RING_OPEN, "ring_open")		\
	X(RING, "ring")				\
	X(PRESSURE, "pressure")			\
	X(BACKLOG, "backlog")			\
	X(RESOLVE, "resolve")			\
	X(ENCODE, "encode")

/* X(enum suffix, name, type) */
#define STATS_KEYS(X)				\
	X(T, "t", U64)				\
	X(RING, "ring", STRING)			\
	X(SIZE, "size", U64)			\
	X(WATERMARK, "watermark", U64)		\
	X(T0, "t0", U64)			\
	X(PROD0, "prod0", U64)			\
	X(CONS0, "cons0", U64)			\
	X(T1, "t1", U64)			\
	X(PROD1, "prod1", U64)			\
	X(CONS1, "cons1", U64)			\
	X(PEAK, "peak", U64)			\
	X(PIDS, "pids", PAUSES)			\
	X(FROZEN, "frozen", U64)		\
	X(SENT, "sent", U64)			\
	X(RECEIVED, "received", U64)		\
	X(RSS, "rss", U64)			\
	X(N, "n", U64)				\
	X(EVENTS, "events", U64)		\
	X(WAIT_NS, "wait_ns", U64)		\
	X(ENCODE_NS, "encode_ns", U64)		\
	X(WRITE_NS, "write_ns", U64)		\
	X(MSGPACK_BYTES, "msgpack_bytes", U64)	\
	X(ZSTD_BYTES, "zstd_bytes", U64)

#define STATS_KIND_ENUM(e, name)	STATS_KIND_##e,
enum stats_kind {
	STATS_KINDS(STATS_KIND_ENUM)
	STATS_KIND_MAX,
};

#define STATS_KEY_ENUM(e, name, type)	STATS_KEY_##e,
enum stats_key {
	STATS_KEYS(STATS_KEY_ENUM)
	STATS_KEY_MAX,
};

enum stats_type {
	STATS_U64,
	STATS_STRING,		/* "ring" */
	STATS_PAUSES,		/* "pids": [[pid, stopped_at], ...] */
};

extern const char *const stats_kind_names[STATS_KIND_MAX];
extern const char *const stats_key_names[STATS_KEY_MAX];
extern const enum stats_type stats_key_types[STATS_KEY_MAX];

#define STATS_MAX_FIELDS	8

/*
 * A kind's keys, in the order written.  The reader takes an optional key
 * as absent when it is missing: CodSpeed's memtrack writes no "peak",
 * "watermark" or "rss", and files of older versions of ours lack others.
 */
struct stats_field {
	enum stats_key key;
	bool optional;
};

struct stats_row_format {
	struct stats_field fields[STATS_MAX_FIELDS];
	unsigned int nr;
};

extern const struct stats_row_format stats_row_formats[STATS_KIND_MAX];

struct stats_pause {
	int pid;
	uint64_t stopped_at;
};

/* the values of one row, by key; has has bit 1 << key for those present */
struct stats_values {
	uint64_t u[STATS_KEY_MAX];
	uint32_t has;
	const char *ring;
	const struct stats_pause *pauses;
	size_t nr_pauses;
};

#define STATS_HAS(key)	(1u << STATS_KEY_##key)

#endif
