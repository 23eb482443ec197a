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
#include <string.h>

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
	uint64_t *ips;		/* a walk's frames: off the program's stack, which may be small */
};

/*
 * The program's frame at its call into the shim, as the exported function
 * found it in its own frame: the unwinders start here, so that nothing of
 * the program's is read before it is checked.
 */
struct shim_caller {
	uintptr_t ip;		/* the return address into the program */
	uintptr_t sp;		/* its stack pointer once the call returns */
	uintptr_t bp;		/* its frame pointer register at the call */
};

/* in an exported function, which keeps a frame pointer: its caller's frame */
#define SHIM_CALLER()							\
	((struct shim_caller){						\
		.ip = (uintptr_t)__builtin_return_address(0),		\
		.sp = (uintptr_t)__builtin_dwarf_cfa(),			\
		.bp = *(const uintptr_t *)__builtin_frame_address(0),	\
	})

/*
 * Memory of the program's stack that may be read: [lo, hi), in place, or
 * a copy of it.  Every word an unwinder reads goes through shim_span_word().
 */
struct shim_span {
	uintptr_t lo, hi;
	const uint8_t *copy;	/* NULL: read in place */
};

/*
 * [a, a + len) inside, with no sum that can wrap (a near ~0 must not pass
 * for one below hi): a below lo makes a - lo larger than any span.
 */
static inline bool shim_span_has(const struct shim_span *s, uintptr_t a, uintptr_t len)
{
	return s->hi - s->lo >= len && a - s->lo <= s->hi - s->lo - len && !(a & 7);
}

static inline bool shim_span_word(const struct shim_span *s, uintptr_t a, uintptr_t *out)
{
	if (!shim_span_has(s, a, sizeof(*out)))
		return false;
	/* a builtin: the shim is built with -fno-builtin, and this is per frame */
	__builtin_memcpy(out, s->copy ? (const void *)(s->copy + (a - s->lo)) : (const void *)a,
			 sizeof(*out));
	return true;
}

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
	uint32_t freeres;	/* inside __libc_freeres(): its frees are glibc's */
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
SHIM_HIDDEN uint32_t shim_stack_id(struct shim_thread *t, const struct shim_caller *c);
SHIM_HIDDEN void shim_stack_reset(struct shim_thread *t);
/* the frames from the program's caller on, by CFI; each read inside stack */
SHIM_HIDDEN uint32_t shim_cfi_walk(const struct shim_span *stack, const struct shim_caller *c,
				   uint64_t *ips, uint32_t max);
/* the CFI rules this process shares with the run's other shims (shim-abi.h), or NULL */
SHIM_HIDDEN struct shim_rule_slot *shim_cfi_rules(void);
/* dlclose(): waits for the unwinders to leave the CFI of every library, keeps them out */
SHIM_HIDDEN void shim_cfi_close_begin(void);
SHIM_HIDDEN void shim_cfi_close_end(void);
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
