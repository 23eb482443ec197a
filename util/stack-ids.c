// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "resolver.h"
#include "stack-ids.h"
#include "util.h"

/*
 * uint64 -> uint64, open addressing with linear probing, key 0 for an empty
 * slot, at most half full.  Both tables of this file are one of these.
 */
struct u64_slot {
	uint64_t key;
	uint64_t val;
};

struct u64_table {
	struct u64_slot *slots;
	size_t cap, n;		/* cap: a power of two */
};

static size_t home_of(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ULL >> 17) & (cap - 1);
}

/* the slot of key, or the empty one where it would go */
static struct u64_slot *table_slot(const struct u64_table *tb, uint64_t key)
{
	size_t i;

	for (i = home_of(key, tb->cap); tb->slots[i].key; i = (i + 1) & (tb->cap - 1))
		if (tb->slots[i].key == key)
			break;
	return &tb->slots[i];
}

/* room for one more key: 0, or -ENOMEM (then a key still fits while n + 1 < cap) */
static int table_reserve(struct u64_table *tb, size_t first_cap)
{
	struct u64_table bigger;
	size_t i;

	if ((tb->n + 1) * 2 <= tb->cap)
		return 0;
	bigger.cap = tb->cap ? 2 * tb->cap : first_cap;
	bigger.n = tb->n;
	bigger.slots = calloc(bigger.cap, sizeof(*bigger.slots));
	if (!bigger.slots)
		return -ENOMEM;
	for (i = 0; i < tb->cap; i++)
		if (tb->slots[i].key)
			*table_slot(&bigger, tb->slots[i].key) = tb->slots[i];
	free(tb->slots);
	*tb = bigger;
	return 0;
}

/* linear probing without tombstones: later slots of the run move back */
static void table_remove(struct u64_table *tb, struct u64_slot *slot)
{
	size_t mask = tb->cap - 1, i = slot - tb->slots, j = i, home;

	for (;;) {
		tb->slots[i].key = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!tb->slots[j].key)
				goto done;
			home = home_of(tb->slots[j].key, tb->cap);
			/* j's entry may fill the hole at i unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		tb->slots[i] = tb->slots[j];
		i = j;
	}
done:
	tb->n--;
}

struct known_end {
	uint32_t tid;
	uint64_t end;
};

struct stack_ids {
	unwind_rule_fn *rule_of;
	void *rule_ctx;
	struct resolver *resolver;
	void (*end_fn)(void *ctx, uint32_t tid, uint64_t end);
	void *end_ctx;
	struct known_end ends[1024];

	pthread_mutex_t known_lock;	/* the stacks poller's and the events poller's */
	struct u64_table known;	/* (pid, ips) hash -> id */

	pthread_mutex_t lock;
	pthread_cond_t added;
	struct u64_table seqs;	/* seq -> id, until taken */
	bool closed;
	unsigned int waiters;	/* in stack_ids__take(): a put wakes them, else no syscall */
	struct stack_ids_stats stats;
};

