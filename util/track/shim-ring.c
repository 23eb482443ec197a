// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/track/shim-ring.h"
#include "util/util.h"

#define RELEASE_STRIDE		(64U << 10)
#define MAX_RECORD		(sizeof(struct shim_stack_rec) + SHIM_MAX_FRAMES * 8)
#define MAX_STACKS		(1U << 24)
#define POPULATE_FIRST		4096U
#define POPULATE_CHUNK		(64U << 10)

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22	/* Linux 5.14 */
#endif

/* a memfd whose size the process can no longer change: else a shrink faults us */
static int check_ring_fd(int fd, uint64_t size)
{
	int seals = fcntl(fd, F_GET_SEALS);
	struct stat st;

	if (size < SHIM_RING_MIN || size > SHIM_RING_MAX || (size & (size - 1)))
		return -EINVAL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != SHIM_HDR_SIZE + size)
		return -EINVAL;
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return -EINVAL;
	return 0;
}

int shim_ring__map(struct shim_ring *r, int fd, uint64_t size, int32_t pid, int32_t tid)
{
	uint8_t *base;
	int err = check_ring_fd(fd, size);

	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	base = mmap(NULL, SHIM_HDR_SIZE + 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base, SHIM_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED ||
	    mmap(base + SHIM_HDR_SIZE, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
		 SHIM_HDR_SIZE) == MAP_FAILED ||
	    mmap(base + SHIM_HDR_SIZE + size, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
		 SHIM_HDR_SIZE) == MAP_FAILED) {
		err = -errno;
		munmap(base, SHIM_HDR_SIZE + 2 * size);
		return err;
	}
	r->hdr = (struct shim_ring_hdr *)base;
	r->data = base + SHIM_HDR_SIZE;
	r->size = size;
	r->pid = pid;
	r->tid = tid;
	r->cons = r->released = __atomic_load_n(&r->hdr->cons, __ATOMIC_ACQUIRE);
	r->prod_seen = r->cons;
	return 0;
}

void shim_ring__unmap(struct shim_ring *r)
{
	if (r->hdr)
		munmap(r->hdr, SHIM_HDR_SIZE + 2 * r->size);
	free(r->stack_ids);
	r->hdr = NULL;
	r->stack_ids = NULL;
}

static enum shim_head corrupt(struct shim_ring *r, const char *why)
{
	r->corrupt = why;
	return SHIM_HEAD_CORRUPT;
}

static uint64_t artifact_stack(const struct shim_ring *r, uint32_t id)
{
	return id && id <= r->nstacks ? r->stack_ids[id - 1] : 0;
}

static enum shim_head read_alloc(struct shim_ring *r, const uint8_t *rec, uint32_t len,
				 struct mt_alloc_event *e)
{
	struct shim_alloc_rec a;

	if (len != sizeof(a))
		return corrupt(r, "an allocation record of the wrong length");
	memcpy(&a, rec, sizeof(a));
	if (a.kind != MT_MALLOC && a.kind != MT_CALLOC && a.kind != MT_ALIGNED_ALLOC)
		return corrupt(r, "an allocation of an unknown kind");
	if (!a.addr)
		return corrupt(r, "an allocation at address 0");
	if (a.stack > r->nstacks)
		return corrupt(r, "an event naming a stack not sent");
	e->kind = a.kind;
	e->ts = a.ts;
	e->addr = a.addr;
	e->size = a.size;
	e->stack = artifact_stack(r, a.stack);
	return SHIM_HEAD_EVENT;
}

static enum shim_head read_realloc(struct shim_ring *r, const uint8_t *rec, uint32_t len,
				   struct mt_alloc_event *e)
{
	struct shim_realloc_rec a;

	if (len != sizeof(a))
		return corrupt(r, "a realloc record of the wrong length");
	memcpy(&a, rec, sizeof(a));
	if (a.stack > r->nstacks)
		return corrupt(r, "an event naming a stack not sent");
	if (!a.addr && !a.old_addr)
		return SHIM_HEAD_NOP;
	e->kind = MT_REALLOC;
	e->ts = a.ts;
	e->addr = a.addr;
	e->size = a.size;
	e->old_addr = a.old_addr;
	e->stack = artifact_stack(r, a.stack);
	return SHIM_HEAD_EVENT;
}

