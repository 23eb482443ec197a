/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ABI between bpf/memtrack.bpf.c and userspace: fixed-width types only. */
#ifndef MEMTRACK_BPF_H
#define MEMTRACK_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

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
	MT_NEW_CODE,	/* a process mapped code memtrack has not inspected; it is stopped */
	MT_STACK,	/* stacks ring: struct mt_stack_record */
	MT_RAW_STACK,	/* stacks ring: struct mt_raw_stack, to be unwound by userspace */
	MT_CODE_MAP,	/* struct mt_code_map: a process the shim serves mapped code */
	MT_KIND_MAX,
};

/*
 * Keys of pressure_stopped: a tgid stopped by back-pressure on the events
 * ring; with MT_STOPPED_BY_STACKS, on the stacks ring; with
 * MT_STOPPED_FOR_ATTACH, until the code it just mapped is inspected.
 */
#define MT_STOPPED_FOR_ATTACH	(1U << 31)
#define MT_STOPPED_BY_STACKS	(1U << 30)
#define MT_STOPPED_FLAGS	(MT_STOPPED_FOR_ATTACH | MT_STOPPED_BY_STACKS)
#define MT_MAX_STOPPED		16384	/* entries of pressure_stopped */
/*
 * In a value of pressure_stopped: someone else stopped the process too
 * (SIGSTOP), so ending the stop is theirs; the rest is the stop's time.
 */
#define MT_STOPPED_THEIRS	(1ULL << 63)
/*
 * In a value of pressure_stopped for MT_STOPPED_FOR_ATTACH: the hold is
 * for the resolver alone, the process's probes are all in (another's
 * SIGCONT ending it loses no call).  In a bit of the value, not a map of
 * its own: a map is a descriptor of memtrack's, and memtrack runs under
 * the tree's limit of descriptors.
 */
#define MT_STOPPED_NAMES	(1ULL << 62)
#define MT_STOPPED_VALUE_FLAGS	(MT_STOPPED_THEIRS | MT_STOPPED_NAMES)
/*
 * A value of their_stops: when someone else last stopped the process
 * (SIGSTOP), with this bit when the process stopped itself.
 */
#define MT_THEIR_STOP_SELF	(1ULL << 63)

#define MT_NEW_CODE_EXEC	1
#define MT_NEW_CODE_MMAP	2
#define MT_NEW_CODE_FORK	3	/* a child of a process with probes, before it runs */
#define MT_NEW_CODE_UNREACHED	4	/* its shim cannot reach memtrack: BPF takes it */

/*
 * The length of the mapping (PROT_NONE, unmapped at once) by which a shim
 * that cannot reach memtrack's socket says so: a network namespace of its
 * own hides the socket's abstract name, an environment rebuilt may have
 * lost it.  No other mapping of the shim's has this length.
 */
#define MT_SHIM_UNREACHED_LEN	0x16d7

/* in an MT_EXEC's reason: BPF chose the shim for the new image, which runs on unheld */
#define MT_EXEC_PENDING		1
/*
 * ... an image not seen before, which a stop would show to someone (it is
 * ptraced, or a process group's leader, as a job-control shell makes its
 * jobs): its hello settles what it can
 */
#define MT_EXEC_UNSEEN		2

/*
 * Keys of exe_ok: an executable, seen from a root, that userspace found
 * the shim serves (a dynamic ELF of this machine, no sanitizer runtime, no
 * allocator of its own).  Its next execs from that root with the shim's
 * interpreter and no secure exec run on as MT_MODE_PENDING, unheld.
 */
struct mt_exe_key {
	__u64 dev;
	__u64 ino;
	__u64 root;	/* the fs root's dentry, as a number */
};

/*
 * How a tracked process is traced: the values of the `tracked` map.  A
 * process waits as MT_MODE_PENDING from its exec until its preload shim
 * says hello (or shows it never will); only MT_MODE_BPF processes make
 * events at the allocator probes, but for the probes of an allocator the
 * shim does not interpose (MT_COOKIE_FOREIGN), which make them for all.
 */
enum mt_mode {
	MT_MODE_BPF = 1,
	MT_MODE_PENDING,
	MT_MODE_PRELOAD,
};

/* or'ed into the mode: it has probes of its own on a file not shared, so its forks need theirs */
#define MT_MODE_LINKED		0x80
/*
 * Or'ed into MT_MODE_BPF (--backend bpf): the process's preload shim, which
 * it keeps inert, sees every call its probes see, so that a fork child
 * gets its probes in its shim's hello, before its first allocator call,
 * and not held by a SIGSTOP its parent would see.  An exec ends it.
 */
