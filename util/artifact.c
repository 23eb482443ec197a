// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact reader.  Three layers:
 *
 *   file --read()--> in[] --ZSTD_decompressStream--> out[] --pull decoder--> record
 *
 * The first two run on a thread of their own when one can be started (see
 * struct chunk), which hands out[] the decompressed bytes a chunk at a time
 * with the decompressor's state after them, so that errors read the same.
 *
 * out[] holds decompressed bytes not yet turned into records.  A record cut
 * by the end of out[] is decoded again from its start once more bytes have
 * arrived, so the decoder needs no state between calls.  Nothing here
 * allocates by a length read from the file unless the bytes that length
 * promises are already in out[].
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "artifact.h"

#define OUT_INITIAL	(256u << 10)
#define CHUNK_SIZE	(128u << 10)	/* decompressed bytes per hand-over */
#define NR_CHUNKS	4

/* what the decoder returns besides 0 */
#define MP_MORE		1	/* the bytes end inside the value */
#define MP_BAD		2	/* not msgpack, or not our format */
#define MP_SKIPPED	3	/* a whole record of unknown type */

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

struct decompressor {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct artifact *z;	/* the thread's: fd, zstd and input state */
	struct chunk chunks[NR_CHUNKS];
	unsigned int head, tail;	/* filled: [head, tail), mod NR_CHUNKS */
	bool stop;
};

struct artifact {
	int fd;
	bool own_fd;
	char *name;
	uint64_t size;

	ZSTD_DStream *zds;
	unsigned char *in;
	size_t in_cap;
	ZSTD_inBuffer zin;
	uint64_t in_base;	/* file offset of in[0] */
	bool eof;
	bool in_frame;		/* a frame has started and not ended */
	uint64_t frame_start;	/* file offset of the frame being decoded */
	uint64_t data_frame;	/* file offset of the frame of the last output */

	unsigned char *out;
	size_t out_cap, out_pos, out_len;
	uint64_t out_base;	/* decompressed offset of out[0] */

	char *strings;		/* the current record's strings */
	size_t strings_cap, strings_len;
	uint64_t *frames;
	size_t frames_cap;

	struct decompressor *dec;	/* NULL: decompress in artifact__next() */

	struct artifact_record rec;
	bool rec_clean;		/* rec's fields but an event's are all zero */
	uint64_t records, skipped;
	int error;
	uint64_t error_offset;
	char reason[256];
};

/* ---- msgpack pull decoder ---------------------------------------------- */

enum mp_kind {
	MP_NIL,
	MP_BOOL,
	MP_UINT,
	MP_INT,		/* negative */
	MP_FLOAT,
	MP_STR,
	MP_BIN,
	MP_EXT,
	MP_ARRAY,
	MP_MAP,
};

struct mp_token {
	enum mp_kind kind;
	uint64_t u;		/* MP_UINT, MP_BOOL; MP_INT as two's complement */
	const unsigned char *ptr;	/* str, bin, ext payload */
	uint32_t len;		/* payload bytes, or array/map entries */
};

struct cursor {
	const unsigned char *p, *end;
};

static uint64_t load_be(const unsigned char *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* takes n bytes after the first one as a big-endian number */
static int take_be(struct cursor *c, unsigned int n, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < n)
		return MP_MORE;
	*v = load_be(c->p, n);
	c->p += n;
	return 0;
}

static int take_payload(struct cursor *c, struct mp_token *t, uint64_t len)
{
	if ((uint64_t)(c->end - c->p) < len)
		return MP_MORE;
	t->ptr = c->p;
	t->len = len;
	c->p += len;
	return 0;
}

static int take_sized(struct cursor *c, struct mp_token *t, enum mp_kind kind,
		      unsigned int len_bytes)
{
	uint64_t len;
	int err = take_be(c, len_bytes, &len);

	if (err)
		return err;
	t->kind = kind;
	if (kind == MP_ARRAY || kind == MP_MAP) {
		t->len = len;
		return 0;
	}
	return take_payload(c, t, len);
}

static int take_ext(struct cursor *c, struct mp_token *t, unsigned int len_bytes,
		    uint64_t fixed_len)
{
	uint64_t len = fixed_len;
	int err = len_bytes ? take_be(c, len_bytes, &len) : 0;

	if (err)
		return err;
	t->kind = MP_EXT;
	return take_payload(c, t, len + 1);	/* the ext type byte, then data */
}

static int take_number(struct cursor *c, struct mp_token *t, enum mp_kind kind,
		       unsigned int n)
{
	int err = take_be(c, n, &t->u);

	if (err)
		return err;
	t->kind = kind;
	if (kind == MP_INT && n < 8) {
		unsigned int shift = 64 - 8 * n;

		t->u = (uint64_t)((int64_t)(t->u << shift) >> shift);
	}
	/* a signed encoding of a non-negative number is still a number */
	if (kind == MP_INT && (int64_t)t->u >= 0)
		t->kind = MP_UINT;
	return 0;
}

