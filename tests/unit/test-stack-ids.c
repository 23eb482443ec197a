// SPDX-License-Identifier: GPL-2.0
/*
 * The two stages between the stacks poller and the encoder, without BPF:
 *
 * stack ids (util/track/stack-ids.c): raw stack copies whose words are the
 * return addresses (a rule "return address at CFA - 8, CFA = sp + 8" for
 * every frame) get one id per distinct (pid, stack), from STACK_IDS_FIRST
 * in order of first appearance; an encoder worker's take() waits for a seq
 * not yet unwound, from another thread; close() ends the wait of a seq
 * that never comes; the seq table grows past its first size while seqs
 * are outstanding.
 *
 * the resolver queue (util/track/resolver.c): more stacks than its queue holds,
 * pushed while its thread drains; every stack resolved once, frames shared
 * by equal (module, symbol, offset); short records clamped or refused; the
 * Frame and Stack records it packs.  The pid exists nowhere, so every frame
 * is "[unknown]" at its ip, resolved at resolver__finish().
 */
#include <errno.h>
#include <msgpack.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "check.h"
#include "util/track/resolver.h"
#include "util/track/stack-ids.h"
#include "util/symbol/symbolize.h"

#define NO_PID	0x7ffffff0	/* above any pid_max */
#define ID(n)	(STACK_IDS_FIRST + (n) - 1)	/* the n-th distinct stack's id */

/* every frame: CFA = sp + 8, the return address at CFA - 8 */
static int word_rule(void *ctx, int32_t pid, uint64_t ip, bool ret_addr,
		     struct unwind_rule *rule)
{
	(void)ctx;
	(void)pid;
	(void)ip;
	(void)ret_addr;
	*rule = (struct unwind_rule){ .cfa_reg = UNW_REG_RSP, .cfa_off = 8,
				      .ra_how = UNW_AT_CFA, .ra_off = -8,
				      .rbp_how = UNW_SAME };
	return 0;
}

struct raw {
	struct mt_raw_stack h;
	uint64_t words[8];		/* the stack: return addresses, then 0 */
};

/* a raw stack of pid whose frames are ips (0-terminated, at most 7) */
static int add(struct stack_ids *t, uint32_t pid, uint64_t seq, const uint64_t *ips)
{
	struct raw r = { .h = { .kind = MT_RAW_STACK, .pid = pid, .seq = seq,
				.ip = 0x1000, .sp = 0x7ff000, .size = sizeof(r.words) } };
	unsigned int i;

	for (i = 0; i < 7 && ips[i]; i++)
		r.words[i] = ips[i];
	return stack_ids__add_raw(t, &r.h, sizeof(r));
}

struct stages {
	struct symbolizer *sym;
	struct resolver *resolver;
	struct stack_ids *ids;
};

static void stages_new(struct stages *s)
{
	s->sym = symbolizer__new();
	s->resolver = s->sym ? resolver__new(s->sym, NULL) : NULL;
	s->ids = s->resolver ? stack_ids__new(word_rule, NULL, s->resolver) : NULL;
	CHECK(s->ids != NULL, "the stages start");
	if (!s->ids)
		exit(1);
}

static void stages_delete(struct stages *s)
{
	stack_ids__delete(s->ids);
	resolver__delete(s->resolver);
	symbolizer__delete(s->sym);
}

