// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/track/encoder.h"
#include "util/track/resolver.h"
#include "util/u64-map.h"
#include "util/util.h"

#define QUEUE_SLOTS	1024
#define BATCH_MAX	256
#define FLUSH_NS	(2 * NSEC_PER_SEC)	/* between side records, and before the first */
/*
 * An idle resolver is woken by the first stack queued, then lingers until
 * WAKE_AT are there or LINGER_NS have passed: a tree sends stacks a few
 * at a time, and a wake-up each (67,000 in a make -j2) cost the two
 * threads more than resolving them.  Nobody waits for a resolved stack
 * before the end of the run, which wakes it at once.
 */
#define WAKE_AT		64
#define LINGER_NS	(5 * NSEC_PER_MSEC)
#define IPS_MAX		(1U << 20)	/* addresses kept, 64 MiB with their index: then forgotten at once */
#define STREAM_CHUNK	(128U << 10)	/* packed bytes compressed at a time, during the run */

struct frame_entry {
	struct sym_frame f;
	uint64_t ip;		/* the first address seen for it */
	uint64_t id;		/* 0: empty slot */
};

/* a module of the frames, as the first process seen to map it mapped it */
struct module_entry {
	struct sym_map_info map;
};

/*
 * An address of a process resolved before, in mappings of the same
 * generation: its frame ids are where its first stack put them.  A tree
 * sends tens of thousands of distinct stacks over a few thousand distinct
 * return addresses (make -j2 of ten files: 67,000 stacks, 6,000 frames).
 */
struct ip_entry {
	uint64_t ip, gen;
	int32_t pid;
	uint32_t n;
	size_t first;		/* in frame_ids */
};

/*
 * The stack resolved last: the next one of its process often differs only
 * in its innermost frames (a thread's calls from one place), and the outer
 * ones take its frame ids at once, without a lookup per address.  at[i] is
 * where the frame ids of ips[i] begin in frame_ids; at[nr], where they end.
 * As with the addresses kept, only frames found in the mappings of gen
 * are taken (kept[i]).
 */
struct last_stack {
	int32_t pid;
	uint64_t gen;		/* 0: none */
	uint32_t nr;
	uint64_t ips[MT_MAX_FRAMES];
	size_t at[MT_MAX_FRAMES + 1];
	bool kept[MT_MAX_FRAMES];
};

struct resolver {
	struct symbolizer *sym;
	struct pstats *stats;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, drained;

	struct mt_stack_record *queue;	/* QUEUE_SLOTS ring */
	unsigned int head, count;
	bool finishing;

	/* the resolver thread's own, read by resolver__pack_*() after the join */
	struct mt_stack_record *deferred;	/* processes not described yet */
	size_t ndeferred, deferred_cap;
	struct frame_entry *frames;	/* open addressing, power of two */
	size_t frames_cap, nframes;
	uint64_t nstacks;
	uint64_t *frame_ids;
	size_t nframe_ids, frame_ids_cap;
	struct module_entry *modules;
	size_t nmodules, modules_cap;
	struct u64_map module_index;	/* its path's address -> modules[] index */
	struct ip_entry *ips;
	size_t nips, ips_cap;
	struct u64_map ip_index;	/* ip_key() -> ips[] index */
	struct last_stack last;

	/*
	 * The Module, Frame and Stack records, packed as they are made, on
	 * this thread, and compressed as they go into the trailer's first
	 * frame: the end of a run only finishes it (a clang's 28,000 took 5
	 * to 7 ms of its end to pack and compress, a make's 73,000 7.5 ms).
	 * The side records copy the packed bytes.
	 */
	msgpack_sbuffer packed;
	msgpack_packer packer;
	int pack_err;
	ZSTD_CCtx *zc;		/* NULL: no stream (resolver__compress_with()) */
	bool zc_early;		/* compress during the run, not all at its end */
	size_t zfed;		/* packed bytes compressed */
	char *zout;
	size_t zout_len, zout_cap;

	/* side records: what the last flush packed */
	void (*flush)(void *ctx, resolver_pack_fn *pack, void *pack_arg);
	void *flush_ctx;
	uint64_t flushed_ns;
	size_t flushed_bytes;
};