/* reads one token: a scalar with its payload, or a container's header */
static int mp_next(struct cursor *c, struct mp_token *t)
{
	unsigned char b;

	if (c->p >= c->end)
		return MP_MORE;
	b = *c->p++;
	t->ptr = NULL;
	t->len = 0;
	if (b <= 0x7f || b >= 0xe0) {
		t->kind = b <= 0x7f ? MP_UINT : MP_INT;
		t->u = (uint64_t)(int64_t)(int8_t)b;
		return 0;
	}
	if (b <= 0x8f) {
		t->kind = MP_MAP;
		t->len = b & 0x0f;
		return 0;
	}
	if (b <= 0x9f) {
		t->kind = MP_ARRAY;
		t->len = b & 0x0f;
		return 0;
	}
	if (b <= 0xbf) {
		t->kind = MP_STR;
		return take_payload(c, t, b & 0x1f);
	}
	switch (b) {
	case 0xc0: t->kind = MP_NIL; return 0;
	case 0xc2: t->kind = MP_BOOL; t->u = 0; return 0;
	case 0xc3: t->kind = MP_BOOL; t->u = 1; return 0;
	case 0xc4: return take_sized(c, t, MP_BIN, 1);
	case 0xc5: return take_sized(c, t, MP_BIN, 2);
	case 0xc6: return take_sized(c, t, MP_BIN, 4);
	case 0xc7: return take_ext(c, t, 1, 0);
	case 0xc8: return take_ext(c, t, 2, 0);
	case 0xc9: return take_ext(c, t, 4, 0);
	case 0xca: return take_number(c, t, MP_FLOAT, 4);
	case 0xcb: return take_number(c, t, MP_FLOAT, 8);
	case 0xcc: return take_number(c, t, MP_UINT, 1);
	case 0xcd: return take_number(c, t, MP_UINT, 2);
	case 0xce: return take_number(c, t, MP_UINT, 4);
	case 0xcf: return take_number(c, t, MP_UINT, 8);
	case 0xd0: return take_number(c, t, MP_INT, 1);
	case 0xd1: return take_number(c, t, MP_INT, 2);
	case 0xd2: return take_number(c, t, MP_INT, 4);
	case 0xd3: return take_number(c, t, MP_INT, 8);
	case 0xd4: return take_ext(c, t, 0, 1);
	case 0xd5: return take_ext(c, t, 0, 2);
	case 0xd6: return take_ext(c, t, 0, 4);
	case 0xd7: return take_ext(c, t, 0, 8);
	case 0xd8: return take_ext(c, t, 0, 16);
	case 0xd9: return take_sized(c, t, MP_STR, 1);
	case 0xda: return take_sized(c, t, MP_STR, 2);
	case 0xdb: return take_sized(c, t, MP_STR, 4);
	case 0xdc: return take_sized(c, t, MP_ARRAY, 2);
	case 0xdd: return take_sized(c, t, MP_ARRAY, 4);
	case 0xde: return take_sized(c, t, MP_MAP, 2);
	case 0xdf: return take_sized(c, t, MP_MAP, 4);
	default: return MP_BAD;	/* 0xc1: never used */
	}
}

/* skips what follows a token already read: a container's entries */
static int mp_skip_rest(struct cursor *c, const struct mp_token *first)
{
	uint64_t pending;
	struct mp_token t;
	int err;

	if (first->kind == MP_ARRAY)
		pending = first->len;
	else if (first->kind == MP_MAP)
		pending = 2 * (uint64_t)first->len;
	else
		return 0;
	/* every value takes a byte at least, so this ends with the bytes */
	while (pending) {
		err = mp_next(c, &t);
		if (err)
			return err;
		pending--;
		if (t.kind == MP_ARRAY)
			pending += t.len;
		else if (t.kind == MP_MAP)
			pending += 2 * (uint64_t)t.len;
	}
	return 0;
}

/* ---- records ------------------------------------------------------------ */

struct name {
	const char *s;
	int value;
};

#define NAME(s, v)	{ s, v }

static const struct name type_names[] = {
	NAME("Malloc", MT_MALLOC),
	NAME("Calloc", MT_CALLOC),
	NAME("AlignedAlloc", MT_ALIGNED_ALLOC),
	NAME("Realloc", MT_REALLOC),
	NAME("Free", MT_FREE),
	NAME("Mmap", MT_MMAP),
	NAME("Munmap", MT_MUNMAP),
	NAME("Brk", MT_BRK),
	NAME("Meta", -ARTIFACT_META),
	NAME("Process", -ARTIFACT_PROCESS),
	NAME("Frame", -ARTIFACT_FRAME),
	NAME("Stack", -ARTIFACT_STACK),
};


