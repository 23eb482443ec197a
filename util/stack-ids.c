// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "resolver.h"
#include "stack-ids.h"

struct known_stack {
	uint64_t hash;
	uint64_t id;		/* 0: empty slot */
};

struct seq_slot {
	uint64_t seq;		/* 0: empty slot */
	uint64_t id;
};

struct stack_ids {
	unwind_rule_fn *rule_of;
	void *rule_ctx;
	struct resolver *resolver;

	/* the poller's own: (pid, ips) hash -> id */
	struct known_stack *known;
	size_t known_cap, nknown;

	pthread_mutex_t lock;
	pthread_cond_t added;
	struct seq_slot *seqs;	/* open addressing, linear probing */
	size_t seqs_cap, nseqs;
	bool closed;
	unsigned int waiters;	/* in stack_ids__take(): a put wakes them, else no syscall */
	struct stack_ids_stats stats;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ULL >> 17) & (cap - 1);
}

static int seqs_grow(struct stack_ids *t)
{
	size_t cap = t->seqs_cap ? 2 * t->seqs_cap : 4096, i, j;
	struct seq_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->seqs_cap; i++) {
		if (!t->seqs[i].seq)
			continue;
		for (j = slot_of(t->seqs[i].seq, cap); slots[j].seq; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->seqs[i];
	}
	free(t->seqs);
	t->seqs = slots;
	t->seqs_cap = cap;
	return 0;
}

static struct seq_slot *seq_find(struct stack_ids *t, uint64_t seq)
{
	size_t i;

	for (i = slot_of(seq, t->seqs_cap); t->seqs[i].seq; i = (i + 1) & (t->seqs_cap - 1))
		if (t->seqs[i].seq == seq)
			return &t->seqs[i];
	return NULL;
}

/* linear probing without tombstones: later slots of the run move back */
static void seq_remove(struct stack_ids *t, struct seq_slot *slot)
{
	size_t mask = t->seqs_cap - 1, i = slot - t->seqs, j = i, home;

	for (;;) {
		t->seqs[i].seq = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!t->seqs[j].seq)
				goto done;
			home = slot_of(t->seqs[j].seq, t->seqs_cap);
			/* j's entry may fill the hole at i unless its home lies in (i, j] */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->seqs[i] = t->seqs[j];
		i = j;
	}
done:
	t->nseqs--;
}

static int seq_put(struct stack_ids *t, uint64_t seq, uint64_t id)
{
	size_t i;

	pthread_mutex_lock(&t->lock);
	if ((t->nseqs + 1) * 2 > t->seqs_cap && seqs_grow(t) && t->nseqs + 1 == t->seqs_cap) {
		/* no room: stop waiting for any seq rather than for this one forever */
		t->closed = true;
		pthread_cond_broadcast(&t->added);
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	for (i = slot_of(seq, t->seqs_cap); t->seqs[i].seq; i = (i + 1) & (t->seqs_cap - 1))
		;
	t->seqs[i] = (struct seq_slot){ .seq = seq, .id = id };
	t->nseqs++;
	if (t->waiters)
		pthread_cond_broadcast(&t->added);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

uint64_t stack_ids__take(struct stack_ids *t, uint64_t seq)
{
	struct seq_slot *slot;
	uint64_t id = 0;

	pthread_mutex_lock(&t->lock);
	while (!(slot = seq_find(t, seq)) && !t->closed) {
		t->waiters++;
		pthread_cond_wait(&t->added, &t->lock);
		t->waiters--;
	}
	if (slot) {
		id = slot->id;
		seq_remove(t, slot);
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

static int known_grow(struct stack_ids *t)
{
	size_t cap = t->known_cap ? 2 * t->known_cap : 1024, i, j;
	struct known_stack *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->known_cap; i++) {
		if (!t->known[i].id)
			continue;
		for (j = slot_of(t->known[i].hash, cap); slots[j].id; j = (j + 1) & (cap - 1))
			;
		slots[j] = t->known[i];
	}
	free(t->known);
	t->known = slots;
	t->known_cap = cap;
	return 0;
}

/*
 * The id of a stack, a new one (sent to the resolver) the first time.  As
 * in BPF with fp, stacks are told apart by a 64-bit hash of (pid, ips).
 */
static uint64_t stack_id(struct stack_ids *t, struct mt_stack_record *st)
{
	uint64_t hash = hash_stack(st->pid, st->ips, st->nr);
	size_t i;

	if ((t->nknown + 1) * 2 > t->known_cap && known_grow(t))
		return 0;
	for (i = slot_of(hash, t->known_cap); t->known[i].id; i = (i + 1) & (t->known_cap - 1))
		if (t->known[i].hash == hash)
			return t->known[i].id;
	st->id = ++t->nknown;
	if (resolver__push(t->resolver, st, offsetof(struct mt_stack_record, ips) +
			   st->nr * sizeof(st->ips[0]))) {
		t->nknown--;
		return 0;
	}
	t->known[i] = (struct known_stack){ .hash = hash, .id = st->id };
	return st->id;
}

int stack_ids__add_raw(struct stack_ids *t, const struct mt_raw_stack *rec, uint32_t len)
{
	struct mt_stack_record st = { .kind = MT_STACK, .pid = rec->pid };
	struct mt_raw_stack hdr = *rec;
	uint64_t id = 0;

	if (len < sizeof(*rec))
		return -EINVAL;
	if (hdr.size > len - sizeof(*rec))
		hdr.size = len - sizeof(*rec);
	st.nr = unwind_raw_stack(&hdr, rec->data, t->rule_of, t->rule_ctx, st.ips,
				 MT_MAX_FRAMES);
	if (st.nr)
		id = stack_id(t, &st);
	t->stats.raw++;
	t->stats.raw_bytes += hdr.size;
	t->stats.frames += st.nr;
	t->stats.stacks = t->nknown;
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
	pthread_cond_init(&t->added, NULL);
	if (seqs_grow(t) || known_grow(t)) {
		stack_ids__delete(t);
		return NULL;
	}
	return t;
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
	free(t->seqs);
	free(t->known);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->added);
	free(t);
}