/*
 * A function's frame is told by module, symbol and offset; an inlined one
 * (offset 0) by its file:line too.  The symbolizer's strings live as long
 * as it does: their addresses are their identity.
 */
static uint64_t frame_hash(const struct sym_frame *f)
{
	uint64_t h = (uintptr_t)f->module * 0x9e3779b97f4a7c15ULL;

	h ^= (uintptr_t)f->symbol + (h << 6);
	h ^= f->offset * 0xff51afd7ed558ccdULL;
	h ^= ((uintptr_t)f->file + f->line + f->inlined) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 31);
}

static bool same_frame(const struct frame_entry *e, const struct sym_frame *f)
{
	return e->f.module == f->module && e->f.symbol == f->symbol &&
	       e->f.offset == f->offset && e->f.file == f->file && e->f.line == f->line &&
	       e->f.inlined == f->inlined;
}

static int rehash_frames(struct resolver *r)
{
	size_t cap = r->frames_cap ? 2 * r->frames_cap : 1024, i;
	struct frame_entry *old = r->frames, *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < r->frames_cap; i++) {
		size_t j;

		if (!old[i].id)
			continue;
		for (j = frame_hash(&old[i].f) & (cap - 1); slots[j].id; j = (j + 1) & (cap - 1))
			;
		slots[j] = old[i];
	}
	free(old);
	r->frames = slots;
	r->frames_cap = cap;
	return 0;
}

/* what the symbolizer does not know is left out: report names the frame module+0xoffset */
static const char *known(const char *s)
{
	return s && strcmp(s, SYM_UNKNOWN) ? s : NULL;
}

static void pack_frame(msgpack_packer *pk, const struct frame_entry *f)
{
	struct frame_record rec = {
		.id = f->id, .ip = f->ip, .offset = f->f.offset,
		.module = known(f->f.module), .symbol = known(f->f.symbol),
		.file = f->f.file, .line = f->f.line, .inlined = f->f.inlined,
	};

	pack_frame_record(pk, &rec);
}

/* a write that fails leaves a record cut, and the trailer unreadable: said at the end */
static int packed_write(void *data, const char *buf, size_t len)
{
	struct resolver *r = data;

	if (r->pack_err || msgpack_sbuffer_write(&r->packed, buf, len)) {
		r->pack_err = -ENOMEM;
		return -1;
	}
	return 0;
}

/* a record cut by a failed write is taken back whole */
static void end_record(struct resolver *r, size_t start)
{
	if (r->pack_err && r->packed.size > start)
		r->packed.size = start;
}

static void pack_module(msgpack_packer *pk, const struct module_entry *e)
{
	struct module_record rec = {
		.module = e->map.module, .build_id = e->map.build_id,
		.start = e->map.start, .end = e->map.end, .offset = e->map.pgoff,
	};

	pack_module_record(pk, &rec);
}

static void pack_new_module(struct resolver *r, const struct module_entry *e)
{
	size_t start = r->packed.size;

	pack_module(&r->packer, e);
	end_record(r, start);
}

static void pack_new_frame(struct resolver *r, const struct frame_entry *f)
{
	size_t start = r->packed.size;

	pack_frame(&r->packer, f);
	end_record(r, start);
}

/* a stack resolved: its frame ids, from first on in frame_ids, are its own for good */
static void pack_new_stack(struct resolver *r, const struct mt_stack_record *rec, size_t first)
{
	size_t start = r->packed.size;

	pack_stack_record(&r->packer, rec->id, rec->pid, &r->frame_ids[first],
			  r->nframe_ids - first);
	end_record(r, start);
}

/*
 * ip as an address in its module's first mapping, the one its Module record
 * gives: a frame's ip then means the same place whichever process it was
 * first seen in (their libraries are mapped at other addresses).  An
 * address not in the module (no mapping, or the module not recorded) is
 * kept as it is.
 */
static uint64_t module_ip(struct resolver *r, const struct sym_map_info *m, uint64_t ip)
{
	const struct sym_map_info *first;
	struct module_entry *e;
	uint64_t foff;
	bool added;

	if (!m->module)
		return ip;
	e = u64_map__element(&r->module_index, (uintptr_t)m->module, (void **)&r->modules,
			     &r->nmodules, &r->modules_cap, sizeof(*e), &added);
	if (!e)
		return ip;
	if (added) {
		e->map = *m;
		pack_new_module(r, e);
	}
	first = &e->map;
	foff = ip - m->start + m->pgoff;
	if (foff < first->pgoff || foff - first->pgoff >= first->end - first->start)
		return ip;
	return first->start + (foff - first->pgoff);
}