static int seq_put(struct stack_ids *t, uint64_t seq, uint64_t id)
{
	struct u64_slot *slot;

	pthread_mutex_lock(&t->lock);
	if (table_reserve(&t->seqs, 4096) && t->seqs.n + 1 == t->seqs.cap) {
		/* no room: stop waiting for any seq rather than for this one forever */
		t->closed = true;
		pthread_cond_broadcast(&t->added);
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	slot = table_slot(&t->seqs, seq);
	*slot = (struct u64_slot){ .key = seq, .val = id };
	t->seqs.n++;
	if (t->waiters)
		pthread_cond_broadcast(&t->added);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

uint64_t stack_ids__take(struct stack_ids *t, uint64_t seq)
{
	struct u64_slot *slot;
	uint64_t id = 0;

	pthread_mutex_lock(&t->lock);
	while (!(slot = table_slot(&t->seqs, seq))->key && !t->closed) {
		t->waiters++;
		pthread_cond_wait(&t->added, &t->lock);
		t->waiters--;
	}
	if (slot->key) {
		id = slot->val;
		table_remove(&t->seqs, slot);
	} else {
		t->stats.unpublished++;
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

static uint64_t hash_stack(int32_t pid, const __u64 *ips, unsigned int nr)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint32_t)pid;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		h = (h ^ ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

/*
 * The id of a stack, a new one (sent to the resolver) the first time.  As
 * in BPF with fp, stacks are told apart by a 64-bit hash of (pid, ips).
 * Ids start at STACK_IDS_FIRST, above those BPF gives with fp.
 */
static uint64_t stack_id(struct stack_ids *t, struct mt_stack_record *st)
{
	uint64_t hash = hash_stack(st->pid, st->ips, st->nr), id = 0;
	struct u64_slot *slot;

	pthread_mutex_lock(&t->known_lock);
	if (table_reserve(&t->known, 1024))
		goto out;
	slot = table_slot(&t->known, hash);
	if (slot->key) {
		id = slot->val;
		goto out;
	}
	st->id = STACK_IDS_FIRST + t->known.n;
	if (resolver__push(t->resolver, st, offsetof(struct mt_stack_record, ips) +
			   st->nr * sizeof(st->ips[0])))
		goto out;
	*slot = (struct u64_slot){ .key = hash, .val = st->id };
	t->known.n++;
	id = st->id;
out:
	t->stats.stacks = t->known.n;
	pthread_mutex_unlock(&t->known_lock);
	return id;
}

uint64_t stack_ids__intern(struct stack_ids *t, int32_t pid, const uint64_t *ips, uint32_t nr)
{
	struct mt_stack_record st = { .kind = MT_STACK, .pid = pid };
	uint64_t id;

	if (!nr)
		return 0;
	st.nr = nr < MT_MAX_FRAMES ? nr : MT_MAX_FRAMES;
	memcpy(st.ips, ips, st.nr * sizeof(st.ips[0]));
	id = stack_id(t, &st);
	return id;
}

/*
 * A thread's stack ends, as far as copies go, at its outermost frame: told
 * to BPF once per thread (and again if it moves), so that later copies
 * stop there.  A small cache by tid keeps it to once.
 */
static void learn_stack_end(struct stack_ids *t, uint32_t tid, uint64_t end)
{
	struct known_end *k = &t->ends[tid % ARRAY_SIZE(t->ends)];

	if (!end || !t->end_fn || (k->tid == tid && k->end == end))
		return;
	k->tid = tid;
	k->end = end;
	t->end_fn(t->end_ctx, tid, end);
}

int stack_ids__add_raw(struct stack_ids *t, const struct mt_raw_stack *rec, uint32_t len)
{
	struct mt_stack_record st = { .kind = MT_STACK, .pid = rec->pid };
	struct mt_raw_stack hdr = *rec;
	uint64_t id = 0, end;

	if (len < sizeof(*rec))
		return -EINVAL;
	if (hdr.size > len - sizeof(*rec))
		hdr.size = len - sizeof(*rec);
	st.nr = unwind_raw_stack(&hdr, rec->data, t->rule_of, t->rule_ctx, st.ips,
				 MT_MAX_FRAMES, &end);
	learn_stack_end(t, rec->tid, end);
	if (st.nr)
		id = stack_id(t, &st);
	t->stats.raw++;
	t->stats.raw_bytes += hdr.size;
	t->stats.frames += st.nr;
	return seq_put(t, rec->seq, id);
}

struct stack_ids *stack_ids__new(unwind_rule_fn *rule_of, void *rule_ctx,
				 struct resolver *resolver)
{
	struct stack_ids *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->rule_of = rule_of;
	t->rule_ctx = rule_ctx;
	t->resolver = resolver;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->known_lock, NULL);
	pthread_cond_init(&t->added, NULL);
	if (table_reserve(&t->seqs, 4096) || table_reserve(&t->known, 1024)) {
		stack_ids__delete(t);
		return NULL;
	}
	return t;
}

void stack_ids__set_end_fn(struct stack_ids *t, void (*fn)(void *ctx, uint32_t tid, uint64_t end),
			   void *ctx)
{
	t->end_fn = fn;
	t->end_ctx = ctx;
}

void stack_ids__close(struct stack_ids *t)
{
	pthread_mutex_lock(&t->lock);
	t->closed = true;
	pthread_cond_broadcast(&t->added);
	pthread_mutex_unlock(&t->lock);
}

void stack_ids__stats(struct stack_ids *t, struct stack_ids_stats *st)
{
	pthread_mutex_lock(&t->lock);
	*st = t->stats;
	pthread_mutex_unlock(&t->lock);
}

void stack_ids__delete(struct stack_ids *t)
{
	if (!t)
		return;
	free(t->seqs.slots);
	free(t->known.slots);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->known_lock);
	pthread_cond_destroy(&t->added);
	free(t);
}
