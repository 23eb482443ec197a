/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The preload shim's own parts: what the interposed functions call.  Only
 * the interposed allocator functions are exported from the library.
 */
#ifndef MEMTRACK_SHIM_H
#define MEMTRACK_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/shim-abi.h"

#define SHIM_HIDDEN	__attribute__((visibility("hidden")))
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

struct shim_next_sym {
	const char *name;
	void *addr;		/* the next definition, NULL while unknown */
	bool shadowed;		/* a library before the shim defines it: calls never reach it */
};

/* fills in addr and shadowed of each of syms (lookup.c) */
SHIM_HIDDEN void shim_lookup_next(struct shim_next_sym *syms, unsigned int n,
				  const void *self);

struct shim_stack_table {
	uint64_t *hashes;	/* open addressing; 0 is empty */
	uint32_t *ids;
	uint32_t cap, n;
};

/* per thread, in initial-exec TLS */
struct shim_thread {
	uint64_t epoch;		/* the process incarnation this state belongs to */
	uint64_t no_ring_epoch;	/* the incarnation in which it could not make its ring */
	struct shim_ring_hdr *hdr;
	uint8_t *data;		/* mapped twice in a row */
	uint64_t size;
	uint64_t cons_seen;	/* a recent cons: prod - cons_seen <= size means room */
	uint64_t populated;	/* of the first lap, the bytes whose pages are mapped */
	uint32_t depth;		/* inside an allocator call or the shim: nested calls pass */
	uint32_t unwinding;	/* a signal handler must not unwind over our own unwind */
	uint32_t tid;
	uint32_t next_stack_id;
	struct shim_stack_table stacks;
};

/* the thread's state when this call is to be recorded, else NULL */
SHIM_HIDDEN struct shim_thread *shim_thread_slow(struct shim_thread *t);

extern __thread struct shim_thread shim_self
	__attribute__((tls_model("initial-exec"))) SHIM_HIDDEN;
extern uint64_t *shim_epoch SHIM_HIDDEN;

static inline struct shim_thread *shim_thread(void)
{
	struct shim_thread *t = &shim_self;
	uint64_t *epoch = shim_epoch;

	if (likely(epoch && t->epoch == *epoch && !t->depth))
		return t;
	return shim_thread_slow(t);
}

/* ring records; each returns after the record is committed */
SHIM_HIDDEN void shim_record_alloc(struct shim_thread *t, uint32_t kind, void *p,
				   size_t size, uint32_t stack);
SHIM_HIDDEN void shim_record_free(struct shim_thread *t, void *p);

/* realloc: the slot and its time are taken before the call, filled after */
struct shim_pending {
	struct shim_realloc_rec *rec;
	uint64_t pos;
};
SHIM_HIDDEN bool shim_realloc_begin(struct shim_thread *t, struct shim_pending *pend,
				    void *old, uint32_t stack);
SHIM_HIDDEN void shim_realloc_end(struct shim_pending *pend, void *ret, size_t size);

/* the id of the caller's stack, sent first if new; 0 without call graphs */
SHIM_HIDDEN uint32_t shim_stack_id(struct shim_thread *t);
SHIM_HIDDEN void shim_stack_init(void);
SHIM_HIDDEN void shim_stack_reset(struct shim_thread *t);
/* the stack from a frame of the program's (a return address, its sp and rbp), by CFI */
SHIM_HIDDEN uint32_t shim_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi,
				   uint64_t *ips, uint32_t max);
/* a library was unloaded: what was known of its code goes */
SHIM_HIDDEN void shim_cfi_forget(void);
/* writes a stack record; used by stack.c */
SHIM_HIDDEN bool shim_write_stack(struct shim_thread *t, uint32_t id, const uint64_t *ips,
				  uint32_t nr);

extern uint32_t shim_call_graph SHIM_HIDDEN;

/* mappings of the shim's own, made from its own code (sys.c) */
SHIM_HIDDEN void *shim_mmap(void *addr, size_t len, int prot, int flags, int fd, long off);
SHIM_HIDDEN int shim_munmap(void *addr, size_t len);
SHIM_HIDDEN void *shim_mremap(void *old, size_t old_len, size_t new_len, int flags);

/* a message on stderr, without allocating */
SHIM_HIDDEN void shim_warn(const char *a, const char *b);

#endif