/* the id of a frame, a new one the first time it is seen */
static uint64_t frame_id(struct resolver *r, const struct sym_frame *f, uint64_t ip)
{
	size_t i;

	if ((r->nframes + 1) * 2 > r->frames_cap && rehash_frames(r))
		return 0;
	for (i = frame_hash(f) & (r->frames_cap - 1); r->frames[i].id;
	     i = (i + 1) & (r->frames_cap - 1))
		if (same_frame(&r->frames[i], f))
			return r->frames[i].id;
	r->frames[i] = (struct frame_entry){ .f = *f, .ip = ip, .id = ++r->nframes };
	pack_new_frame(r, &r->frames[i]);
	return r->frames[i].id;
}

static uint64_t ip_key(pid_t pid, uint64_t gen, uint64_t ip)
{
	return (ip * 0x9e3779b97f4a7c15ULL) ^ (gen * 0xc2b2ae3d27d4eb4fULL) ^ (uint32_t)pid;
}

static const struct ip_entry *known_ip(const struct resolver *r, pid_t pid, uint64_t gen,
				       uint64_t ip)
{
	const uint64_t *i = u64_map__find(&r->ip_index, ip_key(pid, gen, ip));
	const struct ip_entry *e = i && *i ? &r->ips[*i - 1] : NULL;

	return e && e->ip == ip && e->gen == gen && e->pid == pid ? e : NULL;
}

/* an address's frame ids, kept for the next stack; one whose key is taken stays out */
static void remember_ip(struct resolver *r, const struct ip_entry *e)
{
	uint64_t *i;

	/* a tree of a hundred thousand processes would keep each one's addresses */
	if (r->nips == IPS_MAX) {
		u64_map__exit(&r->ip_index);
		u64_map__init(&r->ip_index);
		r->nips = 0;
	}
	if (grow_array((void **)&r->ips, &r->ips_cap, r->nips + 1, sizeof(*r->ips)))
		return;
	i = u64_map__get(&r->ip_index, ip_key(e->pid, e->gen, e->ip));
	if (!i || *i)
		return;
	r->ips[r->nips] = *e;
	*i = ++r->nips;		/* a new key's value is 0: indices count from 1 here */
}

/* the frame ids of ip, appended from an earlier stack's; false when none is known */
static bool append_known(struct resolver *r, pid_t pid, uint64_t gen, uint64_t ip)
{
	const struct ip_entry *e = gen ? known_ip(r, pid, gen, ip) : NULL;
	size_t first;

	if (!e || grow_array((void **)&r->frame_ids, &r->frame_ids_cap, r->nframe_ids + e->n,
			     sizeof(*r->frame_ids)))
		return false;
	first = e->first;	/* e stays valid: only frame_ids moved */
	memcpy(&r->frame_ids[r->nframe_ids], &r->frame_ids[first], e->n * sizeof(*r->frame_ids));
	r->nframe_ids += e->n;
	return true;
}

/*
 * How many outer frames of rec are the last stack's, in the same mappings:
 * never its innermost one, whose module tells whether the process is known.
 */
static uint32_t shared_outer(const struct last_stack *last, const struct mt_stack_record *rec,
			     uint32_t nr, uint64_t gen)
{
	uint32_t k = 0;

	if (!gen || last->gen != gen || last->pid != (int32_t)rec->pid)
		return 0;
	while (k + 1 < nr && k < last->nr && rec->ips[nr - 1 - k] == last->ips[last->nr - 1 - k] &&
	       last->kept[last->nr - 1 - k])
		k++;
	return k;
}

/*
 * The ids of the outer k of a stack's nr frames, copied from where the
 * last stack put them, and where they are now in at[] and kept[]
 */
