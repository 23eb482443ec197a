/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ARTIFACT_FORMAT_H
#define MEMTRACK_ARTIFACT_FORMAT_H

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/memtrack.h"

/*
 * The artifact format in one place (Documentation/technical/design.md, 10): every
 * record type and every key, with its msgpack type.  Everything that writes,
 * reads or prints records works from these tables:
 *
 *   writers   util/track/encoder.c             events, straight as bytes (the hot path)
 *             util/artifact/artifact-write.c   the other records, from a struct
 *                                              artifact_record
 *             util/probe/proc-table.c          Process; util/track/session.c sets
 *                                              Meta's run keys
 *   reader    util/artifact/artifact-schema.c  msgpack maps -> struct artifact_record
 *   --dump    util/artifact/artifact-dump.c    struct artifact_record -> a JSON line
 *
 * tests/unit/test-artifact-format.c writes every key of every record type
 * with the writers and reads it back with the reader and the dump.
 *
 * Adding a key: one line in ARTIFACT_KEYS, and its writer sets the value with
 * artifact_record__set_<key>().  The record's field, the reader and the dump
 * come from the line.
 */

/* Meta "format": the major version; readers refuse a newer one */
#define ARTIFACT_FORMAT		1

/*
 * An artifact starts with a zstd skippable frame (zstd decoders, CodSpeed's
 * among them, skip it) that says whose it is: the magic, the length of the
 * payload (12), then ARTIFACT_TOOL and ARTIFACT_FORMAT, little-endian.  Without
 * it, an artifact whose trailer is missing would read as a complete one of
 * CodSpeed's.
 */
#define ARTIFACT_HEADER_MAGIC	0x184D2A5EU
#define ARTIFACT_HEADER_SIZE	(8 + sizeof(ARTIFACT_TOOL) - 1 + 4)

/* an artifact's file name: <root pid>.MemtrackArtifact.msgpack, or -o's */
#define ARTIFACT_FILE_EXT	".msgpack"
#define ARTIFACT_DEFAULT_SUFFIX	".MemtrackArtifact" ARTIFACT_FILE_EXT

/*
 * Side records: while a run goes on, the Frame and Stack records resolved so
 * far are written every second or so in skippable frames of this magic,
 * each holding one zstd frame of records.  Decoders of the stream (and
 * CodSpeed's) skip them; after a complete run the trailer has them all
 * again.  A run that was killed has no trailer: the reader then gives the
 * side records found, so that report still names the frames.
 */
#define ARTIFACT_SIDE_MAGIC	0x184D2A5FU

/* Meta "tool" of memtrack's artifacts, and the header's */
#define ARTIFACT_TOOL		"memtrack"

/* the allocation events: their mt_kind (bpf/memtrack.h) and type name */
#define ARTIFACT_EVENT_KINDS(X)			\
	X(MT_MALLOC,		Malloc)		\
	X(MT_CALLOC,		Calloc)		\
	X(MT_ALIGNED_ALLOC,	AlignedAlloc)	\
	X(MT_REALLOC,		Realloc)	\
	X(MT_FREE,		Free)		\
	X(MT_MMAP,		Mmap)		\
	X(MT_MUNMAP,		Munmap)		\
	X(MT_BRK,		Brk)

/* the other record types, in the trailer after the last event */
#define ARTIFACT_RECORD_TYPES(X)	\
	X(META,		Meta)		\
	X(PROCESS,	Process)	\
	X(FRAME,	Frame)		\
	X(STACK,	Stack)		\
	X(MODULE,	Module)

enum artifact_type {
	ARTIFACT_EVENT = 1,	/* an allocation event: see artifact_record.kind */
#define ARTIFACT_TYPE_ENUM(id, name)	ARTIFACT_##id,
	ARTIFACT_RECORD_TYPES(ARTIFACT_TYPE_ENUM)
#undef ARTIFACT_TYPE_ENUM
	ARTIFACT_TYPE_MAX,
};

/* the key every record has: its type name */
#define ARTIFACT_TYPE_KEY	"type"

/* the records that carry a key */
#define AR_IN(type)	(1u << ARTIFACT_##type)

/*
 * The msgpack type of a key's value, and the C type of its field:
 *   I32   int32_t      any msgpack integer that fits
 *   U32   uint32_t     an unsigned one that fits
 *   U64   uint64_t     an unsigned one
 *   STR   const char * a string
 *   BOOL  bool
 *   DROPS struct artifact_drops   a map of counts: {"events": N, "stacks": N}
 *   IDS   struct artifact_ids     an array of unsigned integers (ids, times); a
 *                                 record has one key of this type at most
 *                                 (the reader keeps one array per record)
 */
#define AT_CTYPE_I32	int32_t
#define AT_CTYPE_U32	uint32_t
#define AT_CTYPE_U64	uint64_t
#define AT_CTYPE_STR	const char *
#define AT_CTYPE_BOOL	bool
#define AT_CTYPE_DROPS	struct artifact_drops
#define AT_CTYPE_IDS	struct artifact_ids

