/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SHIM_RING_H
#define MEMTRACK_SHIM_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "preload/shim-abi.h"

/*
 * memtrack's side of one thread's ring of the preload shim
 * (preload/shim-abi.h).  The process writes the ring and may write
 * anything: every record is copied out before it is checked, and one that
 * does not check out marks the ring corrupt, for the caller to drop.
 */
#define SHIM_RING_MIN		(4U << 10)
#define SHIM_RING_MAX		(64U << 20)

struct shim_ring {
	int32_t pid, tid;
	struct shim_ring_hdr *hdr;
	const uint8_t *data;		/* mapped twice in a row */
	uint64_t size;
	uint64_t cons;			/* ours; hdr->cons gets it at release */
	uint64_t prod_seen;		/* the producer's position when last read */
	uint64_t populated;		/* of the first lap, the bytes whose pages we mapped */
	uint64_t released;		/* the cons last stored */
	uint64_t woken;			/* the wait (its wait_start) last woken */
	uint64_t *stack_ids;		/* the thread's stack id - 1 -> the artifact's id */
	uint32_t nstacks;
	size_t stacks_cap;
	const char *corrupt;		/* why, once the ring broke a rule */
	uint64_t records;
	uint32_t unserved;		/* the header's count, as far as taken */
};

/* what the head of the ring holds */
enum shim_head {
	SHIM_HEAD_EMPTY,	/* nothing reserved past cons */
	SHIM_HEAD_PENDING,	/* reserved, not yet committed */
	SHIM_HEAD_EVENT,	/* an event: out is filled */
	SHIM_HEAD_NOP,		/* a record that makes no event (a failed realloc) */
	SHIM_HEAD_STACK,	/* a stack: stack is filled */
	SHIM_HEAD_CORRUPT,
};

struct shim_stack {
	uint32_t id;		/* the thread's */
	uint32_t nr;
	uint64_t ips[SHIM_MAX_FRAMES];
};

/* maps the ring of fd after checking it: 0 or -errno (-EINVAL for a bad ring) */
int shim_ring__map(struct shim_ring *r, int fd, uint64_t size, int32_t pid, int32_t tid);
void shim_ring__unmap(struct shim_ring *r);

/*
 * Reads the head without consuming it: an event becomes *out (pid, tid and
 * the artifact's stack id filled in), a stack *stack; *len is the record's
 * span, for shim_ring__consume().
 */
enum shim_head shim_ring__head(struct shim_ring *r, struct mt_alloc_event *out,
			       struct shim_stack *stack, uint32_t *len);
void shim_ring__consume(struct shim_ring *r, uint32_t len);
/* the artifact's id for the thread's next stack id; -ENOMEM */
int shim_ring__add_stack(struct shim_ring *r, uint64_t artifact_id);
/*
 * Hands the consumed space back to the producer, and wakes it if it waits;
 * *wait_start gets when it began to wait (0: it did not).  force: even a
 * small amount.
 */
void shim_ring__release(struct shim_ring *r, bool force, uint64_t *wait_start);
/* bytes written and consumed, for the stats */
uint64_t shim_ring__prod(const struct shim_ring *r);
bool shim_ring__producer_waits(const struct shim_ring *r);
/* memtrack is done: the shim may unmap it */
void shim_ring__retire(struct shim_ring *r);
/*
 * Threads of the ring's process that its shim could not serve nor tell
 * memtrack of (shim_ring_hdr.unserved), counted since the last call.
 */
uint32_t shim_ring__unserved(struct shim_ring *r);

#endif
