/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ARTIFACT_SCHEMA_H
#define MEMTRACK_ARTIFACT_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/artifact/artifact-format.h"
#include "util/artifact/msgpack-pull.h"

/*
 * The record decoder of the artifact reader: one msgpack map at a time into
 * a struct artifact_record, by the tables of artifact-format.h.  Records of
 * unknown type and unknown keys are skipped, as are values of another type
 * than the table's.  The strings and the frames of a record are kept here
 * until the next record.
 */
struct record_decoder {
	char *strings;		/* the current record's strings */
	size_t strings_cap, strings_len;
	uint64_t *ids;		/* the current record's "frames" */
	size_t ids_cap;
	/* a record whose fields are all zero but an event's, or NULL */
	const struct artifact_record *clean;
	const char *bad;	/* why MP_BAD: what was wrong, */
	unsigned char bad_byte;	/* and the byte it was wrong at */
};

/* what record_decoder__read() returns besides 0, MP_MORE and MP_BAD */
#define RECORD_SKIPPED	3	/* a whole record of unknown type */

void record_decoder__init(struct record_decoder *d);
void record_decoder__exit(struct record_decoder *d);
/* string space for records of up to size bytes: 0 or -ENOMEM */
int record_decoder__reserve(struct record_decoder *d, size_t size);
/*
 * Decodes the record at c into rec and moves c past it: 0, RECORD_SKIPPED,
 * MP_MORE (the bytes end inside it) or MP_BAD (why in d->bad).  The
 * bytes at c are no more than the string space reserved.
 */
int record_decoder__read(struct record_decoder *d, struct mp_cursor *c,
			 struct artifact_record *rec);

#endif