#define FIELD_TYPE	(-1)
#define FIELD_UNKNOWN	(-2)


#define IS(lit)	(!memcmp(s, lit, sizeof(lit) - 1))

/* a key's field: a switch on the length, then fixed-size compares (hot) */
static int field_lookup(const unsigned char *s, uint32_t len)
{
	switch (len) {
	case 2:
		return IS("id") ? AF_ID : IS("ip") ? AF_IP : FIELD_UNKNOWN;
	case 3:
		return IS("pid") ? AF_PID : IS("tid") ? AF_TID : IS("exe") ? AF_EXE :
		       IS("end") ? AF_END : FIELD_UNKNOWN;
	case 4:
		return IS("type") ? FIELD_TYPE : IS("addr") ? AF_ADDR :
		       IS("size") ? AF_SIZE : IS("ppid") ? AF_PPID :
		       IS("comm") ? AF_COMM : IS("exit") ? AF_EXIT :
		       IS("tool") ? AF_TOOL : IS("file") ? AF_FILE :
		       IS("line") ? AF_LINE : FIELD_UNKNOWN;
	case 5:
		return IS("stack") ? AF_STACK : IS("start") ? AF_START :
		       IS("drops") ? AF_DROPS : FIELD_UNKNOWN;
	case 6:
		return IS("module") ? AF_MODULE : IS("symbol") ? AF_SYMBOL :
		       IS("offset") ? AF_OFFSET : IS("frames") ? AF_FRAMES :
		       IS("format") ? AF_FORMAT : FIELD_UNKNOWN;
	case 7:
		return IS("version") ? AF_VERSION : IS("command") ? AF_COMMAND :
		       IS("inlined") ? AF_INLINED : FIELD_UNKNOWN;
	case 8:
		return IS("old_addr") ? AF_OLD_ADDR : IS("root_pid") ? AF_ROOT_PID :
		       IS("attached") ? AF_ATTACHED : FIELD_UNKNOWN;
	case 9:
		return IS("timestamp") ? AF_TIMESTAMP : IS("exit_code") ? AF_EXIT_CODE :
		       FIELD_UNKNOWN;
	default:
		return FIELD_UNKNOWN;
	}
}

/* a type name: > 0 an event kind, < 0 minus a record type, 0 unknown */
static int type_lookup(const unsigned char *s, uint32_t len)
{
	switch (len) {
	case 3:
		return IS("Brk") ? MT_BRK : 0;
	case 4:
		return IS("Free") ? MT_FREE : IS("Mmap") ? MT_MMAP :
		       IS("Meta") ? -ARTIFACT_META : 0;
	case 5:
		return IS("Frame") ? -ARTIFACT_FRAME : IS("Stack") ? -ARTIFACT_STACK : 0;
	case 6:
		return IS("Malloc") ? MT_MALLOC : IS("Calloc") ? MT_CALLOC :
		       IS("Munmap") ? MT_MUNMAP : 0;
	case 7:
		return IS("Realloc") ? MT_REALLOC : IS("Process") ? -ARTIFACT_PROCESS : 0;
	case 12:
		return IS("AlignedAlloc") ? MT_ALIGNED_ALLOC : 0;
	default:
		return 0;
	}
}

#undef IS

enum mt_kind artifact__kind_from_name(const char *name, uint32_t len)
{
	int v = type_lookup((const unsigned char *)name, len);

	return v > 0 ? (enum mt_kind)v : 0;
}

const char *artifact__kind_name(enum mt_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].value == (int)kind)
			return type_names[i].s;
	return NULL;
}

const char *artifact_record__type_name(const struct artifact_record *rec)
{
	size_t i;
	int v = rec->type == ARTIFACT_EVENT ? (int)rec->kind : -(int)rec->type;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].value == v)
			return type_names[i].s;
	return "?";
}

static bool token_u64(const struct mp_token *t, uint64_t *v)
{
	if (t->kind != MP_UINT)
		return false;
	*v = t->u;
	return true;
}

static bool token_i32(const struct mp_token *t, int32_t *v)
{
	int64_t i = (int64_t)t->u;

	if (t->kind != MP_UINT && t->kind != MP_INT)
		return false;
	if ((t->kind == MP_UINT && t->u > INT32_MAX) || i < INT32_MIN)
		return false;
	*v = (int32_t)i;
	return true;
}

static bool token_bool(const struct mp_token *t, bool *v)
{
	if (t->kind != MP_BOOL)
		return false;
	*v = t->u;
	return true;
}

