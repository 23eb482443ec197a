// SPDX-License-Identifier: GPL-2.0
/*
 * The writer of the records that are not events (the trailer's), with
 * msgpack-c: a struct artifact_record becomes one map, key by key, by the
 * tables of artifact-format.h.  Events are written by encode_alloc_event()
 * in util/track/encoder.c.
 */
#include <string.h>

#include "util/artifact/msgpack-put.h"

void pack_str(msgpack_packer *pk, const char *s)
{
	size_t len = strlen(s);

	msgpack_pack_str(pk, len);
	msgpack_pack_str_body(pk, s, len);
}

void pack_key(msgpack_packer *pk, const char *key)
{
	pack_str(pk, key);
}

static void pack_drops(msgpack_packer *pk, const struct artifact_drops *d)
{
	msgpack_pack_map(pk, 2);
	pack_key(pk, ARTIFACT_DROPS_EVENTS);
	msgpack_pack_uint64(pk, d->events);
	pack_key(pk, ARTIFACT_DROPS_STACKS);
	msgpack_pack_uint64(pk, d->stacks);
}

static void pack_ids(msgpack_packer *pk, const struct artifact_ids *ids)
{
	uint32_t i;

	msgpack_pack_array(pk, ids->n);
	for (i = 0; i < ids->n; i++)
		msgpack_pack_uint64(pk, ids->v[i]);
}

static void pack_value(msgpack_packer *pk, const struct artifact_key *k, const void *field)
{
	switch (k->type) {
	case AT_I32: msgpack_pack_int32(pk, *(const int32_t *)field); break;
	case AT_U32: msgpack_pack_uint32(pk, *(const uint32_t *)field); break;
	case AT_U64: msgpack_pack_uint64(pk, *(const uint64_t *)field); break;
	case AT_STR: pack_str(pk, *(const char *const *)field); break;
	case AT_BOOL:
		if (*(const bool *)field)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		break;
	case AT_DROPS: pack_drops(pk, field); break;
	case AT_IDS: pack_ids(pk, field); break;
	}
}

void artifact_record__pack(msgpack_packer *pk, const struct artifact_record *rec)
{
	unsigned int f;

	msgpack_pack_map(pk, 1 + __builtin_popcountll(rec->has));
	pack_key(pk, ARTIFACT_TYPE_KEY);
	pack_str(pk, artifact_record__type_name(rec));
	for (f = 0; f < AK_MAX; f++) {
		const struct artifact_key *k = &artifact_keys[f];

		if (!(rec->has & AR_HAS(f)))
			continue;
		pack_key(pk, k->name);
		pack_value(pk, k, (const char *)rec + k->offset);
	}
}

void artifact__pack_meta(msgpack_packer *pk, const struct artifact_record *run)
{
	struct artifact_record meta = *run;

	meta.type = ARTIFACT_META;
	artifact_record__set_format(&meta, ARTIFACT_FORMAT);
	artifact_record__set_tool(&meta, ARTIFACT_TOOL);
	artifact_record__pack(pk, &meta);
}

void pack_frame_record(msgpack_packer *pk, const struct frame_record *f)
{
	struct artifact_record r = { .type = ARTIFACT_FRAME };

	artifact_record__set_id(&r, f->id);
	artifact_record__set_ip(&r, f->ip);
	if (f->module)
		artifact_record__set_module(&r, f->module);
	if (f->symbol)
		artifact_record__set_symbol(&r, f->symbol);
	artifact_record__set_offset(&r, f->offset);
	if (f->file) {
		artifact_record__set_file(&r, f->file);
		artifact_record__set_line(&r, f->line);
	}
	if (f->inlined)
		artifact_record__set_inlined(&r, true);
	artifact_record__pack(pk, &r);
}

void pack_module_record(msgpack_packer *pk, const struct module_record *m)
{
	struct artifact_record r = { .type = ARTIFACT_MODULE };

	artifact_record__set_module(&r, m->module);
	if (m->build_id)
		artifact_record__set_build_id(&r, m->build_id);
	artifact_record__set_start(&r, m->start);
	artifact_record__set_end(&r, m->end);
	artifact_record__set_offset(&r, m->offset);
	artifact_record__pack(pk, &r);
}

/*
 * A run's stacks are most of its trailer (67,000 of 20 frames in a make
 * -j2): written as bytes, as artifact_record__pack() would pack them (type,
 * then pid, id and frames in the keys' order), in a few callbacks a stack.
 */
#define STACK_CHUNK	64	/* frames per callback */

void pack_stack_record(msgpack_packer *pk, uint64_t id, int32_t pid,
		       const uint64_t *frames, uint32_t nr)
{
	unsigned char buf[64 + STACK_CHUNK * 9], *p = buf;
	const struct artifact_name *type = &artifact_type_names[ARTIFACT_STACK];
	uint32_t i;

	*p++ = 0x84;	/* fixmap: type, pid, id, frames */
	p = put_fixstr(p, ARTIFACT_TYPE_KEY, sizeof(ARTIFACT_TYPE_KEY) - 1);
	p = put_fixstr(p, type->s, type->len);
	p = put_int32(PUT_KEY(p, AK_PID), pid);
	p = put_uint(PUT_KEY(p, AK_ID), id);
	p = put_array(PUT_KEY(p, AK_FRAMES), nr);
	for (i = 0; i < nr; i++) {
		if (i && !(i % STACK_CHUNK)) {
			pk->callback(pk->data, (const char *)buf, p - buf);
			p = buf;
		}
		p = put_uint(p, frames[i]);
	}
	pk->callback(pk->data, (const char *)buf, p - buf);
}

static unsigned char *put_le32(unsigned char *p, uint32_t v)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		*p++ = v >> (8 * i);
	return p;
}

size_t artifact__header(unsigned char buf[ARTIFACT_HEADER_SIZE])
{
	unsigned char *p = buf;

	p = put_le32(p, ARTIFACT_HEADER_MAGIC);
	p = put_le32(p, ARTIFACT_HEADER_SIZE - 8);
	memcpy(p, ARTIFACT_TOOL, 8);
	p = put_le32(p + 8, ARTIFACT_FORMAT);
	return p - buf;
}