static void test_ids(void)
{
	static const uint64_t ab[] = { 0xa0, 0xb0, 0 }, ac[] = { 0xa0, 0xc0, 0 };
	static const uint64_t none[] = { 0 };
	struct stack_ids_stats st;
	struct stages s;

	stages_new(&s);
	CHECK(!add(s.ids, 100, 1, ab), "add 1");
	CHECK(!add(s.ids, 100, 2, ab), "add 2");
	CHECK(!add(s.ids, 101, 3, ab), "add 3");
	CHECK(!add(s.ids, 100, 4, ac), "add 4");
	CHECK(!add(s.ids, 100, 5, none), "add 5");
	CHECK_U64(stack_ids__take(s.ids, 2), ID(1), "seq 2: the same stack as seq 1");
	CHECK_U64(stack_ids__take(s.ids, 1), ID(1), "seq 1: the first stack");
	CHECK_U64(stack_ids__take(s.ids, 3), ID(2), "seq 3: the same ips in another process");
	CHECK_U64(stack_ids__take(s.ids, 4), ID(3), "seq 4: another stack");
	CHECK_U64(stack_ids__take(s.ids, 5), 0, "seq 5: no frame, no stack");
	/* 1000 ^ 0x4001 == 1001 ^ 0x4000: the pid must not cancel out against the ip */
	CHECK(!add(s.ids, 1000, 6, (const uint64_t[]){ 0x4001, 0xb0, 0 }), "add 6");
	CHECK(!add(s.ids, 1001, 7, (const uint64_t[]){ 0x4000, 0xb0, 0 }), "add 7");
	CHECK_U64(stack_ids__take(s.ids, 6), ID(4), "seq 6: a new stack");
	CHECK_U64(stack_ids__take(s.ids, 7), ID(5), "seq 7: another, though pid ^ ip is the same");
	stack_ids__close(s.ids);
	CHECK_U64(stack_ids__take(s.ids, 1), 0, "a seq is taken once");
	stack_ids__stats(s.ids, &st);
	CHECK_U64(st.raw, 7, "raw stacks");
	CHECK_U64(st.frames, 12, "frames");
	CHECK_U64(st.stacks, 5, "distinct stacks");
	CHECK_U64(st.unpublished, 1, "the second take of seq 1");
	CHECK(!resolver__finish(s.resolver), "finish");
	CHECK_U64(resolver__stacks(s.resolver), 5, "each distinct stack resolved once");
	CHECK_U64(resolver__frames(s.resolver), 5, "frames 0xa0, 0xb0, 0xc0, 0x4000, 0x4001");
	stages_delete(&s);
}

/* ---- take() from another thread, as the encoder's workers do ---------- */

#define SEQS	20000
#define PIDS	7
#define IPS	5

struct taker {
	struct stack_ids *ids;
	uint64_t first, last;
	uint64_t got[SEQS + 1];
	int ready;
};

static void *take_all(void *arg)
{
	struct taker *k = arg;
	uint64_t seq;

	__atomic_store_n(&k->ready, 1, __ATOMIC_RELEASE);
	for (seq = k->first; seq <= k->last; seq++)
		k->got[seq] = stack_ids__take(k->ids, seq);
	return NULL;
}

static void stack_of(uint64_t seq, uint32_t *pid, uint64_t *ips)
{
	*pid = 1000 + seq % PIDS;
	ips[0] = 0x4000 + seq % IPS;
	ips[1] = 0x5000;
	ips[2] = 0;
}

/* the stacks of a process seen again after another's: its own ids, not new ones */
/* not inlined: test_resolver_outer_frames names main + 8, which must stay main's own code */
static __attribute__((noinline)) void test_ids_per_process(void)
{
	static const uint64_t ab[] = { 0xa0, 0xb0, 0 };
	struct stages s;

	stages_new(&s);
	CHECK(!add(s.ids, 100, 1, ab) && !add(s.ids, 101, 2, ab) && !add(s.ids, 100, 3, ab) &&
	      !add(s.ids, 101, 4, ab), "adds");
	CHECK_U64(stack_ids__take(s.ids, 1), ID(1), "pid 100's stack");
	CHECK_U64(stack_ids__take(s.ids, 2), ID(2), "pid 101's, the same ips");
	CHECK_U64(stack_ids__take(s.ids, 3), ID(1), "pid 100's again, after 101's");
	CHECK_U64(stack_ids__take(s.ids, 4), ID(2), "pid 101's again, after 100's");
	stack_ids__close(s.ids);
	CHECK(!resolver__finish(s.resolver), "finish");
	stages_delete(&s);
}

static void test_take_waits(void)
{
	static struct taker k;
	uint64_t expect[PIDS][IPS] = { { 0 } }, next_id = ID(1), seq, ips[3];
	struct stages s;
	pthread_t th;
	uint32_t pid;
	unsigned int wrong = 0, failed = 0;

	stages_new(&s);
	k.ids = s.ids;
	/* 10000 outstanding before anyone takes: the seq table grows past 4096 */
	for (seq = 1; seq <= SEQS / 2; seq++) {
		stack_of(seq, &pid, ips);
		failed += add(s.ids, pid, seq, ips) != 0;
	}
	k.first = 1;
	k.last = SEQS;
	CHECK(!pthread_create(&th, NULL, take_all, &k), "taker");
	/* the rest while it takes, and waits for seqs not added yet */
	for (; seq <= SEQS; seq++) {
		stack_of(seq, &pid, ips);
		failed += add(s.ids, pid, seq, ips) != 0;
	}
	pthread_join(th, NULL);
	CHECK_U64(failed, 0, "adds that failed");
	for (seq = 1; seq <= SEQS; seq++) {
		stack_of(seq, &pid, ips);
		if (!expect[pid - 1000][ips[0] - 0x4000])
			expect[pid - 1000][ips[0] - 0x4000] = next_id++;
		wrong += k.got[seq] != expect[pid - 1000][ips[0] - 0x4000];
	}
	CHECK_U64(wrong, 0, "every seq got its stack's id");
	CHECK_U64(next_id - ID(1), PIDS * IPS, "distinct stacks");
	stack_ids__close(s.ids);
	CHECK(!resolver__finish(s.resolver), "finish");
	CHECK_U64(resolver__stacks(s.resolver), PIDS * IPS, "resolved once each");
	CHECK_U64(resolver__frames(s.resolver), IPS + 1, "frames");
	stages_delete(&s);
}

