/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_MERGE_H
#define MEMTRACK_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/track/shim-ring.h"

/*
 * One stream of events out of many sources: the per-thread rings of the
 * preload shim, and for each process the events BPF sent (mmap, brk, and
 * every allocation of a process traced by BPF).
 *
 * Order.  Per process, events leave in time order, so that a free comes
 * before the allocation that reuses its address, also across threads: an
 * event of process P at time t leaves only once no source of P can still
 * produce an earlier one.  A source's bound is the time of its head event;
 * for an empty ring, the time it was seen empty (its next record is
 * reserved later, and stamped after its reservation); for a ring whose
 * head is reserved but not yet written, the last bound it had.  A ring
 * stalled that way holds back its own process only: processes share no
 * memory, so across processes the merge takes what is ready, in time order
 * where it can.
 */
struct merger;
struct merge_proc;

struct merge_ops {
	/* an event, in merged order */
	void (*emit)(void *ctx, const struct mt_alloc_event *e);
	/* a stack a shim thread sent: the artifact's id for it, 0 if none */
	uint64_t (*stack)(void *ctx, int32_t pid, const uint64_t *ips, uint32_t nr);
	/* a ring broke the rules: it is dropped, with its process's tracking */
	void (*corrupt)(void *ctx, int32_t pid, int32_t tid, const char *why);
	/* a producer waited for room: the time it began (pressure bookkeeping) */
	void (*waited)(void *ctx, int32_t pid, uint64_t since);
	/* n more threads of pid had no ring, and their shim could not say so on its socket */
	void (*unserved)(void *ctx, int32_t pid, uint32_t n);
	void *ctx;
};

struct merger *merger__new(const struct merge_ops *ops);
void merger__delete(struct merger *m);

/* the process's entry, made on first use; NULL when out of memory */
struct merge_proc *merger__proc(struct merger *m, int32_t pid);
/*
 * Rings mapped at once, a process's and in all: each is three mappings of
 * memtrack's (and vm.max_map_count is 65530), and a process's threads
 * are its word.
 */
#define MERGE_RINGS_PER_PROC	4096
#define MERGE_RINGS_MAX		12288
/* takes the ring (mapped); -ENOMEM, or -ENOSPC past the rings above */
int merger__add_ring(struct merger *m, struct merge_proc *p, struct shim_ring *r);
/* an event from BPF, in the BPF ring's order; -ENOMEM */
int merger__add_bpf(struct merger *m, const struct mt_alloc_event *e);
/*
 * No BPF event still in the ring can be older than bound: the BPF ring was
 * drained to its producer position as seen after bound was taken.
 */
void merger__set_bpf_bound(struct merger *m, uint64_t bound);
/*
 * The process exited: nothing new comes.  Once its sources are drained and
 * it holds no connection (merger__unref), its entry goes; a pid reused
 * after this gets a new entry.
 */
void merger__exited(struct merger *m, int32_t pid);
/* connections to a process's shim hold its entry */
void merger__ref(struct merge_proc *p);
void merger__unref(struct merger *m, struct merge_proc *p);
/* the process's rings are dropped: its events from now on are lost (counted) */
void merger__drop_rings(struct merger *m, struct merge_proc *p);
/*
 * Reads every ring's count of threads its shim could not serve nor tell
 * of (ops->unserved); a ring freed is read first.  At the end of a run,
 * once the processes are gone.
 */
void merger__read_unserved(struct merger *m);

/*
 * Emits what is ready.  all: the run is over and every producer gone,
 * drain everything whatever the bounds.  Returns the events emitted.
 */
uint64_t merger__pass(struct merger *m, bool all);

struct merge_stats {
	uint64_t rings, rings_live;
	uint64_t prod, cons;		/* bytes over all rings, ever: the `heap` ring of the stats */
	uint64_t size;			/* of the live rings */
	uint64_t fill_max;		/* the fullest ring's bytes in use */
	uint64_t events, stacks;
	uint64_t bpf_queued;		/* BPF events waiting for their process's bound */
	uint64_t lost;			/* records of dropped rings */
};

void merger__stats(struct merger *m, struct merge_stats *st);
/*
 * After the last pass: a ring of an exited process whose write position is
 * past its last whole record (the process moved it, or died writing) will
 * never be read to its end: corrupt, its bytes lost, and said.
 */
void merger__stalled(struct merger *m);
/* a ring more than half full, or a producer waiting: no time to sleep */
bool merger__busy(struct merger *m);

#endif
