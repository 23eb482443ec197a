// SPDX-License-Identifier: GPL-2.0
/*
 * The record schema of the reader: msgpack maps into struct artifact_record,
 * key by key, by the tables of artifact-format.h.  Events as the encoder
 * packs them take a fast path first (read_event_fast()).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/artifact/artifact-schema.h"
#include "util/util.h"

/* ---- names: type names and keys, looked up by hash ------------------------ */

#define always_inline	inline __attribute__((always_inline))

#define FIELD_TYPE	(-1)
#define FIELD_UNKNOWN	(-2)
#define TYPE_UNKNOWN	0

/* a name as two words, zero-padded: compared without a call to memcmp */
struct name_slot {
	uint64_t w[2];
	unsigned int len;	/* 0: an empty slot */
	int value;
};

#define NAME_MAX_LEN	16	/* the longest type or key name */
#define TYPE_SLOTS	32	/* > 2x the type names */
#define KEY_SLOTS	128	/* > 2x the keys */

#define KEY_FITS(id, key, type, in)	_Static_assert(sizeof(#key) - 1 <= NAME_MAX_LEN, #key);
#define NAME_FITS(v, name)		_Static_assert(sizeof(#name) - 1 <= NAME_MAX_LEN, #name);
ARTIFACT_KEYS(KEY_FITS)
ARTIFACT_EVENT_KINDS(NAME_FITS)
ARTIFACT_RECORD_TYPES(NAME_FITS)

/* types: > 0 an event kind, < 0 minus a record type; keys: AK_* or FIELD_TYPE */
static struct name_slot type_index[TYPE_SLOTS], key_index[KEY_SLOTS];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

/* 0 < len <= NAME_MAX_LEN: it reads the first and the last byte */
static always_inline unsigned int name_hash(const unsigned char *s, uint32_t len)
{
	return len * 31 + s[0] * 7 + s[len - 1];
}

/* the name s of len bytes as words; s has 16 bytes readable when padded */
static always_inline void name_words(const unsigned char *s, uint32_t len, bool padded,
				     uint64_t w[2])
{
	unsigned char buf[NAME_MAX_LEN] = { 0 };

	if (padded) {
		memcpy(w, s, NAME_MAX_LEN);
		if (len < 8) {
			w[0] &= (1ULL << (8 * len)) - 1;
			w[1] = 0;
		} else if (len < 16) {
			w[1] &= (1ULL << (8 * (len - 8))) - 1;
		}
		return;
	}
	memcpy(buf, s, len);
	memcpy(w, buf, NAME_MAX_LEN);
}

static void index_add(struct name_slot *ix, unsigned int slots, const char *s,
		      unsigned int len, int value)
{
	unsigned int i = name_hash((const unsigned char *)s, len) & (slots - 1);

	while (ix[i].len)
		i = (i + 1) & (slots - 1);
	name_words((const unsigned char *)s, len, false, ix[i].w);
	ix[i].len = len;
	ix[i].value = value;
}

/* padded: NAME_MAX_LEN bytes are readable at s whatever len */
static always_inline int index_find(const struct name_slot *ix, unsigned int slots,
				    const unsigned char *s, uint32_t len, bool padded,
				    int unknown)
{
	uint64_t w[2];
	unsigned int i;

	if (!len || len > NAME_MAX_LEN)
		return unknown;
	name_words(s, len, padded, w);
	for (i = name_hash(s, len) & (slots - 1); ix[i].len; i = (i + 1) & (slots - 1))
		if (ix[i].len == len && ix[i].w[0] == w[0] && ix[i].w[1] == w[1])
			return ix[i].value;
	return unknown;
}

