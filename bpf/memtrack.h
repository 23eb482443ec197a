/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ABI between bpf/memtrack.bpf.c and userspace: fixed-width types only. */
#ifndef MEMTRACK_BPF_H
#define MEMTRACK_BPF_H

#define MT_COMM_LEN	16
#define MT_PATH_LEN	256

/* record kinds on the events ring; the first __u32 of every record */
enum mt_kind {
	MT_MALLOC = 1,
	MT_CALLOC,
	MT_ALIGNED_ALLOC,
	MT_REALLOC,
	MT_FREE,
	MT_MMAP,
	MT_MUNMAP,
	MT_BRK,
	MT_FORK,
	MT_EXEC,
	MT_EXIT,
	MT_KIND_MAX,
};

/* what the uprobe saw: the probed function, passed as the uprobe_multi cookie */
enum mt_func {
	MT_FN_MALLOC,
	MT_FN_CALLOC,
	MT_FN_REALLOC,
	MT_FN_REALLOCARRAY,
	MT_FN_FREE,
	MT_FN_ALIGNED_ALLOC,
	MT_FN_MEMALIGN,
	MT_FN_POSIX_MEMALIGN,
	MT_FN_VALLOC,
	MT_FN_PVALLOC,
	MT_FN_MAX,
};

/* an allocation event: MT_MALLOC .. MT_BRK */
struct mt_alloc_event {
	__u32 kind;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 pad;
	__u64 ts;		/* CLOCK_MONOTONIC ns */
	__u64 addr;
	__u64 size;
	__u64 old_addr;		/* MT_REALLOC: the pointer passed in, 0 for realloc(NULL, n) */
};

/* process lifetime: MT_FORK, MT_EXEC, MT_EXIT */
struct mt_proc_event {
	__u32 kind;
	__u32 pid;
	__u32 ppid;		/* MT_FORK: parent tgid */
	__s32 exit_code;	/* MT_EXIT: wait status (code << 8 | signal) */
	__u64 ts;
	char comm[MT_COMM_LEN];
	char filename[MT_PATH_LEN];	/* MT_EXEC only */
};

/* per-ring reservation failures, indexed by ring */
enum mt_ring_id {
	MT_RING_EVENTS,
	MT_RING_MAX,
};

#endif