static bool token_u32(const struct mp_token *t, uint32_t *v)
{
	if (t->kind != MP_UINT || t->u > UINT32_MAX)
		return false;
	*v = (uint32_t)t->u;
	return true;
}

/*
 * Copies a string into the record's string space.  That space is as large
 * as out[], and a string takes at least one byte more in msgpack than its
 * copy with a NUL, so it never runs short.
 */
static const char *keep_string(struct artifact *a, const struct mp_token *t)
{
	char *s = a->strings + a->strings_len;

	if (a->strings_len + t->len + 1 > a->strings_cap)
		return NULL;
	memcpy(s, t->ptr, t->len);
	s[t->len] = 0;
	a->strings_len += t->len + 1;
	return s;
}

static bool set_string(struct artifact *a, const struct mp_token *t,
		       const char **field)
{
	if (t->kind != MP_STR)
		return false;
	*field = keep_string(a, t);
	return *field != NULL;
}

static int read_drops(struct artifact *a, struct cursor *c,
		      const struct mp_token *t, struct artifact_record *rec)
{
	struct mp_token k, v;
	uint32_t i;
	int err;

	(void)a;
	for (i = 0; i < t->len; i++) {
		err = mp_next(c, &k);
		if (!err && k.kind != MP_STR)
			err = mp_skip_rest(c, &k);
		if (!err)
			err = mp_next(c, &v);
		if (err)
			return err;
		if (v.kind != MP_UINT) {
			err = mp_skip_rest(c, &v);
			if (err)
				return err;
			continue;
		}
		rec->drops_total += v.u;
		if (k.kind == MP_STR && k.len == 6 && !memcmp(k.ptr, "events", 6))
			rec->drops_events = v.u;
	}
	return 0;
}

static int read_frames(struct artifact *a, struct cursor *c,
		       const struct mp_token *t, struct artifact_record *rec,
		       bool *ok)
{
	struct mp_token v;
	uint32_t i;
	int err;

	/* each entry takes a byte at least: wait for them before allocating */
	if ((size_t)(c->end - c->p) < t->len)
		return MP_MORE;
	if (t->len > a->frames_cap) {
		uint64_t *p = realloc(a->frames, (size_t)t->len * sizeof(*p));

		if (!p)
			return MP_BAD;
		a->frames = p;
		a->frames_cap = t->len;
	}
	*ok = true;
	for (i = 0; i < t->len; i++) {
		err = mp_next(c, &v);
		if (!err && v.kind != MP_UINT)
			err = mp_skip_rest(c, &v);
		if (err)
			return err;
		if (v.kind == MP_UINT)
			a->frames[i] = v.u;
		else
			*ok = false;	/* not an array of ids */
	}
	if (*ok) {
		rec->frames = a->frames;
		rec->nr_frames = t->len;
	}
	return 0;
}

/* stores a scalar value in its field; false when its type does not fit */
static bool set_scalar(struct artifact *a, int field, const struct mp_token *v,
		       struct artifact_record *rec)
{
	switch (field) {
	case AF_PID: return token_i32(v, &rec->pid);
	case AF_TID: return token_i32(v, &rec->tid);
	case AF_PPID: return token_i32(v, &rec->ppid);
	case AF_ROOT_PID: return token_i32(v, &rec->root_pid);
	case AF_EXIT_CODE: return token_i32(v, &rec->exit_code);
	case AF_TIMESTAMP: return token_u64(v, &rec->timestamp);
	case AF_ADDR: return token_u64(v, &rec->addr);
	case AF_SIZE: return token_u64(v, &rec->size);
	case AF_OLD_ADDR: return token_u64(v, &rec->old_addr);
	case AF_STACK: return token_u64(v, &rec->stack);
	case AF_START: return token_u64(v, &rec->start);
	case AF_END: return token_u64(v, &rec->end);
	case AF_EXIT: return token_u64(v, &rec->exit);
	case AF_ID: return token_u64(v, &rec->id);
	case AF_IP: return token_u64(v, &rec->ip);
	case AF_OFFSET: return token_u64(v, &rec->offset);
	case AF_FORMAT: return token_u32(v, &rec->format);
	case AF_LINE: return token_u32(v, &rec->line);
	case AF_ATTACHED: return token_bool(v, &rec->attached);
	case AF_INLINED: return token_bool(v, &rec->inlined);
	case AF_COMM: return set_string(a, v, &rec->comm);
	case AF_EXE: return set_string(a, v, &rec->exe);
	case AF_TOOL: return set_string(a, v, &rec->tool);
	case AF_VERSION: return set_string(a, v, &rec->version);
	case AF_COMMAND: return set_string(a, v, &rec->command);
	case AF_MODULE: return set_string(a, v, &rec->module);
	case AF_SYMBOL: return set_string(a, v, &rec->symbol);
	case AF_FILE: return set_string(a, v, &rec->file);
	default: return false;
	}
}