static enum shim_head read_free(struct shim_ring *r, const uint8_t *rec, uint32_t len,
				struct mt_alloc_event *e)
{
	struct shim_free_rec a;

	if (len != sizeof(a))
		return corrupt(r, "a free record of the wrong length");
	memcpy(&a, rec, sizeof(a));
	if (!a.addr)
		return corrupt(r, "a free of address 0");
	e->kind = MT_FREE;
	e->ts = a.ts;
	e->addr = a.addr;
	return SHIM_HEAD_EVENT;
}

/* copied first, like every record: the process may change it while we look */
static enum shim_head read_stack(struct shim_ring *r, const uint8_t *rec, uint32_t len,
				 struct shim_stack *st)
{
	struct shim_stack_rec h;

	if (len < sizeof(h))
		return corrupt(r, "a stack record too short");
	memcpy(&h, rec, sizeof(h));
	if (!h.nr || h.nr > SHIM_MAX_FRAMES || len != sizeof(h) + h.nr * 8)
		return corrupt(r, "a stack record of the wrong length");
	if (h.id != r->nstacks + 1)
		return corrupt(r, "stack ids out of sequence");
	st->id = h.id;
	st->nr = h.nr;
	memcpy(st->ips, rec + sizeof(h), h.nr * 8);
	return SHIM_HEAD_STACK;
}

/*
 * What the producer wrote on its first lap, mapped a chunk per system
 * call, not a fault per page.  The chunks double from a page, as the
 * shim's do: a read past what was written allocates the ring's memory, and
 * a thread that writes a page of records costs that page.  Never further
 * ahead of what we have read than we have read: the write position is the
 * process's word, and one at the end of a ring never written would have us
 * allocate all of it.
 */
static void populate_to(struct shim_ring *r, uint64_t end)
{
	uint64_t step = r->populated < POPULATE_FIRST ? POPULATE_FIRST :
			r->populated < POPULATE_CHUNK ? r->populated : POPULATE_CHUNK;
	uint64_t ahead = r->cons < POPULATE_FIRST ? POPULATE_FIRST :
			 r->cons < POPULATE_CHUNK ? r->cons : POPULATE_CHUNK;
	uint64_t to = (end + step - 1) & ~(step - 1);
	uint64_t most = (r->cons + ahead + POPULATE_FIRST - 1) & ~(uint64_t)(POPULATE_FIRST - 1);

	if (to > most)
		to = most;
	if (to > r->size)
		to = r->size;
	if (to <= r->populated)
		return;
	if (madvise((void *)(r->data + r->populated), to - r->populated, MADV_POPULATE_READ) ||
	    to == r->size) {
		r->populated = UINT64_MAX;
		return;
	}
	r->populated = to;
}

/*
 * The producer's position is read again only when we have caught up with
 * the one we saw: its cache line is the one the producer writes at every
 * record, and a read per record made the two cores trade it per event.
 */
static uint64_t committed_end(struct shim_ring *r)
{
	if (r->prod_seen == r->cons) {
		r->prod_seen = __atomic_load_n(&r->hdr->prod, __ATOMIC_ACQUIRE);
		if (r->prod_seen > r->populated)
			populate_to(r, r->prod_seen);
	}
	return r->prod_seen;
}

enum shim_head shim_ring__head(struct shim_ring *r, struct mt_alloc_event *out,
			       struct shim_stack *stack, uint32_t *len)
{
	uint64_t prod, word;
	const uint8_t *rec;
	uint32_t kind;

