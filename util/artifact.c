// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact reader: a zstd_reader (util/zstd-reader.c) hands over
 * decompressed bytes, the records are decoded from them with the msgpack
 * pull decoder (util/msgpack-pull.c).  A record cut by the end of the bytes
 * at hand is decoded again from its start once more bytes have arrived, so
 * the decoder needs no state between calls.  Nothing here allocates by a
 * length read from the file unless the bytes that length promises are
 * already at hand.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact.h"
#include "msgpack-pull.h"
#include "zstd-reader.h"

#define OUT_INITIAL	(256u << 10)

/* what read_record() returns besides 0, MP_MORE and MP_BAD */
#define MP_SKIPPED	3	/* a whole record of unknown type */

struct artifact {
	int fd;
	bool own_fd;
	char *name;
	uint64_t size;
	struct zstd_reader z;

	char *strings;		/* the current record's strings */
	size_t strings_cap, strings_len;
	uint64_t *frames;
	size_t frames_cap;

	struct artifact_record rec;
	bool rec_clean;		/* rec's fields but an event's are all zero */
	uint64_t records, skipped;
	int error;
	uint64_t error_offset;
	char reason[256];
};

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
		       FIELD_UNKNOWN;
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

static int read_drops(struct artifact *a, struct mp_cursor *c,
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

static int read_frames(struct artifact *a, struct mp_cursor *c,
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
	case AF_PID: return mp_token_i32(v, &rec->pid);
	case AF_TID: return mp_token_i32(v, &rec->tid);
	case AF_PPID: return mp_token_i32(v, &rec->ppid);
	case AF_ROOT_PID: return mp_token_i32(v, &rec->root_pid);
	case AF_EXIT_CODE: return mp_token_i32(v, &rec->exit_code);
	case AF_TIMESTAMP: return mp_token_u64(v, &rec->timestamp);
	case AF_ADDR: return mp_token_u64(v, &rec->addr);
	case AF_SIZE: return mp_token_u64(v, &rec->size);
	case AF_OLD_ADDR: return mp_token_u64(v, &rec->old_addr);
	case AF_STACK: return mp_token_u64(v, &rec->stack);
	case AF_START: return mp_token_u64(v, &rec->start);
	case AF_END: return mp_token_u64(v, &rec->end);
	case AF_EXIT: return mp_token_u64(v, &rec->exit);
	case AF_ID: return mp_token_u64(v, &rec->id);
	case AF_IP: return mp_token_u64(v, &rec->ip);
	case AF_OFFSET: return mp_token_u64(v, &rec->offset);
	case AF_FORMAT: return mp_token_u32(v, &rec->format);
	case AF_LINE: return mp_token_u32(v, &rec->line);
	case AF_ATTACHED: return mp_token_bool(v, &rec->attached);
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

static int read_value(struct artifact *a, struct mp_cursor *c, int field,
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
static bool read_event_fast(struct artifact *a, struct mp_cursor *c,
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
static int read_record(struct artifact *a, struct mp_cursor *c,
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

/* ---- the reader ------------------------------------------------------------ */

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
	return fail(a, -EBADMSG, a->z.frame_start);
}

/* more decompressed bytes: > 0 added, 0 at the end of the file, or an error */
static int fill(struct artifact *a)
{
	int err = zstd_reader__fill(&a->z);
	char *strings;

	if (err == -E2BIG) {
		snprintf(a->reason, sizeof(a->reason), "a record is larger than %u bytes",
			 ARTIFACT_MAX_RECORD);
		return fail(a, -EBADMSG, a->z.error_offset);
	}
	if (err < 0) {
		memcpy(a->reason, a->z.reason, sizeof(a->reason));
		return fail(a, err == -ENOMSG ? -EBADMSG : err, a->z.error_offset);
	}
	/* a string takes fewer bytes in strings[] than in out[] */
	if (a->strings_cap < a->z.out_cap) {
		strings = realloc(a->strings, a->z.out_cap);
		if (!strings) {
			snprintf(a->reason, sizeof(a->reason), "out of memory");
			return fail(a, -ENOMEM, a->z.frame_start);
		}
		a->strings = strings;
		a->strings_cap = a->z.out_cap;
	}
	return err;
}

static int fail_truncated(struct artifact *a)
{
	const struct zstd_reader *z = &a->z;

	if (z->in_frame)
		return fail_corrupt(a, "the last zstd frame is incomplete (%" PRIu64
				    " bytes of it present)",
				    z->in_base + z->zin.size - z->frame_start);
	fail_corrupt(a, "the stream ends inside a record (%zu bytes of it present)",
		     z->out_len - z->out_pos);
	return fail(a, -EBADMSG, z->data_frame);
}

int artifact__next(struct artifact *a, const struct artifact_record **recp)
{
	struct zstd_reader *z = &a->z;
	struct mp_cursor c;
	int ret;

	if (a->error)
		return a->error;
	for (;;) {
		c.p = z->out + z->out_pos;
		c.end = z->out + z->out_len;
		ret = c.p < c.end ? read_record(a, &c, &a->rec) : MP_MORE;
		if (ret == 0 || ret == MP_SKIPPED) {
			z->out_pos = c.p - z->out;
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
				 " at decompressed byte %" PRIu64, z->out_base + z->out_pos);
			return fail(a, -EBADMSG, z->data_frame);
		}
		ret = fill(a);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			if (z->in_frame || z->out_pos < z->out_len)
				return fail_truncated(a);
			return 0;
		}
	}
}

int artifact__open_fd(int fd, const char *name, struct artifact **ap)
{
	struct artifact *a = calloc(1, sizeof(*a));
	struct stat st;

	if (!a)
		return -ENOMEM;
	a->fd = fd;
	a->name = strdup(name ? name : "");
	a->strings_cap = OUT_INITIAL;
	a->strings = malloc(a->strings_cap);
	if (!a->name || !a->strings ||
	    zstd_reader__init(&a->z, fd, OUT_INITIAL, ARTIFACT_MAX_RECORD)) {
		artifact__close(a);
		return -ENOMEM;
	}
	/*
	 * Regular files only: a read() from a pipe can block for good, and
	 * artifact__close() waits for the thread.
	 */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		a->size = st.st_size;
		zstd_reader__start_thread(&a->z);
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
	zstd_reader__exit(&a->z);
	if (a->own_fd)
		close(a->fd);
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
	return zstd_reader__offset(&a->z);
}

uint64_t artifact__size(const struct artifact *a)
{
	return a->size;
}

const char *artifact__name(const struct artifact *a)
{
	return a->name;
}