static int read_value(struct artifact *a, struct cursor *c, int field,
		      struct artifact_record *rec)
{
	struct mp_token v;
	bool ok = false;
	int err = mp_next(c, &v);

	if (err)
		return err;
	if (field == AF_DROPS && v.kind == MP_MAP) {
		err = read_drops(a, c, &v, rec);
		ok = true;
	} else if (field == AF_FRAMES && v.kind == MP_ARRAY) {
		err = read_frames(a, c, &v, rec, &ok);
	} else if (v.kind == MP_ARRAY || v.kind == MP_MAP) {
		err = mp_skip_rest(c, &v);
	} else if (field >= 0) {
		ok = set_scalar(a, field, &v, rec);
	}
	if (!err && ok)
		rec->has |= AR_HAS(field);
	return err;
}

static int read_type(const struct mp_token *v, struct artifact_record *rec)
{
	int type;

	if (v->kind != MP_STR)
		return 0;
	type = type_lookup(v->ptr, v->len);
	if (type > 0) {
		rec->type = ARTIFACT_EVENT;
		rec->kind = type;
	} else if (type < 0) {
		rec->type = -type;
	}
	return 0;
}

/* ---- the fast path: events as memtrack's encoder packs them ------------ */

/*
 * encode_alloc_event() writes a fixmap of 5 to 8 entries with fixstr keys in
 * one order: pid, tid, timestamp, addr, type, then size, old_addr, stack
 * when present; the type as a fixstr; every number as msgpack-c packs a
 * non-negative one, in its smallest unsigned encoding.  read_event_fast()
 * decodes exactly that, straight from the bytes, and gives up on anything
 * else, leaving read_record()'s generic decoder to decode the record again
 * from its start: other record types, other key orders or encodings,
 * unknown keys, and records near the end of the bytes at hand.  So it
 * decides nothing the generic decoder would decide otherwise.
 *
 * Bounds: it only starts with FAST_MAX bytes at hand, and the layout it
 * accepts can touch no more than that: the map header, then per entry the
 * key (its length checked before it is passed) and at most 9 bytes of value
 * (an integer is read with one 8-byte load after its first byte, even when
 * shorter) or a fixstr type of at most 32 bytes.
 */
#define FAST_KEY(s)	(sizeof(s) - 1)		/* s includes its fixstr byte */
#define FAST_MAX	(1 + FAST_KEY("\xa3pid") + 9 + FAST_KEY("\xa3tid") + 9 + \
			 FAST_KEY("\xa9timestamp") + 9 + FAST_KEY("\xa4" "addr") + 9 + \
			 FAST_KEY("\xa4type") + 32 + FAST_KEY("\xa4size") + 9 + \
			 FAST_KEY("\xa8old_addr") + 9 + FAST_KEY("\xa5stack") + 9)

/*
 * A non-negative integer in an unsigned encoding at p, 9 bytes readable;
 * returns the bytes it takes, 0 for any other encoding.
 */
static inline __attribute__((always_inline)) unsigned int fast_uint(const unsigned char *p, uint64_t *v)
{
	unsigned int b = *p, n;
	uint64_t raw;

	if (b <= 0x7f) {
		*v = b;
		return 1;
	}
	if (b - 0xcc > 3)
		return 0;
	n = 1u << (b - 0xcc);		/* 0xcc..0xcf: 1, 2, 4, 8 bytes */
	memcpy(&raw, p + 1, 8);
	*v = be64toh(raw) >> (64 - 8 * n);
	return 1 + n;
}

/* the key s (its fixstr byte included) at *pp: true and *pp past it */
#define FAST_KEY_AT(pp, s)						\
	(!memcmp(*(pp), s, FAST_KEY(s)) ? (*(pp) += FAST_KEY(s), true) : false)

/* an integer key and its value: true and *pp past both */
static inline __attribute__((always_inline)) bool fast_entry(const unsigned char **pp, const char *key,
			      unsigned int key_len, uint64_t *v)
{
	const unsigned char *p = *pp;
	unsigned int n;

	if (memcmp(p, key, key_len))
		return false;
	n = fast_uint(p + key_len, v);
	if (!n)
		return false;
	*pp = p + key_len + n;
	return true;
}

#define FAST_ENTRY(pp, s, v)	fast_entry(pp, s, FAST_KEY(s), v)

/* true and c->p past the record when it is an event as the encoder packs it */
static bool read_event_fast(struct artifact *a, struct cursor *c,
			    struct artifact_record *rec)
{
	const unsigned char *p = c->p;
	uint64_t pid, tid, ts, addr, v;
	unsigned int n, len;
	uint32_t has = AR_HAS(AF_PID) | AR_HAS(AF_TID) | AR_HAS(AF_TIMESTAMP) |
		       AR_HAS(AF_ADDR);
	int kind;

