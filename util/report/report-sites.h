/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_REPORT_SITES_H
#define MEMTRACK_REPORT_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/artifact/artifact.h"

/*
 * Call sites: the figures of `memtrack report` per call stack.  Pure logic,
 * no I/O.
 *
 * Events name their stack by id ("stack"), and the Stack and Frame records
 * that say what an id means come in the trailer, after every event.  So the
 * figures are gathered per stack id while the events stream by (bytes and
 * calls allocated, live bytes, live bytes at the whole tree's peak, blocks
 * live at the end), and joined with the Stack and Frame records at the end:
 * memory grows with the number of distinct stacks and frames, not with the
 * number of events.  report_summary drives the streaming half (it knows
 * which block belongs to which stack); report_sites__resolve() is the join.
 *
 * Live bytes at the peak are taken lazily: a stack's live bytes are saved
 * just before its first change after the peak, so a new peak costs nothing
 * however many stacks there are.
 */

enum report_site_key {
	REPORT_SITE_BYTES,		/* bytes allocated */
	REPORT_SITE_CALLS,		/* blocks allocated */
	REPORT_SITE_PEAK,		/* live bytes at the whole tree's peak */
	REPORT_SITE_LEAKED,		/* bytes still live at the end */
	REPORT_SITE_TEMPORARY,		/* temporary allocations (report-summary.h) */
	REPORT_SITE_KEYS,
};

/* how two stacks are told to be the same site */
enum report_site_match {
	REPORT_MATCH_FRAME,		/* frames: module, symbol and offset */
	REPORT_MATCH_NAME,		/* frame names only: across artifacts */
};

enum report_site_kind {
	REPORT_SITE_STACK,		/* a stack with its Stack record */
	REPORT_SITE_UNRESOLVED,		/* a stack id without a Stack record */
	REPORT_SITE_NO_STACK,		/* the allocations without a "stack" key */
};

/* where a module was mapped (its Module record), for pprof's mappings */
struct report_module {
	char *path;
	char *build_id;			/* hex; NULL when not recorded */
	uint64_t start, end;		/* [start, end): a frame's ip is in there */
	uint64_t offset;		/* file offset of start */
};

struct report_frame {
	uint64_t id;
	bool known;			/* its Frame record was read */
	bool inlined;			/* a function inlined at ip, not a frame of its own */
	uint64_t ip, offset;
	uint32_t line;			/* 0: unknown */
	char *module, *file;		/* NULL when absent or empty */
	char *symbol;			/* demangled (unless asked not to), without a
					 * version suffix; NULL when absent or empty */
	char *raw_symbol;		/* as the binary spells it, without the suffix */
	char *name;			/* symbol, module basename+0xoffset, or [unknown] */
	const struct report_module *map;	/* of module; NULL without a Module record */
};

struct report_site {
	enum report_site_kind kind;
	uint64_t stack;			/* the smallest stack id of the site */
	uint32_t nr_stacks;		/* stacks merged into this site */
	uint64_t bytes, calls;
	uint64_t peak_bytes, peak_count;	/* live at the whole tree's peak */
	uint64_t leaked_bytes, leaked_count;
	uint64_t temporary_count, temporary_bytes;
	uint32_t nr_frames;		/* at most the depth */
	const struct report_frame *const *frames;	/* innermost first */
};

struct report_site_list {
	struct report_site *sites;
	size_t nr;
	const struct report_frame **frame_store;	/* what sites[].frames point into */
};

/* a site of head that grew since base (base NULL: new in head) */
struct report_site_change {
	const struct report_site *base, *head;
	int64_t growth;			/* head - base of the key */
};

struct report_sites;

struct report_sites *report_sites__new(void);
void report_sites__delete(struct report_sites *ss);
/* symbols of Frame records read from now on: demangled (the default) or as recorded */
void report_sites__set_demangle(struct report_sites *ss, bool demangle);

/* ---- the streaming half, for report_summary ---- */

/* any record: keeps Frame, Stack and Module records, notes events with a stack */
int report_sites__record(struct report_sites *ss, const struct artifact_record *rec);
/* *site: the site index of an allocation event (>= 1); 0 or -ENOMEM, -E2BIG */
int report_sites__site(struct report_sites *ss, const struct artifact_record *rec,
		       uint32_t *site);
/* a block of site becomes live at event seq (counted: in the time filter) */
void report_sites__alloc(struct report_sites *ss, uint32_t site, uint64_t size,
			 bool counted, uint64_t seq);
