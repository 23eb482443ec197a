/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_THREADS_H
#define MEMTRACK_REPORT_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/u64-map.h"

/*
 * report --threads: the figures of each thread (pid, tid) of the tree, fed
 * by report_summary as the events pass (set report_summary.threads).  A
 * thread's allocations, bytes and frees are the calls it made; its live,
 * peak and leaked bytes are those of the blocks it allocated, whoever
 * freed them.  Only counted events (the --time window) count.  Pure logic.
 */
struct report_thread {
	int32_t pid, tid;
	uint64_t allocs, bytes_allocated;
	uint64_t frees, bytes_freed;		/* the frees it made, of known blocks */
	uint64_t live_bytes, live_count;	/* of the blocks it allocated */
	uint64_t peak_bytes;			/* the most of those live at once */
	uint64_t leaked_count, leaked_bytes;	/* of those, live at exit */
};

struct report_threads {
	struct report_thread *v;	/* in order of first event */
	size_t nr, cap;
	struct u64_map index;		/* pid << 32 | tid -> v[] index */
	struct u64_map *owners;		/* per process: a live block's addr -> v[] index */
	size_t nr_owners, cap_owners;
	struct u64_map owner_index;	/* pid -> owners[] index */
};

/* NULL when out of memory */
struct report_threads *report_threads__new(void);
void report_threads__delete(struct report_threads *t);
/* pid's thread tid allocated (addr, size); 0 or -ENOMEM */
int report_threads__alloc(struct report_threads *t, int32_t pid, int32_t tid, uint64_t addr,
			  uint64_t size);
/* pid's thread tid freed the live block (addr, size); 0 or -ENOMEM */
int report_threads__free(struct report_threads *t, int32_t pid, int32_t tid, uint64_t addr,
			 uint64_t size);
/* a block of pid that leaves the live heap without a free (an exec, a lost free) */
void report_threads__forget(struct report_threads *t, int32_t pid, uint64_t addr,
			    uint64_t size);
/* the block (addr, size) of pid is live at exit, a leak */
void report_threads__leak(struct report_threads *t, int32_t pid, uint64_t addr, uint64_t size);
/*
 * The threads, largest bytes allocated first (then pid, tid): v[] is
 * sorted, and the live blocks forgotten.  Last, after the leaks.
 */
void report_threads__sort(struct report_threads *t);

#endif
