// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash-ips.h"
#include "util/track/resolver.h"
#include "util/track/stack-ids.h"
#include "util/u64-map.h"
#include "util/util.h"

struct known_end {
	uint32_t tid;
	uint64_t end;
};

/*
 * A process's stacks, by the hash of (pid, ips): one table a process, for
 * the processes of a tree run a few at a time.  One table for all of a
 * make -j2's 67,000 stacks took 4 MiB, every lookup out of the caches.
 */
struct pid_stacks {
	int32_t pid;
	struct u64_map known;	/* hash -> id */
};

struct stack_ids {
	unwind_rule_fn *rule_of;
	void *rule_ctx;
	struct resolver *resolver;
	void (*end_fn)(void *ctx, uint32_t tid, uint64_t end);
	void *end_ctx;
	struct known_end ends[1024];

	pthread_mutex_t known_lock;	/* the stacks poller's and the events poller's */
	struct pid_stacks *procs;
	size_t nprocs, procs_cap;
	struct u64_map proc_index;	/* pid -> index in procs */
	struct pid_stacks *last;	/* the process of the last stack: most often the next's */
	uint64_t nstacks;

	pthread_mutex_t lock;
	pthread_cond_t added;
	struct u64_map seqs;	/* seq -> id, until taken */
	bool closed;
	unsigned int waiters;	/* in stack_ids__take(): a put wakes them, else no syscall */
	struct stack_ids_stats stats;
};

static int seq_put(struct stack_ids *t, uint64_t seq, uint64_t id)
{
	uint64_t *val;

	pthread_mutex_lock(&t->lock);
	val = u64_map__get(&t->seqs, seq);
	if (!val) {
		/* no room: stop waiting for any seq rather than for this one forever */
		t->closed = true;
		pthread_cond_broadcast(&t->added);
		pthread_mutex_unlock(&t->lock);
		return -ENOMEM;
	}
	*val = id;
	if (t->waiters)
		pthread_cond_broadcast(&t->added);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

uint64_t stack_ids__take(struct stack_ids *t, uint64_t seq)
{
	uint64_t id = 0;
	bool found;

	pthread_mutex_lock(&t->lock);
	while (!(found = u64_map__take(&t->seqs, seq, &id)) && !t->closed) {
		t->waiters++;
		pthread_cond_wait(&t->added, &t->lock);
		t->waiters--;
	}
	if (!found)
		t->stats.unpublished++;
	pthread_mutex_unlock(&t->lock);
	return id;
}

/*
 * pid's table of stacks, made the first time; NULL when out of memory.  A
 * new table may move the others: only the last one is kept, from call to call.
 */
static struct pid_stacks *pid_stacks(struct stack_ids *t, int32_t pid)
{
	struct pid_stacks *ps;
	bool added;

	if (t->last && t->last->pid == pid)
		return t->last;
	ps = u64_map__element(&t->proc_index, (uint32_t)pid, (void **)&t->procs, &t->nprocs,
			      &t->procs_cap, sizeof(*t->procs), &added);
	if (ps && added)
		ps->pid = pid;
	return t->last = ps;
}

/*
 * The id of a stack, a new one (sent to the resolver) the first time.  As
 * in BPF with fp, stacks are told apart by a 64-bit hash of (pid, ips).
 * Ids start at STACK_IDS_FIRST, above those BPF gives with fp.
 */
static uint64_t stack_id(struct stack_ids *t, struct mt_stack_record *st)
{
	uint64_t hash = hash_ips((uint32_t)st->pid, (const uint64_t *)st->ips, st->nr);
	uint64_t *known, id = 0;
	struct pid_stacks *ps;

	pthread_mutex_lock(&t->known_lock);
	ps = pid_stacks(t, st->pid);
	/* the room first: once the resolver has the stack, the id must be kept */
	if (!ps || u64_map__reserve(&ps->known, 1))
		goto out;
	known = u64_map__find(&ps->known, hash);
	if (known) {
		id = *known;
		goto out;
	}
	st->id = STACK_IDS_FIRST + t->nstacks;
	if (resolver__push(t->resolver, st, offsetof(struct mt_stack_record, ips) +
			   st->nr * sizeof(st->ips[0])))
		goto out;
	*u64_map__get(&ps->known, hash) = st->id;
	id = st->id;
	t->stats.stacks = ++t->nstacks;
out:
	pthread_mutex_unlock(&t->known_lock);
	return id;
}

uint64_t stack_ids__intern(struct stack_ids *t, int32_t pid, const uint64_t *ips, uint32_t nr)
{
	struct mt_stack_record st = { .kind = MT_STACK, .pid = pid };

	if (!nr)
		return 0;
	st.nr = nr < MT_MAX_FRAMES ? nr : MT_MAX_FRAMES;
	memcpy(st.ips, ips, st.nr * sizeof(st.ips[0]));
	return stack_id(t, &st);
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
	if (u64_map__reserve(&t->seqs, 2048)) {
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
	u64_map__exit(&t->seqs);
	while (t->nprocs)
		u64_map__exit(&t->procs[--t->nprocs].known);
	free(t->procs);
	u64_map__exit(&t->proc_index);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->known_lock);
	pthread_cond_destroy(&t->added);
	free(t);
}