#define MT_MODE_SHIM_WAITS	0x40
#define MT_MODE_FLAGS		(MT_MODE_LINKED | MT_MODE_SHIM_WAITS)

/* keys of pid_files: the process has the probes of that file */
struct mt_pid_file {
	__u32 tgid;
	__u32 pad;
	__u64 dev;
	__u64 ino;
};

/* the values of the `inspected` map: what a file of code holds */
enum mt_file_kind {
	MT_FILE_PLAIN = 1,		/* no allocator function */
	MT_FILE_ALLOCATOR,		/* the shim sees their calls (libc, operator new calling malloc) */
	MT_FILE_FOREIGN_ALLOCATOR,	/* some it cannot (mallocx, mimalloc in libpython) */
};

/* in an allocator probe's cookie, with its enum mt_shape */
#define MT_COOKIE_FOREIGN	(1U << 31)
/*
 * No return probe (an exception may leave the function): the result is that
 * of the allocator call the function makes from its own code, which lies
 * within MT_COOKIE_SPAN bytes of the probe.
 */
#define MT_COOKIE_INNER		(1U << 30)
/*
 * On a return instruction of the function, in place of a return probe
 * (whose trampoline stands in the return address while the function runs):
 * the call ends here, its result in the return register.
 */
#define MT_COOKIE_RET		(1U << 29)
/*
 * A probe of a link every process that maps the file traps in (no pid):
 * the file's slot in `shared_files` is MT_COOKIE_SLOT of the cookie.  It
 * makes events only for a BPF process with no probes of its own there.
 */
#define MT_COOKIE_SHARED	(1U << 28)
#define MT_COOKIE_SLOT(c)	(((c) >> 8) & 0xff)
#define MT_SHARED_MAX		64
#define MT_COOKIE_SHAPE(c)	((c) & 0xff)
#define MT_COOKIE_SPAN(c)	((c) >> 32)

/* a file, as the kernel names it: (s_dev, i_ino) */
struct mt_file_id {
	__u64 dev;
	__u64 ino;
};

/*
 * How a probed function's arguments and return value make an event; the
 * uprobe_multi cookie.  Every allocator's entry points map onto these.
 */
enum mt_shape {
	MT_SHAPE_MALLOC,		/* size a0 -> Malloc */
	MT_SHAPE_CALLOC,		/* a0 * a1 -> Calloc */
	MT_SHAPE_REALLOC,		/* ptr a0, size a1 -> Realloc */
	MT_SHAPE_REALLOCARRAY,		/* ptr a0, a1 * a2 -> Realloc */
	MT_SHAPE_FREE,			/* ptr a0 -> Free, at entry: a leaf free */
	MT_SHAPE_FREE_WRAPPER,		/* ptr a0 -> Free, at return: calls a free */
	MT_SHAPE_ALIGNED_SIZE_A0,	/* size a0 -> AlignedAlloc */
	MT_SHAPE_ALIGNED_SIZE_A1,	/* align a0, size a1 -> AlignedAlloc */
	MT_SHAPE_POSIX_MEMALIGN,	/* *a0 = ptr, size a2 -> AlignedAlloc */
	MT_SHAPE_MAX,
};

/* an allocation event: MT_MALLOC .. MT_BRK */
struct mt_alloc_event {
	__u32 kind;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 flags;		/* MT_EVENT_STACK_SEQ, MT_EVENT_FREERES */
	__u64 ts;		/* CLOCK_MONOTONIC ns */
	__u64 addr;
	__u64 size;
	__u64 old_addr;		/* MT_REALLOC: the pointer passed in, 0 for realloc(NULL, n) */
	__u64 stack;		/* id of the call stack (MT_STACK record), 0: none */
};

/* stack is the seq of a raw stack copy, for userspace to trade for the stack's id */
#define MT_EVENT_STACK_SEQ	(1U << 0)
/* a free made by glibc's __libc_freeres() at the process's exit (the shim's) */
#define MT_EVENT_FREERES	(1U << 1)

#define MT_MAX_FRAMES	127

/* on the stacks ring, once per distinct call stack of a process */
struct mt_stack_record {
	__u32 kind;		/* MT_STACK */
	__u32 pid;
	__u64 id;
	__u32 nr;		/* ips used */
	__u32 pad;
	__u64 ips[MT_MAX_FRAMES];	/* innermost first: the allocator's caller */
};

/*
 * With --call-graph dwarf: the registers and a copy of the user stack at an
 * allocator's entry, one per allocation.  The event's stack is the record's
 * seq until userspace has unwound it and given it the id of a stack.
 */