/* close() ends a wait for a seq whose stack never comes */
static void test_close_ends_wait(void)
{
	static struct taker k;
	struct stack_ids_stats st;
	struct stages s;
	pthread_t th;

	stages_new(&s);
	k.ids = s.ids;
	k.first = k.last = 77;
	k.got[77] = 1;
	k.ready = 0;
	CHECK(!pthread_create(&th, NULL, take_all, &k), "taker");
	while (!__atomic_load_n(&k.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	stack_ids__close(s.ids);
	pthread_join(th, NULL);
	CHECK_U64(k.got[77], 0, "no stack: id 0");
	stack_ids__stats(s.ids, &st);
	CHECK_U64(st.unpublished, 1, "counted as unpublished");
	resolver__finish(s.resolver);
	stages_delete(&s);
}

/* ---- the resolver's queue --------------------------------------------- */

#define STACKS	5000	/* the queue holds 1024 */
#define FRAMES	100

struct packed_counts {
	unsigned int frames, stacks, bad_stacks;
	unsigned char *seen;	/* stack ids, STACKS + 1 */
};

static const char *type_of(const msgpack_object *o)
{
	uint32_t i;

	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == 4 &&
		    !memcmp(kv->key.via.str.ptr, "type", 4) &&
		    kv->val.type == MSGPACK_OBJECT_STR)
			return kv->val.via.str.ptr;
	}
	return "";
}

static const msgpack_object *value_of(const msgpack_object *o, const char *key)
{
	uint32_t i;

	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object_kv *kv = &o->via.map.ptr[i];

		if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen(key) &&
		    !memcmp(kv->key.via.str.ptr, key, strlen(key)))
			return &kv->val;
	}
	return NULL;
}

