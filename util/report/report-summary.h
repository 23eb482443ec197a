/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_SUMMARY_H
#define MEMTRACK_REPORT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/artifact/artifact.h"
#include "util/u64-map.h"

/*
 * The figures of `memtrack report`, computed from a stream of artifact
 * records in one pass.  Pure logic: no I/O, no messages.
 *
 * Heap: Malloc, Calloc and AlignedAlloc add a live allocation keyed by
 * (pid, addr); Free removes one; Realloc frees old_addr (when not 0) and
 * allocates addr (when not 0).  A Realloc with addr 0 and a non-zero size
 * is a failed realloc and changes nothing.  A free of an address that is
 * not live is an "unknown free".  A Free marked "freeres" (glibc's
 * __libc_freeres() at exit, called by the shim) is counted in
 * libc_freed_*, and not made with show_libc_frees: the block is then live
 * at exit, as it was before glibc freed it.  Mmap, Munmap and Brk are kept
 * apart.
 *
 * A process's blocks live no longer than its image: its exec discards them
 * (they are neither freed nor leaked), and its exit takes them out of the
 * tree's live heap.  Peak = the largest sum of live heap bytes of the
 * processes alive, with the time it was reached; a process's live at exit
 * is what it had not freed when it exited (or at the end of the trace).
 * The exec and exit times come from the Process records: given ahead of the
 * events (report_summary__add_ahead(): the trailer read first), they are
 * applied as the events pass them; seen only after the events, the blocks
 * discarded by an exec are told by their time at the end, and the peak and
 * the timeline count the blocks of exited processes and replaced images
 * (lifetimes == REPORT_LIFETIMES_LATE).
 *
 * timeline, sites and threads are optional: set them after report_summary__init()
 * to have them fed; report_summary__exit() deletes them.  So is
 * suppressed(), which report_summary__finish() asks about each block still
 * live (site: its call site, 0 without one).
 */

#define REPORT_HIST_BUCKETS	65	/* 0, then [2^(i-1), 2^i) for i = 1..64 */

struct report_filter {
	/* only these pids (and their Process records); NULL: every pid */
	bool (*pid_selected)(int32_t pid, void *arg);
	void *pid_arg;
	/* only events in [from_ns, to_ns] after the first event */
	bool has_time;
	uint64_t from_ns, to_ns;
};

struct report_heap {
	uint64_t counts[MT_KIND_MAX];	/* events per type */
	uint64_t allocs;		/* blocks allocated (Realloc's new blocks too) */
	uint64_t failed_allocs;		/* an allocator returned NULL */
	uint64_t frees;			/* blocks freed that were known live */
	uint64_t bytes_allocated, bytes_freed;
	uint64_t live_count, live_bytes;
	uint64_t peak_bytes, peak_ts;	/* peak_ts: the event's timestamp */
	uint64_t peak_count;		/* blocks live at the peak */
	uint64_t leaked_count, leaked_bytes;	/* still live at the end */
	uint64_t suppressed_count, suppressed_bytes;	/* live at the end, not leaks */
	uint64_t discarded_count, discarded_bytes;	/* live when their process exec'd */
	uint64_t unknown_frees;
	uint64_t libc_freed_count, libc_freed_bytes;	/* freed by __libc_freeres() at exit */
	uint64_t overwritten;		/* allocated again while live: a lost free */
	uint64_t temporary_count, temporary_bytes;
	uint64_t mmap_bytes, munmap_bytes;
	uint64_t brk_growth;		/* highest break - first break seen */
};

struct live_entry;

/* the live blocks of a process: a hash table of util/report/report-summary.c */
struct report_live_table {
	struct live_entry *slots;	/* NULL until the first block */
	unsigned int bits;
	size_t used;
};

