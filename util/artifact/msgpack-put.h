/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_MSGPACK_PUT_H
#define MEMTRACK_MSGPACK_PUT_H

#include <stdint.h>
#include <string.h>

#include "util/artifact/artifact-format.h"

/*
 * msgpack values written straight as bytes, the bytes msgpack-c packs for
 * them, where a record's packing is hot (events, stacks): no callback per
 * key and value.  Each returns the byte after what it wrote.
 */
static inline unsigned char *put_be16(unsigned char *p, unsigned char tag, uint16_t v)
{
	v = __builtin_bswap16(v);
	*p = tag;
	memcpy(p + 1, &v, sizeof(v));
	return p + 1 + sizeof(v);
}

static inline unsigned char *put_be32(unsigned char *p, unsigned char tag, uint32_t v)
{
	v = __builtin_bswap32(v);
	*p = tag;
	memcpy(p + 1, &v, sizeof(v));
	return p + 1 + sizeof(v);
}

static inline unsigned char *put_be64(unsigned char *p, unsigned char tag, uint64_t v)
{
	v = __builtin_bswap64(v);
	*p = tag;
	memcpy(p + 1, &v, sizeof(v));
	return p + 1 + sizeof(v);
}

/* a non-negative integer in its smallest encoding, as msgpack-c packs it */
static inline unsigned char *put_uint(unsigned char *p, uint64_t v)
{
	if (v < 0x80) {
		*p++ = v;
		return p;
	}
	if (v <= UINT8_MAX) {
		p[0] = 0xcc;
		p[1] = v;
		return p + 2;
	}
	if (v <= UINT16_MAX)
		return put_be16(p, 0xcd, v);
	if (v <= UINT32_MAX)
		return put_be32(p, 0xce, v);
	return put_be64(p, 0xcf, v);
}

/* a signed 32-bit integer, as msgpack_pack_int32() packs it */
static inline unsigned char *put_int32(unsigned char *p, int32_t v)
{
	if (v >= 0)
		return put_uint(p, v);
	if (v >= -32) {
		*p++ = (unsigned char)v;
		return p;
	}
	if (v >= INT8_MIN) {
		p[0] = 0xd0;
		p[1] = (uint8_t)v;
		return p + 2;
	}
	if (v >= INT16_MIN)
		return put_be16(p, 0xd1, (uint16_t)v);
	return put_be32(p, 0xd2, (uint32_t)v);
}

/* a short string, its fixstr byte first */
static inline __attribute__((always_inline)) unsigned char *
put_fixstr(unsigned char *p, const char *s, unsigned int len)
{
	*p++ = 0xa0 | len;
	memcpy(p, s, len);
	return p + len;
}

/* an array's header, n elements to follow */
static inline unsigned char *put_array(unsigned char *p, uint32_t n)
{
	if (n < 16) {
		*p++ = 0x90 | n;
		return p;
	}
	if (n <= UINT16_MAX)
		return put_be16(p, 0xdc, n);
	return put_be32(p, 0xdd, n);
}

/* the key of field f: the table's name, a constant once inlined */
#define PUT_KEY(p, f)	put_fixstr(p, artifact_keys[f].name, artifact_keys[f].len)

#endif