static void count_packed(const msgpack_sbuffer *buf, struct packed_counts *c)
{
	msgpack_unpacked u;
	size_t off = 0;

	msgpack_unpacked_init(&u);
	while (msgpack_unpack_next(&u, buf->data, buf->size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data, *id, *frames;

		if (o->type != MSGPACK_OBJECT_MAP)
			continue;
		if (!strncmp(type_of(o), "Frame", 5)) {
			c->frames++;
			continue;
		}
		if (strncmp(type_of(o), "Stack", 5))
			continue;
		c->stacks++;
		id = value_of(o, "id");
		frames = value_of(o, "frames");
		if (!id || id->via.u64 < 1 || id->via.u64 > STACKS || c->seen[id->via.u64]++ ||
		    !frames || frames->type != MSGPACK_OBJECT_ARRAY || frames->via.array.size != 2)
			c->bad_stacks++;
	}
	msgpack_unpacked_destroy(&u);
}

/* early: the records compressed as they come, else all at the end */
static void test_resolver_queue(bool early)
{
	struct mt_stack_record rec = { .kind = MT_STACK, .pid = NO_PID, .nr = 2 };
	struct packed_counts c = { .seen = calloc(STACKS + 1, 1) };
	struct symbolizer *sym = symbolizer__new();
	struct resolver *r = sym ? resolver__new(sym, NULL) : NULL;
	ZSTD_CCtx *zc = ZSTD_createCCtx();
	msgpack_sbuffer buf;
	msgpack_packer pk;
	unsigned int i, failed = 0;
	const void *frame;
	size_t len, got;
	char *plain;

	CHECK(r != NULL && c.seen && zc, "resolver__new");
	if (!r || !c.seen || !zc)
		return;
	ZSTD_CCtx_setParameter(zc, ZSTD_c_checksumFlag, 1);
	resolver__compress_with(r, zc, early);
	for (i = 1; i <= STACKS; i++) {
		rec.id = i;
		rec.ips[0] = 0x9000 + i % FRAMES;
		rec.ips[1] = 0x9000 + (i + 1) % FRAMES;
		failed += resolver__push(r, &rec, offsetof(struct mt_stack_record, ips) +
					 2 * sizeof(rec.ips[0])) != 0;
	}
	CHECK_U64(failed, 0, "pushes that failed");
	CHECK(resolver__push(r, &rec, offsetof(struct mt_stack_record, ips) - 1) == -EINVAL,
	      "a record shorter than its header is refused");
	CHECK(!resolver__finish(r), "finish");
	CHECK_U64(resolver__stacks(r), STACKS, "every stack pushed is resolved");
	CHECK_U64(resolver__frames(r), FRAMES, "frames shared by equal ips");

	msgpack_sbuffer_init(&buf);
	msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
	resolver__pack_records(r, &pk);
	count_packed(&buf, &c);
	CHECK_U64(c.frames, FRAMES, "Frame records");
	CHECK_U64(c.stacks, STACKS, "Stack records");
	CHECK_U64(c.bad_stacks, 0, "each id once, two frames each");
	/* compressed as the records came, more than one chunk of them: the same bytes */
	CHECK(buf.size > (128 << 10), "%zu bytes of records: more than a chunk", buf.size);
	frame = resolver__trailer_frame(r, &len);
	plain = malloc(buf.size + 1);
	got = frame && plain ? ZSTD_decompress(plain, buf.size + 1, frame, len) : 0;
	CHECK(frame && !ZSTD_isError(got) && got == buf.size && !memcmp(plain, buf.data, got),
	      "the trailer's frame, %s: one zstd frame of the records (%zu bytes in %zu)",
	      early ? "early" : "at the end", got, len);
	CHECK(!resolver__pack_error(r), "no record lost");
	free(plain);
	msgpack_sbuffer_destroy(&buf);
	resolver__delete(r);
	symbolizer__delete(sym);
	free(c.seen);
}

/* a record whose nr claims more ips than its length holds keeps what it holds */
static void test_resolver_clamps(void)
{
	struct mt_stack_record rec = { .kind = MT_STACK, .pid = NO_PID, .id = 1,
				       .nr = MT_MAX_FRAMES };
	struct symbolizer *sym = symbolizer__new();
	struct resolver *r = sym ? resolver__new(sym, NULL) : NULL;

	CHECK(r != NULL, "resolver__new");
	if (!r)
		return;
	rec.ips[0] = 0x1;
	rec.ips[1] = 0x2;
	rec.ips[2] = 0x3;
	CHECK(!resolver__push(r, &rec, offsetof(struct mt_stack_record, ips) +
			      3 * sizeof(rec.ips[0])), "push");
	CHECK(!resolver__finish(r), "finish");
	CHECK_U64(resolver__frames(r), 3, "the 3 ips the record holds");
	resolver__delete(r);
	symbolizer__delete(sym);
}

/* ---- the outer frames a stack shares with the one before ------------- */

#define NAMED_STACKS	4
#define NAMED_FRAMES	8

/* each stack's frames, as "symbol+offset" names, from packed Frame and Stack records */
struct named {
	char frame[64][64];		/* by frame id */
	char stack[NAMED_STACKS + 1][NAMED_FRAMES][64];	/* by stack id */
	unsigned int nr[NAMED_STACKS + 1];
};

static void name_frame(const msgpack_object *o, struct named *nm)
{
	const msgpack_object *id = value_of(o, "id"), *sym = value_of(o, "symbol"),
			     *off = value_of(o, "offset");

	if (!id || id->via.u64 >= 64)
		return;
	snprintf(nm->frame[id->via.u64], sizeof(nm->frame[0]), "%.*s+%llu",
		 sym ? (int)sym->via.str.size : 1, sym ? sym->via.str.ptr : "?",
		 off ? (unsigned long long)off->via.u64 : 0ULL);
}

static void name_stacks(const msgpack_sbuffer *buf, struct named *nm)
{
	msgpack_unpacked u;
	size_t off = 0;

	memset(nm, 0, sizeof(*nm));
	msgpack_unpacked_init(&u);
	while (msgpack_unpack_next(&u, buf->data, buf->size, &off) == MSGPACK_UNPACK_SUCCESS)
		if (u.data.type == MSGPACK_OBJECT_MAP && !strncmp(type_of(&u.data), "Frame", 5))
			name_frame(&u.data, nm);
	off = 0;
	while (msgpack_unpack_next(&u, buf->data, buf->size, &off) == MSGPACK_UNPACK_SUCCESS) {
		const msgpack_object *o = &u.data, *id, *frames;
		uint32_t i;

		if (o->type != MSGPACK_OBJECT_MAP || strncmp(type_of(o), "Stack", 5))
			continue;
		id = value_of(o, "id");
		frames = value_of(o, "frames");
		if (!id || id->via.u64 > NAMED_STACKS || !frames)
			continue;
		nm->nr[id->via.u64] = frames->via.array.size;
		for (i = 0; i < frames->via.array.size && i < NAMED_FRAMES; i++) {
			uint64_t f = frames->via.array.ptr[i].via.u64;

			snprintf(nm->stack[id->via.u64][i], sizeof(nm->stack[0][0]), "%s",
				 f < 64 ? nm->frame[f] : "?");
		}
	}
	msgpack_unpacked_destroy(&u);
}

static void resolve_named(const struct mt_stack_record *recs, unsigned int n, bool apart,
			  struct named *nm)
{
	struct mt_stack_record other = { .kind = MT_STACK, .pid = getpid(), .nr = 1,
					 .ips = { (uintptr_t)name_frame + 8 } };
	struct symbolizer *sym = symbolizer__new();
	struct resolver *r = sym ? resolver__new(sym, NULL) : NULL;
	msgpack_sbuffer buf;
	msgpack_packer pk;
	unsigned int i;

	CHECK(r && !symbolizer__snapshot(sym, getpid()), "a resolver of this process");
	if (!r)
		return;
	for (i = 0; i < n; i++) {
		resolver__push(r, &recs[i], sizeof(recs[i]));
		/* a stack of nothing alike between two: nothing is taken from the one before */
		if (apart) {
			other.id = 100 + i;
			resolver__push(r, &other, sizeof(other));
		}
	}
	resolver__finish(r);
	msgpack_sbuffer_init(&buf);
	msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
	resolver__pack_records(r, &pk);
	name_stacks(&buf, nm);
	msgpack_sbuffer_destroy(&buf);
	resolver__delete(r);
	symbolizer__delete(sym);
}

int main(void);

/*
 * Stacks whose outer frames are the stack's before them: the same frames
 * as when each is resolved alone.  The return addresses are this file's
 * functions', a few bytes in.
 */
static void test_resolver_outer_frames(void)
{
	uint64_t a = (uintptr_t)test_ids + 8, b = (uintptr_t)test_take_waits + 8,
		 c = (uintptr_t)test_close_ends_wait + 8, d = (uintptr_t)test_resolver_queue + 8,
		 e = (uintptr_t)test_resolver_clamps + 8, m = (uintptr_t)main + 8;
	struct mt_stack_record recs[NAMED_STACKS] = {
		{ .kind = MT_STACK, .id = 1, .nr = 4, .ips = { a, b, c, m } },
		{ .kind = MT_STACK, .id = 2, .nr = 4, .ips = { d, b, c, m } },
		{ .kind = MT_STACK, .id = 3, .nr = 4, .ips = { e, a, c, m } },
		{ .kind = MT_STACK, .id = 4, .nr = 3, .ips = { b, c, m } },
	};
	static struct named chained, apart;
	unsigned int i, k, same = 0;

	for (i = 0; i < NAMED_STACKS; i++)
		recs[i].pid = getpid();
	resolve_named(recs, NAMED_STACKS, false, &chained);
	resolve_named(recs, NAMED_STACKS, true, &apart);
	for (i = 1; i <= NAMED_STACKS; i++) {
		bool equal = chained.nr[i] == apart.nr[i] && chained.nr[i] >= recs[i - 1].nr;

		for (k = 0; equal && k < chained.nr[i] && k < NAMED_FRAMES; k++)
			equal = !strcmp(chained.stack[i][k], apart.stack[i][k]);
		same += equal;
	}
	CHECK_U64(same, NAMED_STACKS, "stacks named as when resolved alone");
	CHECK(!strncmp(chained.stack[2][3], "main+", 5) && !strncmp(chained.stack[4][0],
	      "test_take_waits+", 16), "outer frames named: '%s', '%s'", chained.stack[2][3],
	      chained.stack[4][0]);
}

int main(void)
{
	test_ids();
	test_take_waits();
	test_close_ends_wait();
	test_resolver_queue(true);
	test_resolver_queue(false);
	test_resolver_clamps();
	test_resolver_outer_frames();
	test_ids_per_process();
	return test_done("test-stack-ids");
}
