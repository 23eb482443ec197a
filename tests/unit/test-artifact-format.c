// SPDX-License-Identifier: GPL-2.0
/*
 * The artifact format's round trip: every record type, with every key the
 * tables of util/artifact/artifact-format.h give it, written by the writers memtrack
 * uses (encode_alloc_event() through the encoder, artifact__pack_meta(),
 * proc_table__pack(), pack_module_record(), pack_frame_record(),
 * pack_stack_record()), then read
 * back by the reader and printed by report --dump's artifact_record__dump().
 * A key that a writer leaves out, that the reader or the dump drops, or
 * that the table gains without a writer, fails here.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "cJSON.h"
#include "util/artifact/artifact.h"
#include "util/probe/proc-table.h"
#include "test-artifact.h"

/* every value below 2^53: the dump's JSON is read back as doubles */
static const uint64_t frame_ids[] = { 11, 12, 1ULL << 40 };
/* the Process's execs: the first right after its fork, then another */
static const uint64_t exec_times[] = { 1000000006, 1500000000 };

/*
 * What each record type must read back as: a value for every key of the
 * table (the keys of a type are its table's, see main()).  A key added to
 * the table and not here reads back as written by no writer: it fails.
 */
static struct artifact_record expected[ARTIFACT_TYPE_MAX] = {
	[ARTIFACT_EVENT] = {
		.type = ARTIFACT_EVENT, .kind = MT_REALLOC, .pid = 4242, .tid = 4243,
		.timestamp = 1000000123, .addr = 0x7f0000001000, .size = 4096,
		.old_addr = 0x7f0000002000, .stack = 7, .freeres = true,
	},
	[ARTIFACT_META] = {
		.type = ARTIFACT_META, .format = ARTIFACT_FORMAT, .tool = ARTIFACT_TOOL,
		.version = "9.8.7", .command = "sh -c \"make \\\\ test\"\t", .root_pid = 4242,
		.start = 1000000000, .end = 2000000000, .drops = { .events = 3, .stacks = 4 },
		.exit_code = 9, .attached = true, .running = 2, .blind = 1, .detached = true,
	},
	[ARTIFACT_PROCESS] = {
		.type = ARTIFACT_PROCESS, .pid = 4242, .ppid = 1, .comm = "make",
		.exe = "/usr/bin/make", .start = 1000000001, .exit = 1999999999,
		.exit_code = 2 << 8, .backend = "bpf", .bpf_why = "static",
		.execs = { exec_times, ARRAY_SIZE(exec_times) }, .pymalloc_off = true,
	},
	[ARTIFACT_FRAME] = {
		.type = ARTIFACT_FRAME, .id = 11, .ip = 0x401234, .module = "/usr/bin/make",
		.symbol = "main", .offset = 0x34, .file = "main.c", .line = 42, .inlined = true,
	},
	[ARTIFACT_STACK] = {
		.type = ARTIFACT_STACK, .pid = 4242, .id = 7,
		.frames = { frame_ids, ARRAY_SIZE(frame_ids) },
	},
	[ARTIFACT_MODULE] = {
		.type = ARTIFACT_MODULE, .module = "/usr/bin/make", .start = 0x401000,
		.end = 0x402000, .offset = 0x1000, .build_id = "0123456789abcdef",
	},
};

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
	const struct artifact_record *mod = &expected[ARTIFACT_MODULE];
	struct module_record module = { .module = mod->module, .build_id = mod->build_id,
					.start = mod->start, .end = mod->end,
					.offset = mod->offset };
	struct mt_proc_event fork = { .kind = MT_FORK, .pid = p->pid, .ppid = p->ppid,
				      .ts = p->start };
	struct mt_proc_event exec = { .kind = MT_EXEC, .pid = p->pid };
	struct mt_proc_event exit = { .kind = MT_EXIT, .pid = p->pid, .ts = p->exit,
				      .exit_code = p->exit_code };
	struct frame_record frame = { .id = f->id, .ip = f->ip, .offset = f->offset,
				      .module = f->module, .symbol = f->symbol,
				      .file = f->file, .line = f->line, .inlined = f->inlined };
	struct artifact_record run = { 0 };
	struct proc_table pt;
	uint32_t i;

	(void)arg;
	artifact_record__set_version(&run, m->version);
	artifact_record__set_command(&run, m->command);
	artifact_record__set_root_pid(&run, m->root_pid);
	artifact_record__set_start(&run, m->start);
	artifact_record__set_end(&run, m->end);
	artifact_record__set_drops(&run, m->drops);
	artifact_record__set_exit_code(&run, m->exit_code);
	artifact_record__set_attached(&run, m->attached);
	artifact_record__set_running(&run, m->running);
	artifact_record__set_blind(&run, m->blind);
	artifact_record__set_detached(&run, m->detached);
	artifact__pack_meta(pk, &run);

	snprintf(fork.comm, sizeof(fork.comm), "%s", p->comm);
	snprintf(exec.comm, sizeof(exec.comm), "%s", p->comm);
	snprintf(exec.filename, sizeof(exec.filename), "%s", p->exe);
	proc_table__init(&pt);
	proc_table__apply(&pt, &fork);
	for (i = 0; i < p->execs.n; i++) {
		exec.ts = p->execs.v[i];
		proc_table__apply(&pt, &exec);
	}
	proc_table__apply(&pt, &exit);
	proc_table__get(&pt, p->pid)->mode = MT_MODE_BPF;
	proc_table__get(&pt, p->pid)->bpf_why = p->bpf_why;
	proc_table__get(&pt, p->pid)->pymalloc_off = p->pymalloc_off;
	proc_table__pack(&pt, pk);
	proc_table__exit(&pt);

	pack_module_record(pk, &module);
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
	case AT_STR:
		return *(const char *const *)x && *(const char *const *)y &&
		       !strcmp(*(const char *const *)x, *(const char *const *)y);
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
		return cJSON_IsString(v) && *(const char *const *)x &&
		       !strcmp(v->valuestring, *(const char *const *)x);
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
	char keys[256];
	unsigned int f;

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
	const struct artifact_record *e = &expected[ARTIFACT_EVENT], *r;
	unsigned int seen[ARTIFACT_TYPE_MAX] = { 0 }, t;
	struct artifact *a;
	int ret;
	struct mt_alloc_event event = {
		.kind = e->kind, .pid = e->pid, .tid = e->tid, .ts = e->timestamp,
		.addr = e->addr, .size = e->size, .old_addr = e->old_addr, .stack = e->stack,
		.flags = e->freeres ? MT_EVENT_FREERES : 0,
	};

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