	if ((size_t)(c->end - p) < FAST_MAX || *p < 0x85 || *p > 0x88)
		return false;
	n = *p++ - 0x85;		/* entries after type */
	if (!FAST_ENTRY(&p, "\xa3pid", &pid) || pid > INT32_MAX ||
	    !FAST_ENTRY(&p, "\xa3tid", &tid) || tid > INT32_MAX ||
	    !FAST_ENTRY(&p, "\xa9timestamp", &ts) ||
	    !FAST_ENTRY(&p, "\xa4" "addr", &addr) ||
	    !FAST_KEY_AT(&p, "\xa4type") || (*p & 0xe0) != 0xa0)
		return false;
	len = *p & 0x1f;
	kind = type_lookup(p + 1, len);
	if (kind <= 0)
		return false;
	p += 1 + len;

	/* a memset per event costs more than the rest; one per run of them */
	if (!a->rec_clean || rec != &a->rec) {
		memset(rec, 0, sizeof(*rec));
		a->rec_clean = rec == &a->rec;
	}
	rec->type = ARTIFACT_EVENT;
	rec->kind = kind;
	rec->pid = pid;
	rec->tid = tid;
	rec->timestamp = ts;
	rec->addr = addr;
	rec->size = 0;
	rec->old_addr = 0;
	rec->stack = 0;
	if (n && FAST_ENTRY(&p, "\xa4size", &v)) {
		rec->size = v;
		has |= AR_HAS(AF_SIZE);
		n--;
	}
	if (n && FAST_ENTRY(&p, "\xa8old_addr", &v)) {
		rec->old_addr = v;
		has |= AR_HAS(AF_OLD_ADDR);
		n--;
	}
	if (n && FAST_ENTRY(&p, "\xa5stack", &v)) {
		rec->stack = v;
		has |= AR_HAS(AF_STACK);
		n--;
	}
	if (n)
		return false;
	rec->has = has;
	c->p = p;
	return true;
}