/*
 * Every key: AK_<ID>, the key (also its field in struct artifact_record),
 * its type, the records that carry it.  "type" is not here: every record
 * has it.  The order is the order of --dump and of the packed maps.
 * Events have no "size" when Free, "old_addr" only when Realloc, "stack"
 * only with call stacks, "freeres" (true) only on a Free that glibc's
 * __libc_freeres() made at the process's exit; Frame's "symbol", "file" and "line" are there when
 * known, "inlined" (true) for a function inlined at ip, whose frame comes
 * before its caller's; Process's "backend" is "preload" or "bpf" (with "bpf_why", a word or two), its
 * "execs" the times of its execs, in order (the heap of the image before
 * each is gone with its address space), "pymalloc_off" (true) when its
 * shim saw PYTHONMALLOC=malloc or malloc_debug in its environment (Python's
 * small objects are then malloc's, not pymalloc's).  A Module record says where a
 * module of the Frame records was mapped, in the first process seen to map it:
 * its code mapping [start, end) at file offset "offset", and its GNU build id
 * ("build_id", hex) when it has one; the "ip" of its frames is in that mapping.
 */
#define ARTIFACT_KEYS(X)						\
	X(PID,		pid,		I32,	AR_IN(EVENT) | AR_IN(PROCESS) | AR_IN(STACK)) \
	X(TID,		tid,		I32,	AR_IN(EVENT))			\
	X(TIMESTAMP,	timestamp,	U64,	AR_IN(EVENT))			\
	X(ADDR,		addr,		U64,	AR_IN(EVENT))			\
	X(SIZE,		size,		U64,	AR_IN(EVENT))			\
	X(OLD_ADDR,	old_addr,	U64,	AR_IN(EVENT))			\
	X(STACK,	stack,		U64,	AR_IN(EVENT))			\
	X(FREERES,	freeres,	BOOL,	AR_IN(EVENT))			\
	X(PPID,		ppid,		I32,	AR_IN(PROCESS))			\
	X(COMM,		comm,		STR,	AR_IN(PROCESS))			\
	X(EXE,		exe,		STR,	AR_IN(PROCESS))			\
	X(FORMAT,	format,		U32,	AR_IN(META))			\
	X(TOOL,		tool,		STR,	AR_IN(META))			\
	X(VERSION,	version,	STR,	AR_IN(META))			\
	X(COMMAND,	command,	STR,	AR_IN(META))			\
	X(ROOT_PID,	root_pid,	I32,	AR_IN(META))			\
	X(START,	start,		U64,	AR_IN(META) | AR_IN(PROCESS) | AR_IN(MODULE)) \
	X(END,		end,		U64,	AR_IN(META) | AR_IN(MODULE))	\
	X(EXIT,		exit,		U64,	AR_IN(PROCESS))			\
	X(DROPS,	drops,		DROPS,	AR_IN(META))			\
	X(EXIT_CODE,	exit_code,	I32,	AR_IN(META) | AR_IN(PROCESS))	\
	X(BACKEND,	backend,	STR,	AR_IN(PROCESS))			\
	X(BPF_WHY,	bpf_why,	STR,	AR_IN(PROCESS))			\
	X(EXECS,	execs,		IDS,	AR_IN(PROCESS))			\
	X(PYMALLOC_OFF,	pymalloc_off,	BOOL,	AR_IN(PROCESS))			\
	X(ATTACHED,	attached,	BOOL,	AR_IN(META))			\
	X(RUNNING,	running,	U32,	AR_IN(META))			\
	X(DETACHED,	detached,	BOOL,	AR_IN(META))			\
	X(BLIND,	blind,		U32,	AR_IN(META))			\
	X(ID,		id,		U64,	AR_IN(FRAME) | AR_IN(STACK))	\
	X(IP,		ip,		U64,	AR_IN(FRAME))			\
	X(MODULE,	module,		STR,	AR_IN(FRAME) | AR_IN(MODULE))	\
	X(SYMBOL,	symbol,		STR,	AR_IN(FRAME))			\
	X(OFFSET,	offset,		U64,	AR_IN(FRAME) | AR_IN(MODULE))	\
	X(FILE,		file,		STR,	AR_IN(FRAME))			\
	X(LINE,		line,		U32,	AR_IN(FRAME))			\
	X(INLINED,	inlined,	BOOL,	AR_IN(FRAME))			\
	X(FRAMES,	frames,		IDS,	AR_IN(STACK))			\
	X(BUILD_ID,	build_id,	STR,	AR_IN(MODULE))

enum artifact_field {
#define ARTIFACT_FIELD_ENUM(id, key, type, in)	AK_##id,
	ARTIFACT_KEYS(ARTIFACT_FIELD_ENUM)
#undef ARTIFACT_FIELD_ENUM
	AK_MAX,
};

enum artifact_value_type {
	AT_I32, AT_U32, AT_U64, AT_STR, AT_BOOL, AT_DROPS, AT_IDS,
};

