// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/track/merge.h"
#include "util/u64-map.h"
#include "util/util.h"

#define NO_BOUND	UINT64_MAX
/* how far past the last clock read a record may be stamped before we read it again */
#define CLOCK_SLACK_NS	10000000ULL

enum source_kind { SRC_RING, SRC_BPF };

struct source {
	enum source_kind kind;
	struct merge_proc *proc;
	uint64_t floor;			/* its next event is at least this late */
	bool queued;			/* head is valid */
	struct mt_alloc_event head;
	uint32_t head_len;
	struct shim_ring ring;		/* SRC_RING */
};

struct bpf_queue {
	struct mt_alloc_event *ev;
	size_t cap, first, n;		/* cap: a power of two */
};

struct merge_proc {
	int32_t pid;
	bool exited;
	unsigned int refs;
	struct source **rings;
	size_t nrings, rings_cap;
	struct source bpf;
	struct bpf_queue queue;
	uint64_t low;			/* this pass: no event of this process before it is unseen */
};

struct heap_item {
	uint64_t ts;
	unsigned int rank;		/* at equal times, frees first */
	struct source *src;
};

struct merger {
	struct merge_ops ops;
	struct merge_proc **procs;	/* live and exited, until drained */
	size_t nprocs, procs_cap;
	struct u64_map by_pid;		/* pid -> index + 1 in procs of the live entry, 0: none */
	uint64_t bpf_bound;
	uint64_t seen_at;		/* this pass's start: rings seen empty are bound by it */
	uint64_t horizon;		/* a record stamped later was not written yet */
	bool all;			/* this pass drains everything, bounds or not */
	struct heap_item *heap;
	size_t nheap, heap_cap;
	struct merge_stats st;
	uint64_t retired_prod, retired_cons;
};

struct merger *merger__new(const struct merge_ops *ops)
{
	struct merger *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->ops = *ops;
	return m;
}

static void read_unserved(struct merger *m, struct source *s)
{
	uint32_t n = shim_ring__unserved(&s->ring);

	if (n && m->ops.unserved)
		m->ops.unserved(m->ops.ctx, s->ring.pid, n);
}

static void free_ring(struct merger *m, struct source *s)
{
	read_unserved(m, s);
	m->retired_prod += s->ring.cons;
	m->retired_cons += s->ring.cons;
	shim_ring__retire(&s->ring);
	shim_ring__unmap(&s->ring);
	free(s);
}

static void free_proc(struct merger *m, struct merge_proc *p)
{
	size_t i;

	for (i = 0; i < p->nrings; i++)
		free_ring(m, p->rings[i]);
	free(p->rings);
	free(p->queue.ev);
	free(p);
}

void merger__delete(struct merger *m)
{
	size_t i;

	if (!m)
		return;
	m->ops.unserved = NULL;		/* read at the end of the run, before its summary */
	for (i = 0; i < m->nprocs; i++)
		free_proc(m, m->procs[i]);
	free(m->procs);
	free(m->heap);
	u64_map__exit(&m->by_pid);
	free(m);
}

struct merge_proc *merger__proc(struct merger *m, int32_t pid)
{
	uint64_t *slot = u64_map__get(&m->by_pid, (uint32_t)pid);
	struct merge_proc *p;