static int set_reason(struct artifact *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int set_reason(struct artifact *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	return MP_BAD;
}

/* decodes one record at c; 0, MP_SKIPPED, MP_MORE or MP_BAD */
static int read_record(struct artifact *a, struct cursor *c,
		       struct artifact_record *rec)
{
	const unsigned char *start = c->p;
	struct mp_token map, key, v;
	uint32_t i;
	int err;

	a->strings_len = 0;
	if (read_event_fast(a, c, rec))
		return 0;
	/* the fast path may have written to rec before giving up */
	memset(rec, 0, sizeof(*rec));
	a->rec_clean = false;	/* the fields set below can be any */
	err = mp_next(c, &map);
	if (err == MP_BAD)
		return set_reason(a, "invalid msgpack byte 0x%02x", *start);
	if (err)
		return err;
	if (map.kind != MP_MAP)
		return set_reason(a, "record is not a msgpack map (byte 0x%02x)", *start);

	for (i = 0; i < map.len; i++) {
		const unsigned char *at = c->p;
		int field = FIELD_UNKNOWN;

		err = mp_next(c, &key);
		if (!err && key.kind == MP_STR)
			field = field_lookup(key.ptr, key.len);
		else if (!err)
			err = mp_skip_rest(c, &key);
		if (!err && field == FIELD_TYPE) {
			err = mp_next(c, &v);
			if (!err)
				err = v.kind == MP_ARRAY || v.kind == MP_MAP ?
				      mp_skip_rest(c, &v) : read_type(&v, rec);
		} else if (!err) {
			err = read_value(a, c, field, rec);
		}
		if (err == MP_BAD)
			return set_reason(a, "invalid msgpack byte 0x%02x in a record",
					  c->p > at ? c->p[-1] : *at);
		if (err)
			return err;
	}
	return rec->type ? 0 : MP_SKIPPED;
}

/* ---- zstd and the file ---------------------------------------------------- */

static int fail(struct artifact *a, int err, uint64_t offset)
{
	a->error = err;
	a->error_offset = offset;
	return err;
}

static int fail_corrupt(struct artifact *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail_corrupt(struct artifact *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
	va_end(ap);
	return fail(a, -EBADMSG, a->frame_start);
}

static int read_input(struct artifact *a)
{
	ssize_t n;

	a->in_base += a->zin.size;
	a->zin.size = 0;
	a->zin.pos = 0;
	do
		n = read(a->fd, a->in, a->in_cap);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		snprintf(a->reason, sizeof(a->reason), "read error: %s", strerror(errno));
		return fail(a, -errno, a->in_base);
	}
	if (!n)
		a->eof = true;
	a->zin.size = n;
	return 0;
}

static int grow_out(struct artifact *a)
{
	size_t cap = a->out_cap * 2;
	unsigned char *out;
	char *strings;

	if (a->out_cap >= ARTIFACT_MAX_RECORD) {
		fail_corrupt(a, "a record is larger than %u bytes", ARTIFACT_MAX_RECORD);
		return fail(a, -EBADMSG, a->data_frame);
	}
	out = realloc(a->out, cap);
	if (out)
		a->out = out;
	strings = out ? realloc(a->strings, cap) : NULL;
	if (!strings) {
		snprintf(a->reason, sizeof(a->reason), "out of memory");
		return fail(a, -ENOMEM, a->frame_start);
	}
	a->strings = strings;
	a->out_cap = a->strings_cap = cap;
	return 0;
}

/* moves the bytes not yet decoded to the front of out[], growing it if full */
static int make_room(struct artifact *a)
{
	if (a->out_pos) {
		memmove(a->out, a->out + a->out_pos, a->out_len - a->out_pos);
		a->out_base += a->out_pos;
		a->out_len -= a->out_pos;
		a->out_pos = 0;
	}
	return a->out_len == a->out_cap ? grow_out(a) : 0;
}

/* one decompression step; returns the bytes it added to out[] or an error */
static int decompress_step(struct artifact *a, size_t *added)
{
	ZSTD_outBuffer zout = { a->out, a->out_cap, a->out_len };
	size_t in_before = a->zin.pos;
	size_t ret = ZSTD_decompressStream(a->zds, &zout, &a->zin);

	if (ZSTD_isError(ret)) {
		if (!a->in_frame)
			return fail_corrupt(a, "not a zstd frame (%s)",
					    ZSTD_getErrorName(ret));
		return fail_corrupt(a, "corrupt zstd frame (%s)",
				    ZSTD_getErrorName(ret));
	}
	if (zout.pos > a->out_len)
		a->data_frame = a->frame_start;
	if (ret == 0) {
		a->in_frame = false;
		a->frame_start = a->in_base + a->zin.pos;
	} else if (a->zin.pos > in_before || zout.pos > a->out_len) {
		a->in_frame = true;
	}
	*added = zout.pos - a->out_len;
	a->out_len = zout.pos;
	return 0;
}

/* decompresses more bytes into out[]: > 0 added, 0 at the end of the file */
static int fill(struct artifact *a)
{
	size_t added;
	int err = make_room(a);

	while (!err) {
		if (a->zin.pos == a->zin.size && !a->eof) {
			err = read_input(a);
			continue;
		}
		if (a->zin.pos == a->zin.size && a->eof && !a->in_frame)
			return 0;
		err = decompress_step(a, &added);
		if (!err && added)
			return 1;
		if (!err && a->zin.pos == a->zin.size && a->eof)
			return 0;
	}
	return err;
}

/* ---- decompression on a thread of its own --------------------------------- */

/* decompresses into c->data, in the thread: like fill(), one frame per chunk */
static void fill_chunk(struct artifact *z, struct chunk *c)
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
	struct decompressor *d = arg;
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
static int fill_threaded(struct artifact *a)
{
	struct decompressor *d = a->dec;
	struct chunk *c;
	size_t n;
	int err = make_room(a);

	if (err)
		return err;
	pthread_mutex_lock(&d->lock);
	while (d->tail == d->head)
		pthread_cond_wait(&d->cond, &d->lock);
	pthread_mutex_unlock(&d->lock);
	c = &d->chunks[d->head % NR_CHUNKS];

	a->in_base = c->in_base;
	a->zin.pos = c->in_pos;
	a->zin.size = c->in_size;
	a->frame_start = c->frame_start;
	a->eof = c->eof;
	a->in_frame = c->in_frame;
	n = c->len - c->pos;
	if (n) {
		a->data_frame = c->data_frame;
		if (n > a->out_cap - a->out_len)
			n = a->out_cap - a->out_len;
		memcpy(a->out + a->out_len, c->data + c->pos, n);
		a->out_len += n;
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
		memcpy(a->reason, c->reason, sizeof(a->reason));
		return fail(a, c->final, c->error_offset);
	}
	return 0;
}

static void decompressor_free(struct decompressor *d)
{
	unsigned int i;

	for (i = 0; i < NR_CHUNKS; i++)
		free(d->chunks[i].data);
	if (d->z) {
		d->z->out = NULL;	/* a chunk's */
		ZSTD_freeDStream(d->z->zds);
		free(d->z->in);
		free(d->z);
	}
	free(d);
}

/* starts the thread; without one, artifact__next() decompresses */
static void decompressor_start(struct artifact *a)
{
	struct decompressor *d = calloc(1, sizeof(*d));
	unsigned int i;

	if (!d)
		return;
	d->z = calloc(1, sizeof(*d->z));
	for (i = 0; i < NR_CHUNKS; i++)
		if (!(d->chunks[i].data = malloc(CHUNK_SIZE)))
			goto fail;
	if (!d->z)
		goto fail;
	d->z->fd = a->fd;
	d->z->in_cap = a->in_cap;
	d->z->in = malloc(d->z->in_cap);
	d->z->zds = ZSTD_createDStream();
	if (!d->z->in || !d->z->zds)
		goto fail;
	ZSTD_initDStream(d->z->zds);
	d->z->zin.src = d->z->in;
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
	a->dec = d;
	return;
fail:
	decompressor_free(d);
}

static void decompressor_stop(struct decompressor *d)
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

static int fail_truncated(struct artifact *a)
{
	if (a->in_frame)
		return fail_corrupt(a, "the last zstd frame is incomplete (%" PRIu64
				    " bytes of it present)",
				    a->in_base + a->zin.size - a->frame_start);
	fail_corrupt(a, "the stream ends inside a record (%zu bytes of it present)",
		     a->out_len - a->out_pos);
	return fail(a, -EBADMSG, a->data_frame);
}

int artifact__next(struct artifact *a, const struct artifact_record **recp)
{
	struct cursor c;
	int ret;

	if (a->error)
		return a->error;
	for (;;) {
		c.p = a->out + a->out_pos;
		c.end = a->out + a->out_len;
		ret = c.p < c.end ? read_record(a, &c, &a->rec) : MP_MORE;
		if (ret == 0 || ret == MP_SKIPPED) {
			a->out_pos = c.p - a->out;
			a->records++;
			if (ret == 0) {
				*recp = &a->rec;
				return 1;
			}
			a->skipped++;
			continue;
		}
		if (ret == MP_BAD) {
			size_t len = strlen(a->reason);

			snprintf(a->reason + len, sizeof(a->reason) - len,
				 " at decompressed byte %" PRIu64,
				 a->out_base + a->out_pos);
			return fail(a, -EBADMSG, a->data_frame);
		}
		ret = a->dec ? fill_threaded(a) : fill(a);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (a->in_frame || a->out_pos < a->out_len)
				return fail_truncated(a);
			return 0;
		}
	}
}