static bool append_outer(struct resolver *r, uint32_t k, uint32_t nr, size_t *at, bool *kept)
{
	const struct last_stack *last = &r->last;
	size_t from = last->at[last->nr - k], n = last->at[last->nr] - from, base = r->nframe_ids;
	uint32_t i;

	if (grow_array((void **)&r->frame_ids, &r->frame_ids_cap, r->nframe_ids + n,
		       sizeof(*r->frame_ids)))
		return false;
	memcpy(&r->frame_ids[r->nframe_ids], &r->frame_ids[from], n * sizeof(*r->frame_ids));
	r->nframe_ids += n;
	for (i = 0; i < k; i++) {
		at[nr - k + i] = base + last->at[last->nr - k + i] - from;
		kept[nr - k + i] = true;
	}
	return true;
}

static void remember_last(struct last_stack *last, const struct mt_stack_record *rec,
			  uint32_t nr, uint64_t gen, const size_t *at, const bool *kept)
{
	last->pid = rec->pid;
	last->gen = gen;
	last->nr = nr;
	memcpy(last->ips, rec->ips, nr * sizeof(rec->ips[0]));
	memcpy(last->at, at, (nr + 1) * sizeof(at[0]));
	memcpy(last->kept, kept, nr * sizeof(kept[0]));
}

/* 0: resolved; -EAGAIN: pid's mappings are not known yet */
static int resolve_stack(struct resolver *r, const struct mt_stack_record *rec, bool last_try)
{
	struct sym_frame f[SYM_MAX_FRAMES];
	struct ip_entry fresh[MT_MAX_FRAMES];
	size_t at[MT_MAX_FRAMES + 1];
	bool kept[MT_MAX_FRAMES];
	struct sym_map_info map;
	uint64_t ip, gen = symbolizer__maps_gen(r->sym, rec->pid);
	uint32_t i, nfresh = 0, nr = rec->nr < MT_MAX_FRAMES ? rec->nr : MT_MAX_FRAMES, outer;
	size_t first = r->nframe_ids;
	int n, k;

	outer = shared_outer(&r->last, rec, nr, gen);
	for (i = 0; i < nr - outer; i++) {
		at[i] = r->nframe_ids;
		kept[i] = true;
		if (append_known(r, rec->pid, gen, rec->ips[i]))
			continue;
		/* every ip is a return address: BPF and the unwinders start at the caller */
		n = symbolizer__resolve_frames(r->sym, rec->pid, rec->ips[i], true, f,
					       SYM_MAX_FRAMES, &map);
		/* the caller's module unknown: the process's exec or fork is not seen yet */
		if (!i && !last_try && !strcmp(f[0].module, SYM_UNKNOWN)) {
			r->nframe_ids = first;
			return -EAGAIN;
		}
		if (grow_array((void **)&r->frame_ids, &r->frame_ids_cap, r->nframe_ids + n,
			       sizeof(*r->frame_ids))) {
			r->nframe_ids = first;
			return -ENOMEM;
		}
		kept[i] = gen && map.maps_gen == gen;
		if (kept[i])
			fresh[nfresh++] = (struct ip_entry){ .ip = rec->ips[i], .gen = gen,
							     .pid = rec->pid, .n = n,
							     .first = r->nframe_ids };
		ip = module_ip(r, &map, rec->ips[i]);
		for (k = 0; k < n; k++)
			r->frame_ids[r->nframe_ids++] = frame_id(r, &f[k], ip);
	}
	if (outer && !append_outer(r, outer, nr, at, kept)) {
		r->nframe_ids = first;
		return -ENOMEM;
	}
	at[nr] = r->nframe_ids;
	/* kept once the stack is whole: its frame ids stay where they are */
	for (i = 0; i < nfresh; i++)
		remember_ip(r, &fresh[i]);
	remember_last(&r->last, rec, nr, gen, at, kept);
	r->nstacks++;
	pack_new_stack(r, rec, first);
	return 0;
}

static int defer(struct resolver *r, const struct mt_stack_record *rec)
{
	if (grow_array((void **)&r->deferred, &r->deferred_cap, r->ndeferred + 1,
		 sizeof(*r->deferred)))
		return -ENOMEM;
	r->deferred[r->ndeferred++] = *rec;
	return 0;
}

/* stacks whose process was not described yet get another chance */
static void retry_deferred(struct resolver *r, bool last_try)
{
	size_t i, kept = 0;

	for (i = 0; i < r->ndeferred; i++)
		if (resolve_stack(r, &r->deferred[i], last_try) == -EAGAIN)
			r->deferred[kept++] = r->deferred[i];
	r->ndeferred = kept;
}

