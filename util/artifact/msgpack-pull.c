// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdint.h>

#include "util/artifact/msgpack-pull.h"

static uint64_t load_be(const unsigned char *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* takes n bytes after the first one as a big-endian number */
static int take_be(struct mp_cursor *c, unsigned int n, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < n)
		return MP_MORE;
	*v = load_be(c->p, n);
	c->p += n;
	return 0;
}

static int take_payload(struct mp_cursor *c, struct mp_token *t, uint64_t len)
{
	if ((uint64_t)(c->end - c->p) < len)
		return MP_MORE;
	t->ptr = c->p;
	t->len = len;
	c->p += len;
	return 0;
}

static int take_sized(struct mp_cursor *c, struct mp_token *t, enum mp_kind kind,
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

static int take_ext(struct mp_cursor *c, struct mp_token *t, unsigned int len_bytes,
		    uint64_t fixed_len)
{
	uint64_t len = fixed_len;
	int err = len_bytes ? take_be(c, len_bytes, &len) : 0;

	if (err)
		return err;
	t->kind = MP_EXT;
	return take_payload(c, t, len + 1);	/* the ext type byte, then data */
}

static int take_number(struct mp_cursor *c, struct mp_token *t, enum mp_kind kind,
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

int mp_next(struct mp_cursor *c, struct mp_token *t)
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

int mp_skip_rest(struct mp_cursor *c, const struct mp_token *first)
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


bool mp_token_u64(const struct mp_token *t, uint64_t *v)
{
	if (t->kind != MP_UINT)
		return false;
	*v = t->u;
	return true;
}

bool mp_token_i32(const struct mp_token *t, int32_t *v)
{
	int64_t i = (int64_t)t->u;

	if (t->kind != MP_UINT && t->kind != MP_INT)
		return false;
	if ((t->kind == MP_UINT && t->u > INT32_MAX) || i < INT32_MIN)
		return false;
	*v = (int32_t)i;
	return true;
}

bool mp_token_bool(const struct mp_token *t, bool *v)
{
	if (t->kind != MP_BOOL)
		return false;
	*v = t->u;
	return true;
}

bool mp_token_u32(const struct mp_token *t, uint32_t *v)
{
	if (t->kind != MP_UINT || t->u > UINT32_MAX)
		return false;
	*v = (uint32_t)t->u;
	return true;
}
