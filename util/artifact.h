/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ARTIFACT_H
#define MEMTRACK_ARTIFACT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"

/*
 * The artifact reader: a zstd stream (any number of frames) whose content is
 * a sequence of msgpack maps, each with a string key "type".  Records come
 * out one at a time; memory stays bounded whatever the artifact's length
 * (the buffers only grow to hold the largest single record, at most
 * ARTIFACT_MAX_RECORD bytes).  Unknown record types and unknown keys are
 * skipped.  Works for memtrack's artifacts and for CodSpeed's (events only,
 * no trailer).
 *
 * Its layers, each in a file of its own: util/zstd-reader.c (the file as a
 * stream of decompressed bytes, on a thread of its own), util/msgpack-pull.c
 * (msgpack tokens), util/artifact.c (records, errors).
 */

#define ARTIFACT_MAX_RECORD	(16u << 20)

enum artifact_type {
	ARTIFACT_EVENT = 1,	/* an allocation event: see .kind */
	ARTIFACT_META,
	ARTIFACT_PROCESS,
	ARTIFACT_FRAME,
	ARTIFACT_STACK,
};

/* one bit per key; artifact_record.has tells which keys were present */
enum artifact_field {
	AF_PID,
	AF_TID,
	AF_TIMESTAMP,
	AF_ADDR,
	AF_SIZE,
	AF_OLD_ADDR,
	AF_STACK,
	AF_PPID,
	AF_COMM,
	AF_EXE,
	AF_START,
	AF_END,
	AF_EXIT,
	AF_EXIT_CODE,
	AF_FORMAT,
	AF_TOOL,
	AF_VERSION,
	AF_COMMAND,
	AF_ROOT_PID,
	AF_DROPS,
	AF_ID,
	AF_IP,
	AF_MODULE,
	AF_SYMBOL,
	AF_OFFSET,
	AF_FILE,
	AF_LINE,
	AF_FRAMES,
	AF_ATTACHED,
	AF_MAX,
};

#define AR_HAS(f)	(1u << (f))

/*
 * A record as read.  Fields whose key was absent (or had a value of the
 * wrong type) are zero, and their AR_HAS() bit is clear.  Strings and the
 * frames array belong to the reader and stay valid until the next
 * artifact__next() call.
 */
struct artifact_record {
	enum artifact_type type;
	enum mt_kind kind;		/* ARTIFACT_EVENT: MT_MALLOC .. MT_BRK */
	uint32_t has;			/* AR_HAS(AF_*) */

	/* events */
	int32_t pid;			/* also Process */
	int32_t tid;
	uint64_t timestamp;
	uint64_t addr;
	uint64_t size;
	uint64_t old_addr;		/* Realloc: the pointer passed in */
	uint64_t stack;			/* id of a Stack record */

	/* Process and Meta */
	int32_t ppid;
	int32_t root_pid;
	int32_t exit_code;		/* a wait status: code << 8 | signal */
	uint64_t start, end, exit;
	const char *comm, *exe;
	uint32_t format;
	const char *tool, *version, *command;
	uint64_t drops_events;		/* drops: {"events": N} */
	uint64_t drops_total;		/* the sum of every drop count */
	bool attached;			/* Meta: the run attached to running processes */

	/* Frame and Stack */
	uint64_t id, ip, offset;
	uint32_t line;
	const char *module, *symbol, *file;
	const uint64_t *frames;		/* innermost first */
	uint32_t nr_frames;
};

struct artifact;

/* 0 or -errno; on success *ap is the reader */
int artifact__open(const char *path, struct artifact **ap);
/* reads from fd, which stays the caller's; name is used in messages */
int artifact__open_fd(int fd, const char *name, struct artifact **ap);
void artifact__close(struct artifact *a);

/*
 * 1 and *recp set: a record; 0: the end of a complete artifact; negative
 * errno: the artifact is truncated or corrupt (-EBADMSG) or could not be
 * read (-EIO...), see artifact__strerror().  After an error every call
 * returns the same error.
 */
int artifact__next(struct artifact *a, const struct artifact_record **recp);

/* why the last call failed ("" when it did not) */
const char *artifact__strerror(const struct artifact *a);
/* where: the offset in the compressed file of the frame that broke */
uint64_t artifact__error_offset(const struct artifact *a);
/* complete records read so far, skipped unknown ones included */
uint64_t artifact__records(const struct artifact *a);
/* records skipped because their type was unknown or missing */
uint64_t artifact__skipped(const struct artifact *a);
/* compressed bytes consumed so far, and the file's size (0 if unknown) */
uint64_t artifact__offset(const struct artifact *a);
uint64_t artifact__size(const struct artifact *a);
const char *artifact__name(const struct artifact *a);

/* "Malloc", "Meta"...: the artifact's name of a record's type */
const char *artifact_record__type_name(const struct artifact_record *rec);
/* the kind of an artifact event type name, 0 when not an event */
enum mt_kind artifact__kind_from_name(const char *name, uint32_t len);
const char *artifact__kind_name(enum mt_kind kind);

#endif