static void resolve_batch(struct resolver *r, struct mt_stack_record *batch, unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	retry_deferred(r, false);
	for (i = 0; i < n; i++)
		if (resolve_stack(r, &batch[i], false) == -EAGAIN)
			defer(r, &batch[i]);
	pstats__resolve(r->stats, t0, now_ns(), n);
}

/* raw msgpack bytes: records packed already */
static void put_packed(msgpack_packer *pk, const char *p, size_t len)
{
	if (len)
		pk->callback(pk->data, p, len);
}

/* the modules, frames and stacks resolved since the last flush */
static void pack_new(msgpack_packer *pk, void *arg)
{
	struct resolver *r = arg;

	put_packed(pk, r->packed.data + r->flushed_bytes, r->packed.size - r->flushed_bytes);
}

/* the packed bytes not compressed yet into the trailer's frame, which end ends */
static void compress_packed(struct resolver *r, ZSTD_EndDirective end)
{
	ZSTD_inBuffer in = { r->packed.data, r->packed.size, r->zfed };
	size_t left;

	do {
		ZSTD_outBuffer out;

		if (grow_array((void **)&r->zout, &r->zout_cap,
			       r->zout_len + ZSTD_CStreamOutSize(), 1)) {
			r->pack_err = -ENOMEM;
			return;
		}
		out = (ZSTD_outBuffer){ r->zout, r->zout_cap, r->zout_len };
		left = ZSTD_compressStream2(r->zc, &out, &in, end);
		r->zout_len = out.pos;
		if (ZSTD_isError(left)) {
			r->pack_err = -EIO;
			return;
		}
	} while (end == ZSTD_e_end ? left : in.pos < in.size);
	r->zfed = in.pos;
}

static void compress_if_due(struct resolver *r)
{
	if (r->zc_early && !r->pack_err && r->packed.size - r->zfed >= STREAM_CHUNK)
		compress_packed(r, ZSTD_e_continue);
}

static void flush_if_due(struct resolver *r)
{
	uint64_t now = now_ns();

	if (!r->flush || r->pack_err || r->packed.size == r->flushed_bytes ||
	    now - r->flushed_ns < FLUSH_NS)
		return;
	r->flush(r->flush_ctx, pack_new, r);
	r->flushed_ns = now;
	r->flushed_bytes = r->packed.size;
}

static int wait_filled(struct resolver *r, uint64_t until)
{
	struct timespec ts = { .tv_sec = until / NSEC_PER_SEC, .tv_nsec = until % NSEC_PER_SEC };

	return pthread_cond_timedwait(&r->filled, &r->lock, &ts);
}

/*
 * Waits for stacks, under the lock: for a first one, and then for WAKE_AT
 * of them a while; FLUSH_NS without any ends the wait, for a flush that is due.
 */
static void wait_for_stacks(struct resolver *r)
{
	uint64_t flush_at = now_ns() + FLUSH_NS, linger_until = 0;

	while (r->count < WAKE_AT && !r->finishing) {
		if (r->count && !linger_until)
			linger_until = now_ns() + LINGER_NS;
		if (wait_filled(r, r->count ? linger_until : flush_at) == ETIMEDOUT &&
		    (r->count || now_ns() >= flush_at))
			return;
	}
}

static unsigned int take_batch(struct resolver *r, struct mt_stack_record *batch)
{
	unsigned int n = 0;

	pthread_mutex_lock(&r->lock);
	wait_for_stacks(r);
	while (r->count && n < BATCH_MAX) {
		const struct mt_stack_record *rec = &r->queue[r->head];
		uint32_t nr = rec->nr < MT_MAX_FRAMES ? rec->nr : MT_MAX_FRAMES;

		/* the frames it has, not the 127 a record has room for */
		memcpy(&batch[n++], rec, offsetof(struct mt_stack_record, ips) + nr * sizeof(rec->ips[0]));
		r->head = (r->head + 1) % QUEUE_SLOTS;
		r->count--;
	}
	pthread_cond_signal(&r->drained);
	pthread_mutex_unlock(&r->lock);
	return n;
}

static bool resolver_finishing(struct resolver *r)
{
	bool finishing;

	pthread_mutex_lock(&r->lock);
	finishing = r->finishing && !r->count;
	pthread_mutex_unlock(&r->lock);
	return finishing;
}

