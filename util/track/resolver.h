/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_RESOLVER_H
#define MEMTRACK_RESOLVER_H

#include <msgpack.h>
#include <stdbool.h>
#include <zstd.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/track/pipeline-stats.h"
#include "util/symbol/symbolize.h"

/*
 * The resolver stage: a thread that takes the stacks BPF sends (once per
 * distinct stack of a process), turns their instruction pointers into
 * frames in batches, and keeps the Stack and Frame records for the
 * artifact's trailer.  Memory grows with distinct stacks and frames only.
 */
struct resolver;

struct resolver *resolver__new(struct symbolizer *sym, struct pstats *stats);
/* copies a stack record in; waits while the queue is full (back-pressure) */
int resolver__push(struct resolver *r, const struct mt_stack_record *rec, uint32_t len);
/* resolves what is queued, and what waited for its process's mappings; joins */
int resolver__finish(struct resolver *r);
/*
 * The trailer's Module, Frame and Stack records are packed as they are
 * made and compressed (set before the first push: the resolver owns zc
 * from then on, encoder__new_cctx()), as they go when early, else all at
 * the end, into one zstd frame that resolver__trailer_frame() ends, after
 * resolver__finish(); NULL when a record could not be packed or
 * compressed, or without zc.
 */
void resolver__compress_with(struct resolver *r, ZSTD_CCtx *zc, bool early);
const void *resolver__trailer_frame(struct resolver *r, size_t *len);
/* the same records, not compressed, as maps: a Module map per module, then Frame and Stack maps */
void resolver__pack_records(struct resolver *r, msgpack_packer *pk);
/* -ENOMEM or -EIO when a record could not be packed or compressed; else 0 */
int resolver__pack_error(const struct resolver *r);

/*
 * Every second or so, the resolver thread hands what it resolved since the
 * last time to flush(), which packs it with the pack function given (the
 * artifact's side records: a run killed before its trailer still has its
 * frames named).  Set before the first push.
 */
typedef void resolver_pack_fn(msgpack_packer *pk, void *arg);
void resolver__set_flush(struct resolver *r,
			 void (*flush)(void *ctx, resolver_pack_fn *pack, void *pack_arg),
			 void *ctx);
uint64_t resolver__stacks(struct resolver *r);
uint64_t resolver__frames(struct resolver *r);
void resolver__delete(struct resolver *r);

#endif
