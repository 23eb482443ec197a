// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact format's round trip: every record type, with every key the
 * tables of util/artifact-format.h give it, written by the writers memtrack
 * uses (encode_alloc_event() through the encoder, artifact__pack_meta(),
 * proc_table__pack(), pack_frame_record(), pack_stack_record()), then read
 * back by the reader and printed by report --dump's artifact_record__dump().
 * A key that a writer leaves out, that the reader or the dump drops, or
 * that the table gains without a writer, fails here.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "cJSON.h"
#include "util/artifact.h"
#include "util/proc-table.h"
#include "test-artifact.h"

/* every value below 2^53: the dump's JSON is read back as doubles */
static const uint64_t frame_ids[] = { 11, 12, 1ULL << 40 };

static const struct mt_alloc_event event = {
	.kind = MT_REALLOC, .pid = 4242, .tid = 4243, .ts = 1000000123,
	.addr = 0x7f0000001000, .size = 4096, .old_addr = 0x7f0000002000, .stack = 7,
};

/* what each record type must read back as: every key its writer sets */
static struct artifact_record expected[ARTIFACT_TYPE_MAX];

static void make_expected(void)
{
	struct artifact_record *r;

	r = &expected[ARTIFACT_EVENT];
	r->type = ARTIFACT_EVENT;
	r->kind = event.kind;
	artifact_record__set_pid(r, event.pid);
	artifact_record__set_tid(r, event.tid);
	artifact_record__set_timestamp(r, event.ts);
	artifact_record__set_addr(r, event.addr);
	artifact_record__set_size(r, event.size);
	artifact_record__set_old_addr(r, event.old_addr);
	artifact_record__set_stack(r, event.stack);

	r = &expected[ARTIFACT_META];
	r->type = ARTIFACT_META;
	artifact_record__set_format(r, ARTIFACT_FORMAT);
	artifact_record__set_tool(r, ARTIFACT_TOOL);
	artifact_record__set_version(r, "9.8.7");
	artifact_record__set_command(r, "sh -c \"make \\\\ test\"\t");
	artifact_record__set_root_pid(r, 4242);
	artifact_record__set_start(r, 1000000000);
	artifact_record__set_end(r, 2000000000);
	artifact_record__set_drops(r, (struct artifact_drops){ .events = 3, .stacks = 4 });
	artifact_record__set_exit_code(r, 9);
	artifact_record__set_attached(r, true);

	r = &expected[ARTIFACT_PROCESS];
	r->type = ARTIFACT_PROCESS;
	artifact_record__set_pid(r, 4242);
	artifact_record__set_ppid(r, 1);
	artifact_record__set_comm(r, "make");
	artifact_record__set_exe(r, "/usr/bin/make");
	artifact_record__set_start(r, 1000000001);
	artifact_record__set_exit(r, 1999999999);
	artifact_record__set_exit_code(r, 2 << 8);

	r = &expected[ARTIFACT_FRAME];
	r->type = ARTIFACT_FRAME;
	artifact_record__set_id(r, 11);
	artifact_record__set_ip(r, 0x401234);
	artifact_record__set_module(r, "/usr/bin/make");
	artifact_record__set_symbol(r, "main");
	artifact_record__set_offset(r, 0x34);
	artifact_record__set_file(r, "main.c");
	artifact_record__set_line(r, 42);

	r = &expected[ARTIFACT_STACK];
	r->type = ARTIFACT_STACK;
	artifact_record__set_pid(r, 4242);
	artifact_record__set_id(r, 7);
	artifact_record__set_frames(r, (struct artifact_ids){ frame_ids, ARRAY_SIZE(frame_ids) });
}

/* the keys the tables give a record type */
static uint64_t table_keys(enum artifact_type type)
{
	uint64_t keys = 0;
	unsigned int f;

	for (f = 0; f < AK_MAX; f++)
		if (artifact_keys[f].in & (1u << type))
			keys |= AR_HAS(f);
	return keys;
}