struct mt_raw_stack {
	__u32 kind;		/* MT_RAW_STACK */
	__u32 pid;
	__u64 seq;
	__u64 ip, sp, bp;	/* at the probe: the allocator's first instructions */
	__u32 size;		/* bytes of data[] copied from sp */
	__u32 tid;
	__u8 data[];
};

#define MT_STACK_COPY_DEFAULT	8192
#define MT_STACK_COPY_MAX	65528	/* as perf's dwarf,SIZE */

enum mt_call_graph {
	MT_CALL_GRAPH_NO,
	MT_CALL_GRAPH_FP,
	MT_CALL_GRAPH_DWARF,
};

/*
 * A code mapping of a process the shim serves, for the resolver: the file
 * by what it is, read later through /proc/PID/map_files or its path with
 * the identity checked.  The process does not stop for it.
 */
struct mt_code_map {
	__u32 kind;		/* MT_CODE_MAP */
	__u32 pid;
	__u64 start, end;	/* [start, end) */
	__u64 pgoff;		/* in bytes */
	__u64 dev;		/* the kernel's dev_t */
	__u64 ino;
};

/* process lifetime: MT_FORK, MT_EXEC, MT_EXIT, and MT_NEW_CODE */
struct mt_proc_event {
	__u32 kind;
	__u32 pid;
	__u32 ppid;		/* MT_FORK: parent tgid */
	union {
		__s32 exit_code;	/* MT_EXIT: wait status (code << 8 | signal) */
		__s32 reason;		/* MT_NEW_CODE: MT_NEW_CODE_EXEC, _MMAP or _FORK;
					 * MT_EXEC: MT_EXEC_PENDING or 0 */
	};
	__u64 ts;
	struct mt_exe_key exe;		/* MT_NEW_CODE at exec: the image's key of exe_ok */
	char comm[MT_COMM_LEN];
	char filename[MT_PATH_LEN];	/* MT_EXEC only */
};

/*
 * Where the fields the probes read lie in the running kernel's structures,
 * found by userspace in its BTF (util/probe/bpf_kernel_offsets.c): one pass over
 * the types instead of a CO-RE candidate search per structure at load.
 */
struct mt_kernel_offsets {
	__u32 task_tgid;		/* pid_t */
	__u32 task_pid;			/* pid_t */
	__u32 task_exit_code;		/* int */
	__u32 task_signal;		/* struct signal_struct * */
	__u32 signal_live;		/* atomic_t */
	__u32 binprm_filename;		/* const char * */
	__u32 binprm_file;		/* struct file * */
	__u32 file_inode;		/* struct inode * */
	__u32 inode_sb;			/* struct super_block * */
	__u32 inode_ino;		/* unsigned long */
	__u32 sb_dev;			/* dev_t */
	__u32 vma_file;			/* struct file * */
	__u32 task_mm;			/* struct mm_struct * */
	__u32 task_vfork_done;		/* struct completion *, set in a vfork child */
	__u32 task_real_parent;		/* struct task_struct * */
	__u32 mm_start_stack;		/* unsigned long */
	__u32 mm_saved_auxv;		/* unsigned long[], the auxv pairs */
	__u32 task_fs;			/* struct fs_struct * */
	__u32 fs_root_dentry;		/* struct dentry *, of root (a struct path) */
	__u32 vma_start;		/* unsigned long */
	__u32 vma_end;			/* unsigned long */
	__u32 vma_pgoff;		/* unsigned long, in pages */
	__u32 task_ptrace;		/* unsigned int */
	__u32 task_thread_pid;		/* struct pid * */
	__u32 signal_pids;		/* struct pid *[PIDTYPE_MAX] */
	__u32 task_group_leader;	/* struct task_struct * */
	__u32 pid_level;		/* unsigned int */
	__u32 pid_numbers;		/* struct upid [] */
	__u32 upid_nr;			/* int */
	__u32 upid_ns;			/* struct pid_namespace * */
	__u32 task_files;		/* struct files_struct * */
	__u32 files_fdt;		/* struct fdtable * */
	__u32 fdt_max_fds;		/* unsigned int */
	__u32 fdt_fd;			/* struct file ** */
};

/* per-ring reservation failures, indexed by ring */
enum mt_ring_id {
	MT_RING_EVENTS,
	MT_RING_STACKS,
	MT_RING_MAX,
};

/* the allocator probes' runs, counted per CPU: what the tracked tree paid */
enum mt_probe_id {
	MT_PROBE_ENTRY,
	MT_PROBE_RETURN,
	MT_PROBE_MAX,
};

#endif
