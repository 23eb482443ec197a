/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ARTIFACT_H
#define MEMTRACK_ARTIFACT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/artifact/artifact-format.h"

/*
 * The artifact reader: a zstd stream (any number of frames) whose content is
 * a sequence of msgpack maps, each with a string key "type".  Records come
 * out one at a time; memory stays bounded whatever the artifact's length
 * (the buffers only grow to hold the largest single record, at most
 * ARTIFACT_MAX_RECORD bytes).  Unknown record types and unknown keys are
 * skipped.  Works for memtrack's artifacts and for CodSpeed's (events only,
 * no trailer).
 *
 * Its layers, each in a file of its own: util/artifact/zstd-reader.c (the file as a
 * stream of decompressed bytes, on a thread of its own), util/artifact/msgpack-pull.c
 * (msgpack tokens), util/artifact/artifact-schema.c (tokens into records, by the
 * tables of util/artifact/artifact-format.h), util/artifact/artifact.c (this API, errors).
 */

#define ARTIFACT_MAX_RECORD	(16u << 20)

struct artifact;

/* 0 or -errno; on success *ap is the reader */
int artifact__open(const char *path, struct artifact **ap);
/*
 * The newest artifact of a directory (a track -o <dir>): its regular file
 * ending in .msgpack modified last (of two, the name that sorts last), as
 * a path *out (malloc'd).  0; -ENOENT when it has none, -errno.
 */
int artifact__newest_in(const char *dir, char **out);
/* reads from fd, which stays the caller's; name is used in messages */
int artifact__open_fd(int fd, const char *name, struct artifact **ap);
void artifact__close(struct artifact *a);
/*
 * A reader of the last zstd frame of the file at path, where memtrack writes
 * its trailer (which starts with Meta): the frames before it are skipped
 * without being decompressed.  0 or -errno: -ESPIPE not a regular file,
 * -ENOMSG no complete frame at the end (a cut or corrupt file).
 */
int artifact__open_trailer(const char *path, struct artifact **ap);

/*
 * 1 and *recp set: a record; 0: the end of a complete artifact; negative
 * errno, see artifact__strerror():
 *   -EBADMSG          truncated (a frame cut short, or memtrack's trailer
 *                     missing) or corrupt, at artifact__error_offset()
 *   -ENOMSG           not an artifact: empty, not zstd, not msgpack maps
 *   -EPROTONOSUPPORT  of a newer artifact format (header or Meta)
 *   -EIO...           the file could not be read
 * After an error every call returns the same error.
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

#endif