/* the trailer as track writes it, with the writers it uses */
static void pack_trailer(msgpack_packer *pk, void *arg)
{
	const struct artifact_record *m = &expected[ARTIFACT_META];
	const struct artifact_record *p = &expected[ARTIFACT_PROCESS];
	const struct artifact_record *f = &expected[ARTIFACT_FRAME];
	const struct artifact_record *s = &expected[ARTIFACT_STACK];
	struct mt_proc_event fork = { .kind = MT_FORK, .pid = p->pid, .ppid = p->ppid,
				      .ts = p->start };
	struct mt_proc_event exec = { .kind = MT_EXEC, .pid = p->pid, .ts = p->start + 5 };
	struct mt_proc_event exit = { .kind = MT_EXIT, .pid = p->pid, .ts = p->exit,
				      .exit_code = p->exit_code };
	struct frame_record frame = { .id = f->id, .ip = f->ip, .offset = f->offset,
				      .module = f->module, .symbol = f->symbol,
				      .file = f->file, .line = f->line };
	struct artifact_record run = { 0 };
	struct proc_table pt;

	(void)arg;
	artifact_record__set_version(&run, m->version);
	artifact_record__set_command(&run, m->command);
	artifact_record__set_root_pid(&run, m->root_pid);
	artifact_record__set_start(&run, m->start);
	artifact_record__set_end(&run, m->end);
	artifact_record__set_drops(&run, m->drops);
	artifact_record__set_exit_code(&run, m->exit_code);
	artifact_record__set_attached(&run, m->attached);
	artifact__pack_meta(pk, &run);

	snprintf(fork.comm, sizeof(fork.comm), "%s", p->comm);
	snprintf(exec.comm, sizeof(exec.comm), "%s", p->comm);
	snprintf(exec.filename, sizeof(exec.filename), "%s", p->exe);
	proc_table__init(&pt);
	proc_table__apply(&pt, &fork);
	proc_table__apply(&pt, &exec);
	proc_table__apply(&pt, &exit);
	proc_table__pack(&pt, pk);
	proc_table__exit(&pt);

	pack_frame_record(pk, &frame);
	pack_stack_record(pk, s->id, s->pid, s->frames.v, s->frames.n);
}

/* the field of key f in a and in b are the same */
static bool same_field(const struct artifact_record *a, const struct artifact_record *b,
		       unsigned int f)
{
	const struct artifact_key *k = &artifact_keys[f];
	const void *x = (const char *)a + k->offset, *y = (const char *)b + k->offset;
	const struct artifact_drops *dx = x, *dy = y;
	const struct artifact_ids *ix = x, *iy = y;

	switch (k->type) {
	case AT_I32: return *(const int32_t *)x == *(const int32_t *)y;
	case AT_U32: return *(const uint32_t *)x == *(const uint32_t *)y;
	case AT_U64: return *(const uint64_t *)x == *(const uint64_t *)y;
	case AT_BOOL: return *(const bool *)x == *(const bool *)y;
	case AT_STR: return !strcmp(*(const char *const *)x, *(const char *const *)y);
	case AT_DROPS: return dx->events == dy->events && dx->stacks == dy->stacks;
	case AT_IDS:
		return ix->n == iy->n && !memcmp(ix->v, iy->v, ix->n * sizeof(*ix->v));
	}
	return false;
}

/* a value of the dump is the field of key f of want */
static bool same_json(const cJSON *v, const struct artifact_record *want, unsigned int f)
{
	const struct artifact_key *k = &artifact_keys[f];
	const void *x = (const char *)want + k->offset;
	const struct artifact_drops *d = x;
	const struct artifact_ids *ids = x;
	uint32_t i;

	switch (k->type) {
	case AT_I32: return cJSON_IsNumber(v) && v->valuedouble == *(const int32_t *)x;
	case AT_U32: return cJSON_IsNumber(v) && v->valuedouble == *(const uint32_t *)x;
	case AT_U64: return cJSON_IsNumber(v) && v->valuedouble == *(const uint64_t *)x;
	case AT_BOOL: return cJSON_IsBool(v) && cJSON_IsTrue(v) == *(const bool *)x;
	case AT_STR:
		return cJSON_IsString(v) && !strcmp(v->valuestring, *(const char *const *)x);
	case AT_DROPS:
		return cJSON_GetObjectItem(v, ARTIFACT_DROPS_EVENTS) &&
		       cJSON_GetObjectItem(v, ARTIFACT_DROPS_EVENTS)->valuedouble == d->events &&
		       cJSON_GetObjectItem(v, ARTIFACT_DROPS_STACKS) &&
		       cJSON_GetObjectItem(v, ARTIFACT_DROPS_STACKS)->valuedouble == d->stacks;
	case AT_IDS:
		if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != (int)ids->n)
			return false;
		for (i = 0; i < ids->n; i++)
			if (cJSON_GetArrayItem(v, i)->valuedouble != ids->v[i])
				return false;
		return true;
	}
	return false;
}