static void build_index(void)
{
	unsigned int i;

	for (i = 0; i < MT_KIND_MAX; i++)
		if (artifact_kind_names[i].s)
			index_add(type_index, TYPE_SLOTS, artifact_kind_names[i].s,
				  artifact_kind_names[i].len, i);
	for (i = 0; i < ARTIFACT_TYPE_MAX; i++)
		if (artifact_type_names[i].s)
			index_add(type_index, TYPE_SLOTS, artifact_type_names[i].s,
				  artifact_type_names[i].len, -(int)i);
	for (i = 0; i < AK_MAX; i++)
		index_add(key_index, KEY_SLOTS, artifact_keys[i].name, artifact_keys[i].len, i);
	index_add(key_index, KEY_SLOTS, ARTIFACT_TYPE_KEY, strlen(ARTIFACT_TYPE_KEY),
		  FIELD_TYPE);
}

static int type_lookup(const unsigned char *s, uint32_t len)
{
	return index_find(type_index, TYPE_SLOTS, s, len, false, TYPE_UNKNOWN);
}

static int field_lookup(const unsigned char *s, uint32_t len)
{
	return index_find(key_index, KEY_SLOTS, s, len, false, FIELD_UNKNOWN);
}

const char *artifact__kind_name(enum mt_kind kind)
{
	return kind < MT_KIND_MAX ? artifact_kind_names[kind].s : NULL;
}

const char *artifact_record__type_name(const struct artifact_record *rec)
{
	const char *s = NULL;

	if (rec->type == ARTIFACT_EVENT)
		s = artifact__kind_name(rec->kind);
	else if (rec->type < ARTIFACT_TYPE_MAX)
		s = artifact_type_names[rec->type].s;
	return s ? s : "?";
}

/* ---- values ---------------------------------------------------------------- */

/* MP_BAD, with what was wrong and the byte it was wrong at */
static int bad(struct record_decoder *d, const char *what, unsigned char byte)
{
	d->bad = what;
	d->bad_byte = byte;
	return MP_BAD;
}

/*
 * Copies a string into the record's string space.  That space is as large
 * as the bytes at hand, and a string takes at least one byte more in msgpack
 * than its copy with a NUL, so it never runs short.
 */
static const char *keep_string(struct record_decoder *d, const struct mp_token *t)
{
	char *s = d->strings + d->strings_len;

	if (d->strings_len + t->len + 1 > d->strings_cap)
		return NULL;
	memcpy(s, t->ptr, t->len);
	s[t->len] = 0;
	d->strings_len += t->len + 1;
	return s;
}

static bool set_string(struct record_decoder *d, const struct mp_token *t,
		       const char **field)
{
	if (t->kind != MP_STR)
		return false;
	*field = keep_string(d, t);
	return *field != NULL;
}

static bool is_key(const struct mp_token *k, const char *name)
{
	return k->kind == MP_STR && k->len == strlen(name) && !memcmp(k->ptr, name, k->len);
}

static int read_drops(struct mp_cursor *c, const struct mp_token *t,
		      struct artifact_drops *drops)
{
	struct mp_token k, v;
	uint32_t i;
	int err;

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
		if (is_key(&k, ARTIFACT_DROPS_EVENTS))
			drops->events = v.u;
		else if (is_key(&k, ARTIFACT_DROPS_STACKS))
			drops->stacks = v.u;
		else
			drops->other += v.u;
	}
	return 0;
}

static int read_ids(struct record_decoder *d, struct mp_cursor *c,
		    const struct mp_token *t, struct artifact_ids *ids, bool *ok)
{
	struct mp_token v;
	uint32_t i;
	int err;

	/* each entry takes a byte at least: wait for them before allocating */
	if ((size_t)(c->end - c->p) < t->len)
		return MP_MORE;
	if (t->len > d->ids_cap) {
		uint64_t *p = realloc(d->ids, (size_t)t->len * sizeof(*p));

		if (!p)
			return bad(d, "out of memory for an array of ids at byte", *c->p);
		d->ids = p;
		d->ids_cap = t->len;
	}
	*ok = true;
	for (i = 0; i < t->len; i++) {
		err = mp_next(c, &v);
		if (!err && v.kind != MP_UINT)
			err = mp_skip_rest(c, &v);
		if (err)
			return err;
		if (v.kind == MP_UINT)
			d->ids[i] = v.u;
		else
			*ok = false;	/* not an array of ids */
	}
	if (*ok) {
		ids->v = d->ids;
		ids->n = t->len;
	}
	return 0;
}

