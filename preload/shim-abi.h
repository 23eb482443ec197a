/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between the preload shim (libmemtrack-preload.so, in the traced
 * process) and memtrack: the messages on the shim's socket and the layout
 * of the per-thread rings.  Fixed-width types only.  memtrack treats all of
 * it as hostile: the process writes it, root reads it.
 *
 * A process's first allocator call connects to memtrack's abstract unix
 * socket (SOCK_SEQPACKET, name in MEMTRACK_SHIM_ENV), sends a shim_hello and
 * waits for one byte: SHIM_ACCEPT (the shim records this process, and the
 * reply carries the read-only control page) or SHIM_REJECT (BPF traces it;
 * the shim stays out of the way).  Then each thread, at its first call,
 * creates its ring (a sealed memfd) and sends a shim_register with the fd,
 * or a shim_no_ring when it cannot: memtrack then knows the run is not
 * exact.  A SHIM_KICK tells a sleeping poller that a ring filled up.  A
 * SHIM_WARN carries a warning of the shim's for memtrack to print: the
 * program's stderr is the program's.  A connection the program closed is
 * replaced by a new one, which says hello again before anything else.
 */
#ifndef MEMTRACK_SHIM_ABI_H
#define MEMTRACK_SHIM_ABI_H

#include <linux/types.h>

/* environment: the socket's abstract name (without the leading NUL) */
#define MEMTRACK_SHIM_ENV	"MEMTRACK_SHIM"
#define SHIM_NAME_MAX		64

#define SHIM_MAGIC		0x4d54534dU	/* "MSTM" */
#define SHIM_VERSION		1

enum shim_msg {
	SHIM_HELLO = 1,
	SHIM_REGISTER,
	SHIM_KICK,
	SHIM_NO_RING,
	SHIM_WARN,
};

#define SHIM_ACCEPT		'A'
#define SHIM_REJECT		'R'

/* what the shim found at start, for memtrack's choice of backend */
#define SHIM_SHADOWED		(1U << 0)	/* a library before the shim defines an allocator function */
#define SHIM_NO_NEXT		(1U << 1)	/* no libc malloc behind the shim */
#define SHIM_PYMALLOC_OFF	(1U << 2)	/* PYTHONMALLOC=malloc (or malloc_debug) */

struct shim_hello {
	__u32 msg;		/* SHIM_HELLO */
	__u32 magic;
	__u32 version;
	__u32 flags;		/* SHIM_SHADOWED, ... */
	__u32 tid;
	__u32 pad;
};

struct shim_register {
	__u32 msg;		/* SHIM_REGISTER; the ring's memfd rides along (SCM_RIGHTS) */
	__u32 tid;
	__u64 size;		/* of the data area, a power of two */
};

/* a thread could not make its ring (err: an errno): its calls go unrecorded */
struct shim_no_ring {
	__u32 msg;		/* SHIM_NO_RING */
	__u32 tid;
	__s32 err;
	__u32 pad;
};

/* a warning, len bytes of printable ASCII (0x20-0x7e), no NUL: memtrack prints it */
#define SHIM_WARN_MAX		200

struct shim_warn {
	__u32 msg;		/* SHIM_WARN */
	__u32 len;		/* of text, 1 to SHIM_WARN_MAX; the message is no longer */
	char text[SHIM_WARN_MAX];
};

/*
 * The control page memtrack shares read-only with every shim: a producer
 * that fills half its ring kicks the poller only while it sleeps.
 */
struct shim_control {
	__u32 magic;
	__u32 poller_asleep;
	__u32 call_graph;	/* enum mt_call_graph */
	__u32 flags;		/* SHIM_CTL_* */
	__u64 ring_size;	/* the data area of each ring */
};

/* call glibc's __libc_freeres() at exit, after the program's exit handlers and destructors */
#define SHIM_CTL_FREERES	(1U << 0)

/*
 * With --call-graph dwarf, SHIM_ACCEPT carries a second fd: the run's CFI
 * rules, a table every shim of the run maps read-write and memtrack never
 * reads.  A rule computed from a module's .eh_frame in one process serves
 * the same module (same build id) in every other: ten cc1 processes of a
 * make compute each return address's rule once, not ten times.
 *
 * A slot is two words, each stored and loaded whole.  key: the module's
 * build-id hash (never 0) above the pc's offset from the module's base; 0
 * is an empty slot.  val: the rule, and above it a check derived from
 * key, so that a val stored for another key between the reader's loads
 * does not pass.  Writers store val, then key.  What another process
 * wrote can be wrong: a rule read here only ever moves the walk inside the
 * reader's stack span, so a bad one cuts or garbles that stack, no more.
 */