struct report_process {
	int32_t pid;
	struct report_heap heap;
	struct report_live_table live;
	bool lifetime_ahead;		/* its Process record came before the events */
	bool ended;			/* its exit is passed: out of the tree's live heap */
	uint64_t first_ts, last_ts;	/* of its events */
	bool has_events;
	uint64_t brk_first, brk_max;
	bool has_brk;
	/* its last allocation, until its next free: the temporary rule's */
	struct {
		bool set;
		uint64_t size, stack;
	} last_alloc;
	/* from its Process record */
	bool has_info;
	uint64_t info_has;		/* AR_HAS() bits of the record */
	int32_t ppid, exit_code;
	uint64_t start, exit;
	char *comm, *exe;
	char *backend;			/* "preload", "bpf", NULL when not said */
	char *bpf_why;			/* why bpf, in a word or two; NULL when not said */
	bool pymalloc_off;		/* ran with PYTHONMALLOC=malloc (its shim saw it) */
};

struct report_meta {
	uint64_t has;			/* AR_HAS() bits of the record */
	uint32_t format;
	char *tool, *version, *command;
	int32_t root_pid, exit_code;
	uint64_t start, end, drops_events, drops_total;
	bool attached;			/* the run attached to running processes */
	uint32_t running;		/* processes of the tree still running at its end */
	uint32_t blind;			/* static stripped processes, their allocations unseen */
};

/* what the exec and exit times of the processes did to the figures */
enum report_lifetimes {
	REPORT_LIFETIMES_NONE,		/* none known: no Process record says one */
	REPORT_LIFETIMES_AHEAD,		/* each applied as the events passed it */
	REPORT_LIFETIMES_LATE,		/* some learnt after the events passed them */
};

struct report_moment;
struct report_timeline;
struct report_sites;
struct report_threads;

struct report_summary {
	struct report_filter filter;
	struct report_heap total;
	uint64_t records;		/* records given to report_summary__add() */
	uint64_t events;		/* events taken (after the filters) */
	bool has_origin;
	uint64_t origin_ts;		/* the first event's timestamp: time 0 */
	uint64_t last_ts;		/* the latest event timestamp */
	uint64_t hist[REPORT_HIST_BUCKETS];
	bool has_meta;
	struct report_meta meta;
	struct report_process *procs;	/* in order of first appearance */
	size_t nr_procs, procs_cap;

	struct u64_map proc_index;		/* pid -> procs[] index */
	struct report_moment *moments;		/* execs and exits, by time once sorted */
	size_t nr_moments, moments_cap, next_moment;
	bool moments_sorted;
	enum report_lifetimes lifetimes;
	struct report_timeline *timeline;	/* NULL unless asked for */
	struct report_sites *sites;		/* call sites; NULL unless asked for */
	struct report_threads *threads;		/* per thread; NULL unless asked for */
	/* a block live at the end for which this is true is suppressed, not leaked */
	bool (*suppressed)(void *arg, uint32_t site, uint64_t size);
	void *suppressed_arg;
	/* the frees of __libc_freeres() are counted and not made: their blocks leak */
	bool show_libc_frees;
};

/* 0 or -ENOMEM */
int report_summary__init(struct report_summary *s, const struct report_filter *f);
int report_summary__add(struct report_summary *s, const struct artifact_record *rec);
/*
 * A Process record read ahead of the events (from the trailer): its exec
 * and exit times are applied as the events pass them.  Other records are
 * ignored.  The same record in the stream later changes nothing more.
 */
int report_summary__add_ahead(struct report_summary *s, const struct artifact_record *rec);
/* counts what is still live as leaked; call once, after the last record */
void report_summary__finish(struct report_summary *s);
void report_summary__exit(struct report_summary *s);

/* a process by pid, NULL if it has neither events nor a Process record */
struct report_process *report_summary__process(struct report_summary *s, int32_t pid);
/* nanoseconds from the first event, 0 for anything earlier */
uint64_t report_summary__rel_ns(const struct report_summary *s, uint64_t ts);
/* the bucket of an allocation size in hist[] and its lower bound */
unsigned int report_hist__bucket(uint64_t size);
uint64_t report_hist__lower(unsigned int bucket);

#endif