/* a live block of site is freed (or forgotten) at event seq */
void report_sites__free(struct report_sites *ss, uint32_t site, uint64_t size,
			uint64_t seq);
/* the whole tree reached a new peak at event seq */
void report_sites__peak(struct report_sites *ss, uint64_t seq);
/* a block of site still live at the end */
void report_sites__leak(struct report_sites *ss, uint32_t site, uint64_t size);
/* a block of site was a temporary allocation (counted when freed) */
void report_sites__temporary(struct report_sites *ss, uint32_t site, uint64_t size);

/* the artifact has call stacks: an event with "stack", or a Stack record */
bool report_sites__has_stacks(const struct report_sites *ss);

/*
 * Calls fn for every site of allocations that has its Stack record (site >=
 * 1), with every frame of the stack, innermost first; not for allocations
 * without a stack nor for stacks without their record.  For what looks at
 * whole stacks (leak suppressions).  Stops at the first non-zero return of
 * fn and returns it; 0, or -ENOMEM.
 */
typedef int report_stack_fn(uint32_t site, const struct report_frame *const *frames,
			    uint32_t nr, void *arg);
int report_sites__each_stack(struct report_sites *ss, report_stack_fn *fn, void *arg);

/* ---- the join ---- */

/*
 * The sites: stacks whose first depth frames (innermost first; 0: all of
 * them) match are merged into one site.  The list is ordered by frames;
 * frame pointers stay valid while ss lives.  0 or -ENOMEM.
 */
int report_sites__resolve(struct report_sites *ss, unsigned int depth,
			  enum report_site_match match, struct report_site_list *out);
void report_site_list__exit(struct report_site_list *l);

uint64_t report_site__value(const struct report_site *s, enum report_site_key key);
/* largest key first; ties by bytes, calls, then stack id */
void report_site_list__sort(struct report_site_list *l, enum report_site_key key);
/*
 * The sites whose key is not 0, largest first (as sorted above), at most n
 * of them (0: all) into out[], which has room for l->nr; returns how many.
 * *nonzero: how many sites have a key that is not 0.  The list keeps its
 * order.
 */
/* sorts pointers to sites as report_site_list__sort() sorts sites */
void report_site_ptrs__sort(const struct report_site **v, size_t n,
			    enum report_site_key key);
size_t report_site_list__top(const struct report_site_list *l, enum report_site_key key,
			     size_t n, const struct report_site **out, size_t *nonzero);
/*
 * The union of the tops of every key (or of only, when < REPORT_SITE_KEYS):
 * each site once, in the order met, into out[] (room for l->nr); returns
 * how many, SIZE_MAX when out of memory.
 */
size_t report_site_list__tops(const struct report_site_list *l, size_t n,
			      enum report_site_key only, const struct report_site **out);
/* "bytes", "calls", "peak", "leaked", "temporary" -> key; -1 when unknown */
int report_site_key__parse(const char *name);
const char *report_site_key__name(enum report_site_key key);

/*
 * The sites of head whose key grew since base, matched by frame names over
 * depth frames: both lists from report_sites__resolve(REPORT_MATCH_NAME,
 * depth).  Largest growth first.  0 or -ENOMEM.
 */
int report_site_list__diff(const struct report_site_list *base,
			   const struct report_site_list *head, unsigned int depth,
			   enum report_site_key key,
			   struct report_site_change **out, size_t *nr);

/*
 * Folded stacks for flame graphs: one line per distinct stack of frame
 * names (its depth innermost frames; 0: all), root first, "a;b;c" (';' in
 * a name becomes ':'), weighed by the key; lines of weight 0 are left out.
 * Sorted by line.  0 or -ENOMEM.
 */
struct report_folded {
	char *line;
	uint64_t weight;
	uint64_t base;			/* report_sites__folded_diff(): base's weight */
};

int report_sites__folded(struct report_sites *ss, unsigned int depth,
			 enum report_site_key key, struct report_folded **out, size_t *nr);
/*
 * The same for two artifacts, as difffolded.pl pairs them: every line of
 * either, with base's weight (base) and head's (weight); lines where both
 * are 0 are left out.  0 or -ENOMEM.
 */
int report_sites__folded_diff(struct report_sites *base, struct report_sites *head,
			      unsigned int depth, enum report_site_key key,
			      struct report_folded **out, size_t *nr);
void report_folded__free(struct report_folded *f, size_t nr);

#endif