struct shim_rule_slot {
	__u64 key;
	__u64 val;
};

#define SHIM_RULES_ORDER	17	/* slots, log2: 2 MiB of shared memory, touched as used */
#define SHIM_RULES_SIZE		((1UL << SHIM_RULES_ORDER) * sizeof(struct shim_rule_slot))

/*
 * After the slots, a page: how many rules the shims computed and stored
 * (a relaxed add each), so that memtrack keeps the table for the next
 * runs only when this one added to it.  Anyone may write it: a wrong count
 * writes the table back for nothing, or not at all.
 */
struct shim_rules_tail {
	__u64 stored;
};

#define SHIM_RULES_MAP_SIZE	(SHIM_RULES_SIZE + 4096)

/*
 * A ring: one page of header, then the data area, mapped twice in a row by
 * both sides so that no record wraps.  The producer (the thread, and signal
 * handlers that interrupt it) reserves with an atomic add on prod, writes the
 * record, and commits it by storing its first word last: stamp is the low 32
 * bits of the record's position, so a stale word from an earlier lap does
 * not read as committed.  The consumer advances cons past committed records
 * only, and bumps cons_gen (a futex word) after each release.
 */
#define SHIM_HDR_SIZE		4096

struct shim_ring_hdr {
	__u32 magic;
	__u32 version;
	__u64 size;
	/*
	 * Threads of the process that the shim could not serve (no ring) and
	 * could not tell memtrack of (no connection, no descriptor left for
	 * one): counted in the process's first ring, which memtrack maps
	 * already and reads when it is done with the process.
	 */
	__u32 unserved;
	__u32 pad;
	__u8 pad0[40];
	__u64 prod;		/* producer's cache line */
	__u64 wait_start;	/* CLOCK_MONOTONIC ns when the thread began to wait, 0 */
	__u32 waiting;		/* the producer sleeps on cons_gen */
	__u32 drops;		/* records that could not be written (see the shim) */
	__u8 pad1[40];
	__u64 cons;		/* consumer's cache line */
	__u32 cons_gen;
	__u32 released;		/* memtrack is done with this ring */
};

/* the first word of every record, as one little-endian __u64 */
#define SHIM_REC_STAMP(w)	((__u32)(w))
#define SHIM_REC_LEN(w)		((__u32)((w) >> 32) & 0xffff)
#define SHIM_REC_KIND(w)	((__u32)((w) >> 48) & 0xff)
#define SHIM_REC_WORD(pos, len, kind) \
	((__u64)(__u32)(pos) | (__u64)(len) << 32 | (__u64)(kind) << 48)

enum shim_rec_kind {
	SHIM_REC_ALLOC = 1,	/* struct shim_alloc_rec: malloc, calloc, aligned */
	SHIM_REC_REALLOC,	/* struct shim_realloc_rec */
	SHIM_REC_FREE,		/* struct shim_free_rec */
	SHIM_REC_STACK,		/* struct shim_stack_rec, before the first event using it */
	SHIM_REC_FREERES,	/* struct shim_free_rec: a free made in glibc's __libc_freeres() */
	SHIM_REC_MAX,
};

/* alloc kinds are enum mt_kind values (bpf/memtrack.h) */
struct shim_alloc_rec {
	__u64 word;
	__u64 ts;
	__u64 addr;
	__u64 size;
	__u32 kind;		/* MT_MALLOC, MT_CALLOC, MT_ALIGNED_ALLOC */
	__u32 stack;		/* the thread's stack id, 0: none */
};

struct shim_realloc_rec {
	__u64 word;
	__u64 ts;
	__u64 addr;		/* 0 when realloc(p, 0) freed p */
	__u64 size;
	__u64 old_addr;
	__u32 stack;
	__u32 pad;
};

struct shim_free_rec {
	__u64 word;
	__u64 ts;
	__u64 addr;
};

/* ids are the thread's own: 1, 2, 3 ... in the order they are sent */
struct shim_stack_rec {
	__u64 word;
	__u32 id;
	__u32 nr;
	__u64 ips[];		/* innermost first: the allocator's caller */
};

#define SHIM_MAX_FRAMES		127

#endif