/* the record as --dump prints it: the type and every key of want, no other */
static void check_dump(const struct artifact_record *r, const struct artifact_record *want)
{
	const char *name = artifact_record__type_name(want);
	char *line = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&line, &len);
	cJSON *o, *type;
	unsigned int f;

	artifact_record__dump(out, r);
	fclose(out);
	o = cJSON_Parse(line);
	CHECK(o != NULL, "%s: the dump is not JSON: %s", name, line);
	if (!o) {
		free(line);
		return;
	}
	type = cJSON_GetObjectItem(o, ARTIFACT_TYPE_KEY);
	CHECK(cJSON_IsString(type) && !strcmp(type->valuestring, name), "%s: dump type", name);
	for (f = 0; f < AK_MAX; f++) {
		const cJSON *v = cJSON_GetObjectItem(o, artifact_keys[f].name);

		if (!(want->has & AR_HAS(f)))
			continue;
		CHECK(v != NULL, "%s: the dump has no \"%s\": %s", name, artifact_keys[f].name,
		      line);
		CHECK(!v || same_json(v, want, f), "%s: dump \"%s\": %s", name,
		      artifact_keys[f].name, line);
	}
	CHECK(cJSON_GetArraySize(o) == 1 + __builtin_popcountll(want->has),
	      "%s: the dump has other keys: %s", name, line);
	cJSON_Delete(o);
	free(line);
}

/* the names of the keys of bits */
static const char *key_names(uint64_t bits, char *buf, size_t len)
{
	unsigned int f;
	size_t used = 0;

	buf[0] = 0;
	for (f = 0; f < AK_MAX && used < len; f++)
		if (bits & AR_HAS(f))
			used += snprintf(buf + used, len - used, " %s", artifact_keys[f].name);
	return buf;
}

/* the record as read: every key of the table for its type, each as written */
static void check_record(const struct artifact_record *r)
{
	const struct artifact_record *want = &expected[r->type];
	const char *name = artifact_record__type_name(r);
	uint64_t table = table_keys(r->type);
	char keys[256];
	unsigned int f;

	CHECK(want->has == table, "%s: keys of the table that this test does not write:%s",
	      name, key_names(table & ~want->has, keys, sizeof(keys)));
	CHECK(r->has == want->has, "%s: keys not read back (dropped by a writer or the reader):%s", name,
	      key_names(want->has & ~r->has, keys, sizeof(keys)));
	CHECK(!(r->has & ~want->has), "%s: keys read back that the test did not write:%s", name,
	      key_names(r->has & ~want->has, keys, sizeof(keys)));
	if (r->type == ARTIFACT_EVENT)
		CHECK(r->kind == want->kind, "event kind %d", r->kind);
	for (f = 0; f < AK_MAX; f++)
		if (r->has & want->has & AR_HAS(f))
			CHECK(same_field(r, want, f), "%s: \"%s\" read back differs", name,
			      artifact_keys[f].name);
	check_dump(r, want);
}

static void test_round_trip(void)
{
	const char *path = test_path("every-key");
	unsigned int seen[ARTIFACT_TYPE_MAX] = { 0 }, t;
	const struct artifact_record *r;
	struct artifact *a;
	int ret;

	CHECK(!test_write_artifact(path, &event, 1, 1, pack_trailer, NULL), "write");
	CHECK(!artifact__open(path, &a), "open");
	while ((ret = artifact__next(a, &r)) == 1) {
		CHECK(r->type > 0 && r->type < ARTIFACT_TYPE_MAX, "type %d", r->type);
		if (r->type <= 0 || r->type >= ARTIFACT_TYPE_MAX)
			continue;
		seen[r->type]++;
		check_record(r);
	}
	CHECK(ret == 0, "read: %d (%s)", ret, artifact__strerror(a));
	artifact__close(a);
	for (t = ARTIFACT_EVENT; t < ARTIFACT_TYPE_MAX; t++)
		CHECK(seen[t] == 1, "%s records: %u", artifact_record__type_name(&expected[t]),
		      seen[t]);
}

/* every event kind by its name, each way */
static void test_kind_names(void)
{
	const char *path = test_path("kinds");
	struct mt_alloc_event ev[MT_KIND_MAX];
	const struct artifact_record *r;
	struct artifact *a;
	unsigned int k, n = 0, i = 0;

	for (k = 0; k < MT_KIND_MAX; k++)
		if (artifact__kind_name(k))
			ev[n++] = (struct mt_alloc_event){ .kind = k, .pid = 1, .tid = 1 };
	CHECK_U64(n, MT_BRK - MT_MALLOC + 1, "event kinds with a name");
	CHECK(!test_write_artifact(path, ev, n, 4, NULL, NULL), "write");
	CHECK(!artifact__open(path, &a), "open");
	while (artifact__next(a, &r) == 1 && i < n) {
		CHECK(r->type == ARTIFACT_EVENT && r->kind == ev[i].kind, "kind %u read as %d",
		      ev[i].kind, r->kind);
		CHECK(!strcmp(artifact_record__type_name(r), artifact__kind_name(ev[i].kind)),
		      "kind %u name", ev[i].kind);
		i++;
	}
	CHECK_U64(i, n, "events read");
	artifact__close(a);
}

int main(void)
{
	make_expected();
	test_round_trip();
	test_kind_names();
	test_tmpdir_remove();
	return test_done("artifact-format");
}