/* stores a scalar in its field; false when its type is not the key's */
static bool set_scalar(struct record_decoder *d, const struct artifact_key *k,
		       const struct mp_token *v, struct artifact_record *rec)
{
	void *field = (char *)rec + k->offset;

	switch (k->type) {
	case AT_I32: return mp_token_i32(v, field);
	case AT_U32: return mp_token_u32(v, field);
	case AT_U64: return mp_token_u64(v, field);
	case AT_BOOL: return mp_token_bool(v, field);
	case AT_STR: return set_string(d, v, field);
	default: return false;	/* the containers */
	}
}

static int read_value(struct record_decoder *d, struct mp_cursor *c, int field,
		      struct artifact_record *rec)
{
	const struct artifact_key *k = field >= 0 ? &artifact_keys[field] : NULL;
	void *value = k ? (char *)rec + k->offset : NULL;
	struct mp_token v;
	bool ok = false;
	int err = mp_next(c, &v);

	if (err)
		return err;
	if (k && k->type == AT_DROPS && v.kind == MP_MAP) {
		err = read_drops(c, &v, value);
		ok = true;
	} else if (k && k->type == AT_IDS && v.kind == MP_ARRAY) {
		err = read_ids(d, c, &v, value, &ok);
	} else if (v.kind == MP_ARRAY || v.kind == MP_MAP) {
		err = mp_skip_rest(c, &v);
	} else if (k) {
		ok = set_scalar(d, k, &v, rec);
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
#define FAST_KEY(f)	(1 + artifact_keys[f].len)	/* fixstr byte and name */
#define FAST_TYPE_KEY	(1 + sizeof(ARTIFACT_TYPE_KEY) - 1)
#define FAST_MAX	(1 + FAST_KEY(AK_PID) + 9 + FAST_KEY(AK_TID) + 9 +		\
			 FAST_KEY(AK_TIMESTAMP) + 9 + FAST_KEY(AK_ADDR) + 9 +		\
			 FAST_TYPE_KEY + 32 + FAST_KEY(AK_SIZE) + 9 +			\
			 FAST_KEY(AK_OLD_ADDR) + 9 + FAST_KEY(AK_STACK) + 9)

/*
 * A non-negative integer in an unsigned encoding at p, 9 bytes readable;
 * returns the bytes it takes, 0 for any other encoding.
 */
static always_inline unsigned int fast_uint(const unsigned char *p, uint64_t *v)
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

/* the fixstr of name at p; len is a constant where it is inlined */
static always_inline bool fast_name_at(const unsigned char *p, const char *name,
				       unsigned int len)
{
	return p[0] == (0xa0 | len) && !memcmp(p + 1, name, len);
}

/* the key of field f and an integer: true and *pp past both */
static always_inline bool fast_entry(const unsigned char **pp, int f, uint64_t *v)
{
	const unsigned char *p = *pp;
	unsigned int n;

	if (!fast_name_at(p, artifact_keys[f].name, artifact_keys[f].len))
		return false;
	n = fast_uint(p + FAST_KEY(f), v);
	if (!n)
		return false;
	*pp = p + FAST_KEY(f) + n;
	return true;
}

/* an optional key after the type: true and its field and bit set */
static always_inline bool fast_optional(const unsigned char **pp, int f, uint64_t *field,
					uint64_t *has)
{
	if (!fast_entry(pp, f, field))
		return false;
	*has |= AR_HAS(f);
	return true;
}

/* true and c->p past the record when it is an event as the encoder packs it */
static bool read_event_fast(struct record_decoder *d, struct mp_cursor *c,
			    struct artifact_record *rec)
{
	const unsigned char *p = c->p;
	uint64_t pid, tid, ts, addr;
	unsigned int n, len;
	uint64_t has = AR_HAS(AK_PID) | AR_HAS(AK_TID) | AR_HAS(AK_TIMESTAMP) |
		       AR_HAS(AK_ADDR);
	int kind;