static int artifact__init(struct artifact *a)
{
	a->in_cap = ZSTD_DStreamInSize();
	a->in = malloc(a->in_cap);
	a->out_cap = a->strings_cap = OUT_INITIAL;
	a->out = malloc(a->out_cap);
	a->strings = malloc(a->strings_cap);
	a->zds = ZSTD_createDStream();
	if (!a->in || !a->out || !a->strings || !a->zds)
		return -ENOMEM;
	ZSTD_initDStream(a->zds);
	a->zin.src = a->in;
	return 0;
}

int artifact__open_fd(int fd, const char *name, struct artifact **ap)
{
	struct artifact *a = calloc(1, sizeof(*a));
	struct stat st;
	int err;

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->name = strdup(name ? name : "");
	err = a->name ? artifact__init(a) : -ENOMEM;
	if (err) {
		artifact__close(a);
		return err;
	}
	/*
	 * Regular files only: a read() from a pipe can block for good, and
	 * artifact__close() waits for the thread.
	 */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		a->size = st.st_size;
		decompressor_start(a);
	}
	*ap = a;
	return 0;
}

int artifact__open(const char *path, struct artifact **ap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	err = artifact__open_fd(fd, path, ap);
	if (err) {
		close(fd);
		return err;
	}
	(*ap)->own_fd = true;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

void artifact__close(struct artifact *a)
{
	if (!a)
		return;
	if (a->dec)
		decompressor_stop(a->dec);
	if (a->own_fd)
		close(a->fd);
	ZSTD_freeDStream(a->zds);
	free(a->in);
	free(a->out);
	free(a->strings);
	free(a->frames);
	free(a->name);
	free(a);
}

const char *artifact__strerror(const struct artifact *a)
{
	return a->error ? a->reason : "";
}

uint64_t artifact__error_offset(const struct artifact *a)
{
	return a->error_offset;
}

uint64_t artifact__records(const struct artifact *a)
{
	return a->records;
}

uint64_t artifact__skipped(const struct artifact *a)
{
	return a->skipped;
}

uint64_t artifact__offset(const struct artifact *a)
{
	return a->in_base + a->zin.pos;
}

uint64_t artifact__size(const struct artifact *a)
{
	return a->size;
}

const char *artifact__name(const struct artifact *a)
{
	return a->name;
}