/* the reader keeps one array per record: a record type has one IDS key at most */
static void test_one_array_per_record(void)
{
	unsigned int t, f, n;

	for (t = ARTIFACT_EVENT; t < ARTIFACT_TYPE_MAX; t++) {
		for (f = 0, n = 0; f < AK_MAX; f++)
			n += artifact_keys[f].type == AT_IDS && (artifact_keys[f].in & (1u << t));
		CHECK(n <= 1, "%s records have %u array keys",
		      artifact_record__type_name(&expected[t]), n);
	}
}

/* the same bytes as the table's packer, at every length of the frames' array header */
static void check_stack_bytes(int32_t pid, uint64_t id, const uint64_t *frames, uint32_t nr)
{
	struct artifact_record r = { .type = ARTIFACT_STACK };
	msgpack_sbuffer fast, table;
	msgpack_packer pk;

	msgpack_sbuffer_init(&fast);
	msgpack_sbuffer_init(&table);
	msgpack_packer_init(&pk, &fast, msgpack_sbuffer_write);
	pack_stack_record(&pk, id, pid, frames, nr);
	artifact_record__set_id(&r, id);
	artifact_record__set_pid(&r, pid);
	artifact_record__set_frames(&r, (struct artifact_ids){ frames, nr });
	msgpack_packer_init(&pk, &table, msgpack_sbuffer_write);
	artifact_record__pack(&pk, &r);
	CHECK(fast.size == table.size && !memcmp(fast.data, table.data, fast.size),
	      "stack pid %d id %#llx, %u frames: %zu bytes, the table's packer %zu",
	      pid, (unsigned long long)id, nr, fast.size, table.size);
	msgpack_sbuffer_destroy(&fast);
	msgpack_sbuffer_destroy(&table);
}

static void test_stack_bytes(void)
{
	static const uint64_t ids[] = { 0, 1, 0x7f, 0x80, 0xffff, 0x10000, 1ULL << 32, UINT64_MAX };
	static const int32_t pids[] = { 1, 0x80, 0x10000, INT32_MAX, -1 };
	static const uint32_t lengths[] = { 0, 1, 15, 16, 63, 64, 65, 128, 129, 65535, 65536 };
	uint64_t *frames = malloc((65536 + 8) * sizeof(*frames));
	unsigned int i, j;

	if (!frames)
		return;
	for (i = 0; i < 65536 + 8; i++)
		frames[i] = ids[i % 8];
	/* each length starts at another id, so every id is at every place of a chunk */
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
		for (j = 0; j < sizeof(pids) / sizeof(pids[0]); j++)
			check_stack_bytes(pids[j], ids[(i + j) % 8], frames + i % 8, lengths[i]);
	free(frames);
}

int main(void)
{
	unsigned int t;

	for (t = ARTIFACT_EVENT; t < ARTIFACT_TYPE_MAX; t++)
		expected[t].has = table_keys(t);
	test_one_array_per_record();
	test_round_trip();
	test_kind_names();
	test_stack_bytes();
	test_tmpdir_remove();
	return test_done("artifact-format");
}