	if (r->corrupt)
		return SHIM_HEAD_CORRUPT;
	prod = committed_end(r);
	if (prod == r->cons)
		return SHIM_HEAD_EMPTY;
	if (prod < r->cons)
		return corrupt(r, "its write position went backwards");
	rec = r->data + (r->cons & (r->size - 1));
	word = __atomic_load_n((const uint64_t *)rec, __ATOMIC_ACQUIRE);
	/* a word never written yet is 0: stamp 0 matches position 0, length 0 does not */
	if (SHIM_REC_STAMP(word) != (uint32_t)r->cons || !SHIM_REC_LEN(word))
		return SHIM_HEAD_PENDING;
	*len = SHIM_REC_LEN(word);
	kind = SHIM_REC_KIND(word);
	if (*len < 16 || (*len & 7) || *len > MAX_RECORD || *len > prod - r->cons)
		return corrupt(r, "a record of an impossible length");
	out->pid = r->pid;
	out->tid = r->tid;
	out->flags = 0;
	out->old_addr = 0;
	out->size = 0;
	out->stack = 0;
	/* each reader copies its record out before it checks a field */
	switch (kind) {
	case SHIM_REC_ALLOC:
		return read_alloc(r, rec, *len, out);
	case SHIM_REC_REALLOC:
		return read_realloc(r, rec, *len, out);
	case SHIM_REC_FREE:
		return read_free(r, rec, *len, out);
	case SHIM_REC_FREERES:
		out->flags = MT_EVENT_FREERES;
		return read_free(r, rec, *len, out);
	case SHIM_REC_STACK:
		return read_stack(r, rec, *len, stack);
	default:
		return corrupt(r, "a record of an unknown kind");
	}
}

void shim_ring__consume(struct shim_ring *r, uint32_t len)
{
	r->cons += len;
	r->records++;
}

int shim_ring__add_stack(struct shim_ring *r, uint64_t artifact_id)
{
	if (r->nstacks >= MAX_STACKS)
		return -ENOMEM;
	if (grow_array((void **)&r->stack_ids, &r->stacks_cap, r->nstacks + 1,
		       sizeof(*r->stack_ids)))
		return -ENOMEM;
	r->stack_ids[r->nstacks++] = artifact_id;
	return 0;
}

bool shim_ring__producer_waits(const struct shim_ring *r)
{
	return __atomic_load_n(&r->hdr->waiting, __ATOMIC_ACQUIRE);
}

void shim_ring__release(struct shim_ring *r, bool force, uint64_t *wait_start)
{
	struct shim_ring_hdr *h = r->hdr;

	*wait_start = 0;
	if (r->cons == r->released)
		return;
	/*
	 * Not a look at the waiting flag per record: it shares the producer's
	 * cache line, which the two cores then traded per event.  A waiting
	 * producer needs half the ring, many strides; the pass's end forces.
	 */
	if (!force && r->cons - r->released < RELEASE_STRIDE)
		return;
	__atomic_store_n(&h->cons, r->cons, __ATOMIC_RELEASE);
	r->released = r->cons;
	__atomic_fetch_add(&h->cons_gen, 1, __ATOMIC_SEQ_CST);
	/*
	 * A waiting producer waits for half the ring (preload/shim.c): no
	 * wake-up before, and one per wait.  Until it runs again its flag
	 * stays up; a second wake-up would be a system call for nothing
	 * (15 per wait on a busy machine, a fifth of memtrack's time).
	 */
	if (__atomic_load_n(&h->waiting, __ATOMIC_SEQ_CST) &&
	    shim_ring__prod(r) - r->cons <= r->size / 2) {
		uint64_t start = __atomic_load_n(&h->wait_start, __ATOMIC_RELAXED);

		if (start == r->woken)
			return;
		r->woken = start;
		*wait_start = start;
		syscall(SYS_futex, &h->cons_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
}

uint64_t shim_ring__prod(const struct shim_ring *r)
{
	return __atomic_load_n(&r->hdr->prod, __ATOMIC_RELAXED);
}

/* the process's word: it can only add to its own losses; a count that goes back adds none */
uint32_t shim_ring__unserved(struct shim_ring *r)
{
	uint32_t now, n;

	if (!r->hdr)
		return 0;
	now = __atomic_load_n(&r->hdr->unserved, __ATOMIC_ACQUIRE);
	if (now <= r->unserved)
		return 0;
	n = now - r->unserved;
	r->unserved = now;
	return n;
}

void shim_ring__retire(struct shim_ring *r)
{
	if (r->hdr)
		__atomic_store_n(&r->hdr->released, 1, __ATOMIC_RELEASE);
}
