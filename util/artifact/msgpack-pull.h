/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_MSGPACK_PULL_H
#define MEMTRACK_MSGPACK_PULL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A msgpack pull decoder: one token at a time from a byte range, nothing
 * allocated.  The artifact reader uses it rather than msgpack_unpacker:
 * msgpack-c allocates arrays and maps by their declared length before their
 * bytes arrive (6 bytes of input can make it map 2 GiB), which a reader of
 * untrusted files cannot afford.
 */

/* what mp_next() and mp_skip_rest() return besides 0 */
#define MP_MORE		1	/* the bytes end inside the value */
#define MP_BAD		2	/* not msgpack */

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

struct mp_cursor {
	const unsigned char *p, *end;
};

/* reads one token: a scalar with its payload, or a container's header */
int mp_next(struct mp_cursor *c, struct mp_token *t);
/* skips what follows a token already read: a container's entries */
int mp_skip_rest(struct mp_cursor *c, const struct mp_token *first);

/* a token's value when it has this type (and range): true and *v set */
bool mp_token_u64(const struct mp_token *t, uint64_t *v);
bool mp_token_u32(const struct mp_token *t, uint32_t *v);
bool mp_token_i32(const struct mp_token *t, int32_t *v);
bool mp_token_bool(const struct mp_token *t, bool *v);

#endif
