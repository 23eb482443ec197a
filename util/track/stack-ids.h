/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STACK_IDS_H
#define MEMTRACK_STACK_IDS_H

#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/symbol/unwind.h"

/*
 * With --call-graph dwarf, BPF sends a raw stack copy per allocation and
 * the event refers to it by seq.  The stacks poller unwinds each copy here,
 * gives equal stacks of a process one id (a new stack goes to the resolver
 * as an MT_STACK record, as BPF sends them with fp), and the encoder's
 * workers trade each event's seq for that id.  Memory: the distinct stacks,
 * and the seqs unwound but not yet traded.
 */
struct stack_ids;
struct resolver;

struct stack_ids *stack_ids__new(unwind_rule_fn *rule_of, void *rule_ctx,
				 struct resolver *resolver);
/* ids this table gives: apart from the ones BPF gives with --call-graph fp */
#define STACK_IDS_FIRST		(1ULL << 40)

/* the stacks poller's: 0, or -ENOMEM */
int stack_ids__add_raw(struct stack_ids *t, const struct mt_raw_stack *rec, uint32_t len);
/*
 * fn learns where a thread's stack ends (the CFA of its outermost frame),
 * from a copy that was unwound that far, to copy no more of it later.
 */
void stack_ids__set_end_fn(struct stack_ids *t, void (*fn)(void *ctx, uint32_t tid, uint64_t end),
			   void *ctx);
/* a stack unwound elsewhere (the preload shim): its id, 0 when out of memory */
uint64_t stack_ids__intern(struct stack_ids *t, int32_t pid, const uint64_t *ips, uint32_t nr);
/* the id of seq's stack, waiting until it is unwound; 0 after close without it */
uint64_t stack_ids__take(struct stack_ids *t, uint64_t seq);
/* no more raw stacks: a take() of an unknown seq returns 0 */
void stack_ids__close(struct stack_ids *t);
void stack_ids__delete(struct stack_ids *t);

struct stack_ids_stats {
	uint64_t raw;		/* stack copies unwound */
	uint64_t raw_bytes;	/* of copied stack */
	uint64_t frames;	/* in all of them */
	uint64_t stacks;	/* distinct (pid, frames) */
	uint64_t unpublished;	/* events that got no stack: their copy never came */
};

void stack_ids__stats(struct stack_ids *t, struct stack_ids_stats *st);

#endif