/* Meta "drops": events and stacks lost, and the sum of any other count */
#define ARTIFACT_DROPS_EVENTS	"events"
#define ARTIFACT_DROPS_STACKS	"stacks"

struct artifact_drops {
	uint64_t events, stacks, other;
};

/* Stack "frames": frame ids, innermost first */
struct artifact_ids {
	const uint64_t *v;
	uint32_t n;
};

#define AR_HAS(f)	(1ULL << (f))

/*
 * A record: its type, which keys it had (AR_HAS(AK_*) bits of .has) and a
 * field per key, named as the key (0 when absent).  As read, strings and
 * the frames belong to the reader and stay valid until the next
 * artifact__next() call; to write, a writer points them at its own.
 */
struct artifact_record {
	enum artifact_type type;
	enum mt_kind kind;		/* ARTIFACT_EVENT: MT_MALLOC .. MT_BRK */
	uint64_t has;
#define ARTIFACT_FIELD(id, key, type, in)	AT_CTYPE_##type key;
	ARTIFACT_KEYS(ARTIFACT_FIELD)
#undef ARTIFACT_FIELD
};

_Static_assert(AK_MAX <= 64, "artifact_record.has has a bit per key");

/* what the tables say of a key; artifact_keys[AK_*] */
struct artifact_key {
	const char *name;
	unsigned char len;
	enum artifact_value_type type;
	uint32_t in;			/* AR_IN() of the records that carry it */
	size_t offset;			/* of its field in struct artifact_record */
};

static const struct artifact_key artifact_keys[AK_MAX] = {
#define ARTIFACT_KEY_ROW(id, key, t, records)					\
	[AK_##id] = { #key, sizeof(#key) - 1, AT_##t, records,		\
		      offsetof(struct artifact_record, key) },
	ARTIFACT_KEYS(ARTIFACT_KEY_ROW)
#undef ARTIFACT_KEY_ROW
};

/* the type names of events by kind, and of the other records by type */
struct artifact_name {
	const char *s;
	unsigned char len;
};

static const struct artifact_name artifact_kind_names[MT_KIND_MAX] = {
#define ARTIFACT_KIND_ROW(kind, name)	[kind] = { #name, sizeof(#name) - 1 },
	ARTIFACT_EVENT_KINDS(ARTIFACT_KIND_ROW)
#undef ARTIFACT_KIND_ROW
};

static const struct artifact_name artifact_type_names[ARTIFACT_TYPE_MAX] = {
#define ARTIFACT_TYPE_ROW(id, name)	[ARTIFACT_##id] = { #name, sizeof(#name) - 1 },
	ARTIFACT_RECORD_TYPES(ARTIFACT_TYPE_ROW)
#undef ARTIFACT_TYPE_ROW
};

/* the writer's setters: artifact_record__set_pid(rec, 42) sets pid and its bit */
#define ARTIFACT_SETTER(id, key, type, in)				\
static inline void artifact_record__set_##key(struct artifact_record *r,	\
					      AT_CTYPE_##type v)	\
{									\
	r->key = v;							\
	r->has |= AR_HAS(AK_##id);					\
}
ARTIFACT_KEYS(ARTIFACT_SETTER)
#undef ARTIFACT_SETTER

/* ---- util/artifact/artifact-schema.c: names -------------------------------------- */

/* "Malloc", "Meta"...: the type name of a record; "?" for none */
const char *artifact_record__type_name(const struct artifact_record *rec);
/* the type name of an event kind, NULL for kinds that are not events */
const char *artifact__kind_name(enum mt_kind kind);

/* ---- util/artifact/artifact-write.c: the writer ---------------------------------- */

/* packs a string key, a string */
void pack_key(msgpack_packer *pk, const char *key);
void pack_str(msgpack_packer *pk, const char *s);
/* one map: "type", then every key rec has, in the table's order */
void artifact_record__pack(msgpack_packer *pk, const struct artifact_record *rec);
/* the Meta record: the run's keys set by the caller, with format and tool */
void artifact__pack_meta(msgpack_packer *pk, const struct artifact_record *run);

/* a Frame record; module, symbol and file are left out when NULL, inlined when false */
struct frame_record {
	uint64_t id, ip, offset;
	const char *module, *symbol, *file;
	uint32_t line;
	bool inlined;
};

void pack_frame_record(msgpack_packer *pk, const struct frame_record *f);
/* a Module record; build_id left out when NULL */
struct module_record {
	const char *module, *build_id;
	uint64_t start, end, offset;
};

void pack_module_record(msgpack_packer *pk, const struct module_record *m);
/* a Stack record: frame ids, innermost first */
void pack_stack_record(msgpack_packer *pk, uint64_t id, int32_t pid,
		       const uint64_t *frames, uint32_t nr);
/* the zstd frame an artifact begins with; returns its size */
size_t artifact__header(unsigned char buf[ARTIFACT_HEADER_SIZE]);

/* ---- util/artifact/artifact-dump.c: report --dump -------------------------------- */

/* the record as one JSON object and a newline, with the keys it had */
void artifact_record__dump(FILE *out, const struct artifact_record *rec);

#endif