	if ((size_t)(c->end - p) < FAST_MAX || *p < 0x85 || *p > 0x88)
		return false;
	n = *p++ - 0x85;		/* entries after type */
	if (!fast_entry(&p, AK_PID, &pid) || pid > INT32_MAX ||
	    !fast_entry(&p, AK_TID, &tid) || tid > INT32_MAX ||
	    !fast_entry(&p, AK_TIMESTAMP, &ts) ||
	    !fast_entry(&p, AK_ADDR, &addr) ||
	    !fast_name_at(p, ARTIFACT_TYPE_KEY, FAST_TYPE_KEY - 1))
		return false;
	p += FAST_TYPE_KEY;
	if ((*p & 0xe0) != 0xa0)
		return false;
	len = *p & 0x1f;
	/* FAST_MAX keeps 32 bytes for the type: its name can be read as words */
	kind = index_find(type_index, TYPE_SLOTS, p + 1, len, true, TYPE_UNKNOWN);
	if (kind <= 0)
		return false;
	p += 1 + len;

	/* a memset per event costs more than the rest; one per run of them */
	if (d->clean != rec) {
		memset(rec, 0, sizeof(*rec));
		d->clean = rec;
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
	/* each present: one entry fewer to come */
	n -= n && fast_optional(&p, AK_SIZE, &rec->size, &has);
	n -= n && fast_optional(&p, AK_OLD_ADDR, &rec->old_addr, &has);
	n -= n && fast_optional(&p, AK_STACK, &rec->stack, &has);
	if (n)
		return false;
	rec->has = has;
	c->p = p;
	return true;
}

/* ---- a record ---------------------------------------------------------------- */

/* one key and its value */
static int read_entry(struct record_decoder *d, struct mp_cursor *c,
		      struct artifact_record *rec)
{
	struct mp_token key, v;
	int field = FIELD_UNKNOWN, err = mp_next(c, &key);

	if (!err && key.kind == MP_STR)
		field = field_lookup(key.ptr, key.len);
	else if (!err)
		err = mp_skip_rest(c, &key);
	if (err)
		return err;
	if (field != FIELD_TYPE)
		return read_value(d, c, field, rec);
	err = mp_next(c, &v);
	if (!err)
		err = v.kind == MP_ARRAY || v.kind == MP_MAP ? mp_skip_rest(c, &v) :
		      read_type(&v, rec);
	return err;
}

int record_decoder__read(struct record_decoder *d, struct mp_cursor *c,
			 struct artifact_record *rec)
{
	const unsigned char *start = c->p;
	struct mp_token map;
	uint32_t i;
	int err;

	d->strings_len = 0;
	if (read_event_fast(d, c, rec))
		return 0;
	/* the fast path may have written to rec before giving up */
	memset(rec, 0, sizeof(*rec));
	d->clean = NULL;	/* the fields set below can be any */
	err = mp_next(c, &map);
	if (err == MP_BAD)
		return bad(d, "invalid msgpack byte", *start);
	if (err)
		return err;
	if (map.kind != MP_MAP)
		return bad(d, "a record that is not a msgpack map: byte", *start);

	for (i = 0; i < map.len; i++) {
		const unsigned char *at = c->p;

		err = read_entry(d, c, rec);
		if (err == MP_BAD)
			return bad(d, "invalid msgpack byte in a record",
				   c->p > at ? c->p[-1] : *at);
		if (err)
			return err;
	}
	return rec->type ? 0 : RECORD_SKIPPED;
}

void record_decoder__init(struct record_decoder *d)
{
	memset(d, 0, sizeof(*d));
	pthread_once(&index_once, build_index);
}

int record_decoder__reserve(struct record_decoder *d, size_t size)
{
	return grow_array((void **)&d->strings, &d->strings_cap, size, 1);
}

void record_decoder__exit(struct record_decoder *d)
{
	free(d->strings);
	free(d->ids);
	memset(d, 0, sizeof(*d));
}