	if (!slot)
		return NULL;
	if (*slot)
		return m->procs[*slot - 1];
	if (grow_array((void **)&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->bpf.kind = SRC_BPF;
	p->bpf.proc = p;
	m->procs[m->nprocs++] = p;
	*slot = m->nprocs;
	return p;
}

int merger__add_ring(struct merger *m, struct merge_proc *p, struct shim_ring *r)
{
	struct source *s;

	if (p->nrings >= MERGE_RINGS_PER_PROC || m->st.rings >= MERGE_RINGS_MAX)
		return -ENOSPC;
	if (grow_array((void **)&p->rings, &p->rings_cap, p->nrings + 1, sizeof(*p->rings)))
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->kind = SRC_RING;
	s->proc = p;
	s->ring = *r;
	p->rings[p->nrings++] = s;
	m->st.rings++;
	return 0;
}

static int queue_push(struct bpf_queue *q, const struct mt_alloc_event *e)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 64, i;
		struct mt_alloc_event *ev = malloc(cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		for (i = 0; i < q->n; i++)
			ev[i] = q->ev[(q->first + i) & (q->cap - 1)];
		free(q->ev);
		q->ev = ev;
		q->cap = cap;
		q->first = 0;
	}
	q->ev[(q->first + q->n++) & (q->cap - 1)] = *e;
	return 0;
}

int merger__add_bpf(struct merger *m, const struct mt_alloc_event *e)
{
	struct merge_proc *p = merger__proc(m, e->pid);

	if (!p || queue_push(&p->queue, e))
		return -ENOMEM;
	m->st.bpf_queued++;
	return 0;
}

void merger__set_bpf_bound(struct merger *m, uint64_t bound)
{
	if (bound > m->bpf_bound)
		m->bpf_bound = bound;
}

void merger__exited(struct merger *m, int32_t pid)
{
	uint64_t *slot = u64_map__get(&m->by_pid, (uint32_t)pid);

	if (!slot || !*slot)
		return;
	m->procs[*slot - 1]->exited = true;
	*slot = 0;
}

void merger__read_unserved(struct merger *m)
{
	size_t i, j;

	for (i = 0; i < m->nprocs; i++)
		for (j = 0; j < m->procs[i]->nrings; j++)
			read_unserved(m, m->procs[i]->rings[j]);
}

void merger__ref(struct merge_proc *p)
{
	p->refs++;
}

void merger__unref(struct merger *m, struct merge_proc *p)
{
	(void)m;
	if (p->refs)
		p->refs--;
}

void merger__drop_rings(struct merger *m, struct merge_proc *p)
{
	size_t i;

	for (i = 0; i < p->nrings; i++) {
		struct shim_ring *r = &p->rings[i]->ring;

		m->st.lost += shim_ring__prod(r) - r->cons;
		free_ring(m, p->rings[i]);
	}
	m->st.rings -= p->nrings;
	p->nrings = 0;
}

static unsigned int rank_of(uint32_t kind)
{
	return kind == MT_FREE || kind == MT_MUNMAP ? 0 : 1;
}

static bool item_before(const struct heap_item *a, const struct heap_item *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->rank < b->rank;
}

static int heap_push(struct merger *m, struct source *s)
{
	struct heap_item it = { .ts = s->head.ts, .rank = rank_of(s->head.kind), .src = s };
	size_t i;

	if (grow_array((void **)&m->heap, &m->heap_cap, m->nheap + 1, sizeof(*m->heap)))
		return -ENOMEM;
	for (i = m->nheap++; i > 0 && item_before(&it, &m->heap[(i - 1) / 2]); i = (i - 1) / 2)
		m->heap[i] = m->heap[(i - 1) / 2];
	m->heap[i] = it;
	return 0;
}

static struct heap_item heap_pop(struct merger *m)
{
	struct heap_item top = m->heap[0], last = m->heap[--m->nheap];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < m->nheap) {
		if (c + 1 < m->nheap && item_before(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!item_before(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (m->nheap)
		m->heap[i] = last;
	return top;
}

static void lower(struct merger *m, struct merge_proc *p, uint64_t bound)
{
	if (!m->all && bound < p->low)
		p->low = bound;
}

/*
 * The time before anything of this pass is read: a record reserved after
 * our read of a ring's position is stamped later than this.  Neither the
 * clock read nor the loads may move across the fence.
 */
static uint64_t observe_time(void)
{
	uint64_t t = now_ns();

#if defined(__x86_64__)
	__builtin_ia32_lfence();
#endif
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return t;
}

/*
 * A record is stamped before it is committed, so never later than now: one
 * that is would hold its process's events back until the end of the run,
 * with its threads waiting for room all along.
 */
static bool stamped_in_future(struct merger *m, struct source *s)
{
	if (s->head.ts <= m->horizon)
		return false;
	m->horizon = now_ns() + CLOCK_SLACK_NS;
	if (s->head.ts <= m->horizon)
		return false;
	s->ring.corrupt = "a timestamp from the future";
	return true;
}

/* the ring's next event into s->head; false when it has none now, and its process's bound */
static bool ring_next(struct merger *m, struct source *s)
{
	struct shim_stack stack;
	uint64_t id;

	for (;;) {
		enum shim_head h = shim_ring__head(&s->ring, &s->head, &stack, &s->head_len);

		switch (h) {
		case SHIM_HEAD_EVENT:
			return !stamped_in_future(m, s);
		case SHIM_HEAD_NOP:
			shim_ring__consume(&s->ring, s->head_len);
			continue;
		case SHIM_HEAD_STACK:
			id = m->ops.stack(m->ops.ctx, s->ring.pid, stack.ips, stack.nr);
			if (shim_ring__add_stack(&s->ring, id))
				id = 0;
			shim_ring__consume(&s->ring, s->head_len);
			m->st.stacks++;
			continue;
		case SHIM_HEAD_EMPTY:
			if (m->seen_at > s->floor)
				s->floor = m->seen_at;
			lower(m, s->proc, s->floor);
			return false;
		case SHIM_HEAD_PENDING:
			lower(m, s->proc, s->floor);
			return false;
		case SHIM_HEAD_CORRUPT:
			return false;
		}
	}
}

static bool bpf_next(struct merger *m, struct source *s)
{
	struct bpf_queue *q = &s->proc->queue;

	if (!q->n) {
		lower(m, s->proc, m->bpf_bound);
		return false;
	}
	s->head = q->ev[q->first];
	return true;
}

static bool source_next(struct merger *m, struct source *s)
{
	return s->queued = s->kind == SRC_RING ? ring_next(m, s) : bpf_next(m, s);
}

static void release_ring(struct merger *m, struct source *s, bool force)
{
	uint64_t since;

	shim_ring__release(&s->ring, force, &since);
	if (since)
		m->ops.waited(m->ops.ctx, s->proc->pid, since);
}

static void source_consume(struct merger *m, struct source *s)
{
	struct bpf_queue *q = &s->proc->queue;

	if (s->kind == SRC_RING) {
		shim_ring__consume(&s->ring, s->head_len);
		release_ring(m, s, false);	/* in strides; the pass ends with a release */
	} else {
		q->first = (q->first + 1) & (q->cap - 1);
		q->n--;
		m->st.bpf_queued--;
	}
	if (s->head.ts > s->floor)
		s->floor = s->head.ts;
}

/* a corrupt ring is dropped, with everything its process sends through the shim */
static void drop_corrupt(struct merger *m, struct merge_proc *p)
{
	size_t i;

	for (i = 0; i < p->nrings; i++) {
		struct shim_ring *r = &p->rings[i]->ring;

		if (r->corrupt) {
			m->ops.corrupt(m->ops.ctx, r->pid, r->tid, r->corrupt);
			merger__drop_rings(m, p);
			return;
		}
	}
}

/* nothing of the process is in the heap yet: a corrupt ring can go with its siblings */
static void queue_heads(struct merger *m, struct merge_proc *p)
{
	size_t i;

	p->low = NO_BOUND;
	for (i = 0; i < p->nrings; i++)
		source_next(m, p->rings[i]);
	drop_corrupt(m, p);
	for (i = 0; i < p->nrings; i++)
		if (p->rings[i]->queued)
			heap_push(m, p->rings[i]);
	if (source_next(m, &p->bpf))
		heap_push(m, &p->bpf);
}

/* an exited process with nothing left and no connection is forgotten */
static bool proc_done(const struct merge_proc *p)
{
	size_t i;

	if (!p->exited || p->refs || p->queue.n)
		return false;
	for (i = 0; i < p->nrings; i++)
		if (shim_ring__prod(&p->rings[i]->ring) != p->rings[i]->ring.cons)
			return false;
	return true;
}

static void forget_done(struct merger *m)
{
	size_t i, kept = 0;

	for (i = 0; i < m->nprocs; i++) {
		struct merge_proc *p = m->procs[i];

		if (proc_done(p)) {
			m->st.rings -= p->nrings;
			free_proc(m, p);
			continue;
		}
		m->procs[kept++] = p;
		if (!p->exited)
			*u64_map__get(&m->by_pid, (uint32_t)p->pid) = kept;
	}
	m->nprocs = kept;
}

/* whether s's head comes before every head in the heap */
static bool heads_heap(const struct merger *m, const struct source *s)
{
	struct heap_item it = { .ts = s->head.ts, .rank = rank_of(s->head.kind) };

	return !m->nheap || item_before(&it, &m->heap[0]);
}

/*
 * Emits s's head and what follows it in s for as long as it stays ahead of
 * every other source: a thread's records come in runs (a time slice each),
 * and a run needs the heap only at its end.
 */
static uint64_t emit_run(struct merger *m, struct source *s)
{
	uint64_t n = 0;

	do {
		m->ops.emit(m->ops.ctx, &s->head);
		source_consume(m, s);
		n++;
		if (!source_next(m, s))
			return n;
	} while (s->head.ts <= s->proc->low && heads_heap(m, s));
	heap_push(m, s);
	return n;
}

uint64_t merger__pass(struct merger *m, bool all)
{
	uint64_t emitted = 0;
	size_t i, j;

	m->all = all;
	m->seen_at = observe_time();
	m->horizon = m->seen_at + CLOCK_SLACK_NS;
	m->nheap = 0;
	for (i = 0; i < m->nprocs; i++)
		queue_heads(m, m->procs[i]);
	while (m->nheap) {
		struct heap_item it = heap_pop(m);

		if (it.ts <= it.src->proc->low)
			emitted += emit_run(m, it.src);
		/* else its process waits for an earlier event */
	}
	for (i = 0; i < m->nprocs; i++) {
		struct merge_proc *p = m->procs[i];

		drop_corrupt(m, p);
		for (j = 0; j < p->nrings; j++)
			release_ring(m, p->rings[j], true);
	}
	m->st.events += emitted;
	forget_done(m);
	return emitted;
}

/*
 * What a thread may have reserved and not written when its process ended:
 * a record of each kind's largest, in its call and in a signal handler's
 * that interrupted it.  exit_group() ends threads wherever they are; a
 * call of theirs that never returned lost nothing.
 */
#define IN_FLIGHT_MAX	(2 * (sizeof(struct shim_stack_rec) + SHIM_MAX_FRAMES * sizeof(__u64)))

void merger__stalled(struct merger *m)
{
	size_t i, j;

	for (i = 0; i < m->nprocs; i++) {
		struct merge_proc *p = m->procs[i];

		if (!p->exited)
			continue;	/* its thread may be writing the record still */
		for (j = 0; j < p->nrings; j++) {
			struct shim_ring *r = &p->rings[j]->ring;

			if (!r->corrupt && shim_ring__prod(r) - r->cons > IN_FLIGHT_MAX)
				r->corrupt = "its write position is past its last record";
		}
		drop_corrupt(m, p);
	}
}

bool merger__busy(struct merger *m)
{
	size_t i, j;

	for (i = 0; i < m->nprocs; i++) {
		struct merge_proc *p = m->procs[i];

		for (j = 0; j < p->nrings; j++) {
			struct shim_ring *r = &p->rings[j]->ring;

			if (shim_ring__producer_waits(r) || shim_ring__prod(r) - r->cons >= r->size / 2)
				return true;
		}
	}
	return false;
}

void merger__stats(struct merger *m, struct merge_stats *st)
{
	size_t i, j;

	*st = m->st;
	st->prod = m->retired_prod;
	st->cons = m->retired_cons;
	st->rings_live = 0;
	st->size = 0;
	st->fill_max = 0;
	for (i = 0; i < m->nprocs; i++) {
		struct merge_proc *p = m->procs[i];

		for (j = 0; j < p->nrings; j++) {
			struct shim_ring *r = &p->rings[j]->ring;
			uint64_t prod = shim_ring__prod(r);

			/* a producer waiting for room has reserved beyond it: not written */
			if (prod - r->cons > r->size)
				prod = r->cons + r->size;

			st->prod += prod;
			st->cons += r->cons;
			st->size += r->size;
			st->rings_live++;
			if (prod - r->cons > st->fill_max)
				st->fill_max = prod - r->cons;
		}
	}
}