static void *resolver_main(void *arg)
{
	struct resolver *r = arg;
	struct mt_stack_record *batch = malloc(BATCH_MAX * sizeof(*batch));
	unsigned int n;

	name_thread("resolve");
	if (!batch)
		return NULL;
	for (;;) {
		n = take_batch(r, batch);
		if (n)
			resolve_batch(r, batch, n);
		else if (resolver_finishing(r))
			break;
		flush_if_due(r);
		compress_if_due(r);
	}
	free(batch);
	return NULL;
}

void resolver__set_flush(struct resolver *r,
			 void (*flush)(void *ctx, resolver_pack_fn *pack, void *pack_arg),
			 void *ctx)
{
	pthread_mutex_lock(&r->lock);
	r->flush = flush;
	r->flush_ctx = ctx;
	r->flushed_ns = now_ns();
	pthread_mutex_unlock(&r->lock);
}

struct resolver *resolver__new(struct symbolizer *sym, struct pstats *stats)
{
	struct resolver *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;

	if (!r)
		return NULL;
	r->sym = sym;
	r->stats = stats;
	msgpack_sbuffer_init(&r->packed);
	msgpack_packer_init(&r->packer, r, packed_write);
	r->queue = malloc(QUEUE_SLOTS * sizeof(*r->queue));
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->filled, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&r->drained, NULL);
	if (!r->queue || rehash_frames(r) ||
	    pthread_create(&r->thread, NULL, resolver_main, r)) {
		free(r->queue);
		free(r->frames);
		free(r);
		return NULL;
	}
	return r;
}

int resolver__push(struct resolver *r, const struct mt_stack_record *rec, uint32_t len)
{
	struct mt_stack_record *slot;

	if (len < offsetof(struct mt_stack_record, ips))
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	while (r->count == QUEUE_SLOTS)
		pthread_cond_wait(&r->drained, &r->lock);
	slot = &r->queue[(r->head + r->count) % QUEUE_SLOTS];
	memcpy(slot, rec, len < sizeof(*slot) ? len : sizeof(*slot));
	if (slot->nr > (len - offsetof(struct mt_stack_record, ips)) / sizeof(uint64_t))
		slot->nr = (len - offsetof(struct mt_stack_record, ips)) / sizeof(uint64_t);
	/* the first wakes a resolver that waits for any, WAKE_AT one that lingers */
	if (++r->count == 1 || r->count == WAKE_AT)
		pthread_cond_signal(&r->filled);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int resolver__finish(struct resolver *r)
{
	pthread_mutex_lock(&r->lock);
	r->finishing = true;
	pthread_cond_signal(&r->filled);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	retry_deferred(r, true);
	return 0;
}

void resolver__pack_records(struct resolver *r, msgpack_packer *pk)
{
	put_packed(pk, r->packed.data, r->packed.size);
}

void resolver__compress_with(struct resolver *r, ZSTD_CCtx *zc, bool early)
{
	pthread_mutex_lock(&r->lock);
	r->zc = zc;
	r->zc_early = zc && early;
	pthread_mutex_unlock(&r->lock);
}

const void *resolver__trailer_frame(struct resolver *r, size_t *len)
{
	*len = 0;
	if (!r->zc || r->pack_err || !r->packed.size)
		return NULL;
	compress_packed(r, ZSTD_e_end);
	if (r->pack_err)
		return NULL;
	*len = r->zout_len;
	return r->zout;
}

int resolver__pack_error(const struct resolver *r)
{
	return r->pack_err;
}

uint64_t resolver__stacks(struct resolver *r)
{
	return r->nstacks;
}

uint64_t resolver__frames(struct resolver *r)
{
	return r->nframes;
}

void resolver__delete(struct resolver *r)
{
	if (!r)
		return;
	free(r->queue);
	free(r->deferred);
	msgpack_sbuffer_destroy(&r->packed);
	ZSTD_freeCCtx(r->zc);
	free(r->zout);
	free(r->frames);
	free(r->frame_ids);
	free(r->modules);
	u64_map__exit(&r->module_index);
	free(r->ips);
	u64_map__exit(&r->ip_index);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->filled);
	pthread_cond_destroy(&r->drained);
	free(r);
}
