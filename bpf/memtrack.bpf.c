// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * memtrack's probes.  Allocator entry points are hit through one uprobe_multi
 * link per binary (the function is the attach cookie); syscalls and process
 * lifetime through raw tracepoints, which need no tracefs.  Only processes in
 * `tracked` (the root and its descendants) produce events.
 *
 * No CO-RE: libbpf would search the kernel's BTF once per structure, about a
 * millisecond each, at every start.  pt_regs is read at its fixed (ABI)
 * offsets; the kernel structures at offsets userspace found in the BTF
 * (struct mt_kernel_offsets).
 *
 * Pids and tids are memtrack's view of them, in its pid namespace: see
 * current_pid_tgid().
 *
 * A function called from several places is global, with scalar arguments
 * and result (what Linux 6.6 takes): the verifier checks a global function
 * once per program, a static one again at every call.  Loading is on every
 * run's path: sys_exit took 3193 instructions to check, 2066 so.
 */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "memtrack.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SIGCONT		18
#define SIGSTOP		19
/* what bpf_send_signal() passes for siginfo (the kernel's SEND_SIG_PRIV) */
#define SEND_SIG_PRIV	1
#define MAX_ERRNO	4095
#define PROT_EXEC	0x4
#define MAP_ANONYMOUS	0x20
#define STACK_END_SLACK	64	/* bytes copied above a thread's outermost frame */
#define MAX_PID_NS_LEVEL	32	/* the kernel's */

#if defined(__TARGET_ARCH_x86)
#define NR_mmap		9
#define NR_munmap	11
#define NR_brk		12
#define NR_mremap	25
#define NR_clone	56
#define NR_fork		57
#define NR_vfork	58
#define NR_clone3	435
#define SYSCALL_NR	orig_ax
#define SYSCALL_ARG1	di
#define SYSCALL_ARG2	si
#define SYSCALL_ARG3	dx
#define SYSCALL_ARG4	r10
#define SYSCALL_ARG5	r8
#define SYSCALL_ARG6	r9
#define SYSCALL_IP	ip
#elif defined(__TARGET_ARCH_arm64)
#define NR_brk		214
#define NR_munmap	215
#define NR_mremap	216
#define NR_mmap		222
#define NR_clone	220
#define NR_clone3	435
#define NR_fork		-1	/* arm64 has neither: clone does it */
#define NR_vfork	-1
#define SYSCALL_NR	syscallno
#define SYSCALL_ARG1	orig_x0
#define SYSCALL_ARG2	regs[1]
#define SYSCALL_ARG3	regs[2]
#define SYSCALL_ARG4	regs[3]
#define SYSCALL_ARG5	regs[4]
#define SYSCALL_ARG6	regs[5]
#define SYSCALL_IP	pc
#else
#error "syscall numbers for this architecture are missing"
#endif

/* ring bytes in use at which the producer is stopped; 0: never */
const volatile __u64 events_watermark = 0;
const volatile __u64 stacks_watermark = 0;
/* ring bytes in use at which the poller is woken to freeze the tree; 0: no freezer */
const volatile __u64 events_freeze_mark = 0;
const volatile __u64 stacks_freeze_mark = 0;
const volatile __u32 call_graph = MT_CALL_GRAPH_NO;
/* --call-graph dwarf,SIZE: a multiple of 8, at most MT_STACK_COPY_MAX */
const volatile __u32 stack_copy_size = MT_STACK_COPY_DEFAULT;

const volatile struct mt_kernel_offsets koff = {};

/*
 * memtrack's pid namespace, /proc/self/ns/pid's device and inode, when it is
 * not the initial one (0 then); its level and its struct pid_namespace are
 * learnt at load by learn_pidns.
 */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
__u32 pidns_level = 0;
__u64 pidns_addr = 0;

/* bumped at every stop, so that pollers scan pressure_stopped only when needed */
__u64 pressure_stops = 0;
__u64 holds_ended_early = 0;	/* attach holds another's SIGCONT ended */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);	/* set by userspace */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* set by userspace */
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* allocated as used, not zeroed at load */
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);	/* enum mt_mode */
} tracked SEC(".maps");

/*
 * hash of (tgid, ips) -> stack id: a stack is sent once per process.  Not
 * an LRU map: that one is allocated whole at load, 256K entries took 65 ms
 * of every fp run here.  Once full, a new stack is sent at each use.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} stack_ids SEC(".maps");

__u64 next_stack_id = 0;

/*
 * Per thread, where its stack ends as far as unwinding goes: the CFA of
 * its outermost frame, learnt by userspace from a first full copy.  A copy
 * need go no further: for the main thread, what lies above is argv and
 * the environment, kilobytes of it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tid */
	__type(value, __u64);
} stack_ends SEC(".maps");

/*
 * A raw stack copy is assembled here, then sent at the length it has; one
 * per CPU (a per-CPU array's values are limited to 32 KiB), as many as
 * userspace sets.
 */
struct raw_stack_buf {
	__u8 bytes[sizeof(struct mt_raw_stack) + MT_STACK_COPY_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* set by userspace: the possible CPUs */
	__type(key, __u32);
	__type(value, struct raw_stack_buf);
} raw_scratch SEC(".maps");

/* room for one stack record: too large for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_stack_record);
} stack_scratch SEC(".maps");

/* tgid -> bpf_ktime_get_ns() when memtrack stopped it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* allocated as used, not zeroed at load */
	__uint(max_entries, MT_MAX_STOPPED);
	__type(key, __u32);
	__type(value, __u64);
} pressure_stopped SEC(".maps");

/* tracked processes that someone else (the workload, a shell) has stopped: tgid -> when */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_MAX_STOPPED);
	__type(key, __u32);
	__type(value, __u64);
} their_stops SEC(".maps");

/* files whose allocator symbols userspace has looked for (and attached) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* allocated as used, not zeroed at load */
	__uint(max_entries, 16384);
	__type(key, struct mt_file_id);
	__type(value, __u8);	/* enum mt_file_kind */
} inspected SEC(".maps");

/* the files whose probes a process has (its own uprobe_multi links, with its pid) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct mt_pid_file);
	__type(value, __u8);
} pid_files SEC(".maps");

/* a shared link's file, by the slot its cookies carry */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_SHARED_MAX);
	__type(key, __u32);
	__type(value, struct mt_file_id);
} shared_files SEC(".maps");

/* the files whose probes are shared: a BPF process mapping one needs no stop for them */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, MT_SHARED_MAX);
	__type(key, struct mt_file_id);
	__type(value, __u32);
} shared_slots SEC(".maps");

/* executables the shim serves, from a root: struct mt_exe_key (userspace's verdicts) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, struct mt_exe_key);
	__type(value, __u8);
} exe_ok SEC(".maps");

/* the fs roots (dentries, as numbers) where the shim is at its path */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 64);
	__type(key, __u64);
	__type(value, __u8);
} roots_ok SEC(".maps");

struct code_range {
	__u64 start, end;
};

/* tracked processes whose image has mapped the preload shim: where its code is */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);	/* tgid */
	__type(value, struct code_range);
} shim_mapped SEC(".maps");

/* 0: tracked processes run whatever code they map, unprobed */
const volatile bool discover_allocators = false;
/* every exec stops, for userspace to choose the new image's backend */
const volatile bool decide_at_exec = false;
/* the preload shim: its own mappings are memtrack's, not the program's */
const volatile struct mt_file_id shim_file = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_RING_MAX);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_PROBE_MAX);
	__type(key, __u32);
	__type(value, __u64);
} probe_runs SEC(".maps");

/*
 * An allocator call in progress on a thread: the outermost one's arguments.
 * A call whose function has no return probe (MT_COOKIE_INNER) waits as
 * `outer` for the allocator call it makes from its code [lo, hi): that
 * call's result is its result, with its own stack, shape and arguments.
 */
struct call_frame {
	__u64 args[3];
	__u64 stack;
	__u32 shape;
};

struct call_state {
	struct call_frame call;
	struct call_frame outer;	/* with outer_hi: the call's as the program made it */
	__u64 outer_lo, outer_hi;	/* where the waiting call's code is */
	__u64 outer_sp;
	__u32 depth;
	__u32 has_outer;	/* the call in progress is the waiting one's */
};

/*
 * Per thread, by its tid in the initial namespace; made at its first
 * allocator call, gone at its exit.  Not task storage: its get fails while
 * another task on the same CPU was preempted inside one, and the call's
 * event was lost (1 in some 10^6 calls with 16 processes on 2 cores).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct call_state);
} calls SEC(".maps");

static const struct call_state no_call;

static __always_inline struct call_state *call_state_of_current(bool make)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct call_state *st = bpf_map_lookup_elem(&calls, &tid);

	if (st || !make)
		return st;
	bpf_map_update_elem(&calls, &tid, &no_call, BPF_NOEXIST);
	return bpf_map_lookup_elem(&calls, &tid);
}


/*
 * Set by userspace when the run ends: the probes stay attached a little
 * longer (the guardian releases them, off memtrack's exit path) but
 * produce nothing more.
 */
__u32 tracing_done = 0;

/* a kernel field of that type at base + off, 0 if unreadable */
#define kernel_read(type, base, off) ({						\
	type __v = 0;								\
	bpf_probe_read_kernel(&__v, sizeof(__v), (const char *)(base) + (off));	\
	__v;									\
})

#define kernel_u32(base, off)	kernel_read(__u32, base, off)
#define kernel_ptr(base, off)	kernel_read(void *, base, off)

/* the number of a struct pid in memtrack's namespace, 0 if it has none there */
static __always_inline __u32 pid_nr_in_ns(void *pid)
{
	__u32 level = pidns_level;
	/* struct upid { int nr; struct pid_namespace *ns; }: ns is its last member */
	void *upid = pid + koff.pid_numbers + level * (koff.upid_ns + sizeof(void *));

	if (!pid || level > MAX_PID_NS_LEVEL || kernel_u32(pid, koff.pid_level) < level ||
	    (__u64)kernel_ptr(upid, koff.upid_ns) != pidns_addr)
		return 0;
	return kernel_u32(upid, koff.upid_nr);
}

/*
 * A task's tgid (or with !tgid its pid, the thread's id) as memtrack sees
 * it: in memtrack's pid namespace, however deeper the task's own is; 0 for
 * a task outside it.
 */
static __noinline __u32 task_nr(struct task_struct *task, bool tgid)
{
	if (!pidns_ino)
		return kernel_u32(task, tgid ? koff.task_tgid : koff.task_pid);
	if (tgid)
		task = kernel_ptr(task, koff.task_group_leader);
	return pid_nr_in_ns(kernel_ptr(task, koff.task_thread_pid));
}

/*
 * bpf_get_current_pid_tgid() in memtrack's pid namespace: the helper with
 * the namespace answers for a task of that namespace itself, a deeper one's
 * numbers come from its struct pid.  In the initial namespace, the kernel's.
 */
__noinline __u64 current_pid_tgid(void)
{
	struct task_struct *task;
	struct bpf_pidns_info ns;

	if (!pidns_ino)
		return bpf_get_current_pid_tgid();
	if (!bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)))
		return (__u64)ns.tgid << 32 | ns.pid;
	task = (void *)bpf_get_current_task();
	return (__u64)task_nr(task, true) << 32 | task_nr(task, false);
}

static __always_inline bool is_tracked(__u32 tgid)
{
	return !tracing_done && bpf_map_lookup_elem(&tracked, &tgid) != NULL;
}

/* the process's mode with MT_MODE_LINKED, 0 when it is not tracked */
static __always_inline __u8 mode_bits_of(__u32 tgid)
{
	__u8 *mode = tracing_done ? NULL : bpf_map_lookup_elem(&tracked, &tgid);

	return mode ? *mode : 0;
}

static __always_inline __u8 mode_of(__u32 tgid)
{
	return mode_bits_of(tgid) & ~MT_MODE_FLAGS;
}

/* a new image may not have the shim, or have it serve what the probes see */
static __always_inline void end_shim_waits(__u32 tgid)
{
	__u8 *mode = bpf_map_lookup_elem(&tracked, &tgid);

	if (mode && (*mode & MT_MODE_SHIM_WAITS))
		*mode &= ~MT_MODE_SHIM_WAITS;
}

/* the process is to be served by its shim: not BPF's, not decided yet at a held exec */
static __always_inline bool shim_chosen(__u32 tgid)
{
	__u8 mode = mode_of(tgid);

	return mode == MT_MODE_PENDING || mode == MT_MODE_PRELOAD;
}

static __always_inline void count_drop(__u32 ring)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &ring);

	if (n)
		(*n)++;
}

/* room for an event in the events ring, or NULL (counted) once tracing is done or it is full */
static __always_inline void *reserve_event(__u64 size)
{
	void *e;

	if (tracing_done)
		return NULL;
	e = bpf_ringbuf_reserve(&events, size, 0);
	if (!e)
		count_drop(MT_RING_EVENTS);
	return e;
}

static __always_inline void count_run(__u32 probe)
{
	__u64 *n = bpf_map_lookup_elem(&probe_runs, &probe);

	if (n)
		(*n)++;
}

/*
 * Back-pressure: past a ring's watermark, the process is stopped until the
 * poller has drained the ring and sends SIGCONT.
 */
static __always_inline bool above_watermark(void *ring, __u64 watermark)
{
	return watermark && bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= watermark;
}

/* a value of pressure_stopped: now, and whether someone else's stop holds too */
static __always_inline __u64 stop_value(__u32 tgid)
{
	__u64 now = bpf_ktime_get_ns();

	return bpf_map_lookup_elem(&their_stops, &tgid) ? now | MT_STOPPED_THEIRS : now;
}

static __always_inline void stop_for_pressure(__u32 ring_flag)
{
	__u32 tgid;
	__u64 now;

	/*
	 * To this thread, not the process: a SIGSTOP already pending for the
	 * process makes another one a no-op, and the thread that should take
	 * it may run on for hundreds of allocations (seen with 16 threads on 2
	 * cores); one in this thread's own queue stops it when it returns to
	 * user space, and the whole process with it.
	 */
	if (bpf_send_signal_thread(SIGSTOP))
		return;		/* an exiting task or a kernel thread */
	tgid = current_pid_tgid() >> 32;
	now = stop_value(tgid);
	tgid |= ring_flag;
	bpf_map_update_elem(&pressure_stopped, &tgid, &now, BPF_NOEXIST);
	__sync_fetch_and_add(&pressure_stops, 1);
}

/*
 * Past the freeze mark, the consumer is woken at once: it freezes the
 * tree's cgroup, a pause no process can see, well before the watermark.
 */
static __always_inline __u64 wakeup_past(void *ring, __u64 freeze_mark)
{
	return above_watermark(ring, freeze_mark) ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* past the watermark: wake the consumer now, and stop this process */
static __noinline void submit_event(void *rec)
{
	if (!above_watermark(&events, events_watermark)) {
		bpf_ringbuf_submit(rec, wakeup_past(&events, events_freeze_mark));
		return;
	}
	/* recorded before the wakeup, or the woken poller may find nothing to release */
	stop_for_pressure(0);
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

/*
 * Whether userspace must see this mapping of a known file: a process whose
 * backend is still open stops at every allocator it maps.
 */
static __always_inline bool known_file_needs_stop(struct mt_file_id *file, __u32 tgid)
{
	struct mt_pid_file key = { .tgid = tgid, .dev = file->dev, .ino = file->ino };
	__u8 *kind = bpf_map_lookup_elem(&inspected, file), mode = mode_of(tgid);

	/*
	 * ld.so maps LD_PRELOAD's libraries first: with the shim mapped, the
	 * process waits in its hello while userspace inspects what it mapped
	 */
	if (mode == MT_MODE_PENDING && bpf_map_lookup_elem(&shim_mapped, &tgid))
		return false;
	if (!kind || mode == MT_MODE_PENDING)
		return true;
	if (*kind == MT_FILE_PLAIN)
		return false;
	if (mode == MT_MODE_BPF && *kind == MT_FILE_ALLOCATOR &&
	    bpf_map_lookup_elem(&shared_slots, file))
		return false;
	/* an allocator the process is to have the probes of, and has not yet */
	return (mode == MT_MODE_BPF || *kind == MT_FILE_FOREIGN_ALLOCATOR) &&
	       !bpf_map_lookup_elem(&pid_files, &key);
}

/*
 * A pending process with the shim mapped: what it maps before its hello,
 * userspace reads while the hello waits, so it need not stop for it.
 */
static __always_inline bool waits_in_hello(void)
{
	__u32 tgid = current_pid_tgid() >> 32;

	return mode_of(tgid) == MT_MODE_PENDING && bpf_map_lookup_elem(&shim_mapped, &tgid);
}

/*
 * How a process stops for userspace: the MT_NEW_CODE_ reason, and whether it
 * stops whatever the file (else only for one whose probes it lacks), and
 * whether dev and ino name the mapped file, or the exec'd one with its root.
 */
#define STOP_REASON_MASK	0xff
#define STOP_ALWAYS		(1U << 8)
#define STOP_FILE		(1U << 9)
#define STOP_EXE		(1U << 10)

/* stops the current process until userspace has inspected what it mapped */
__noinline int stop_for_attach(__u64 dev, __u64 ino, __u64 root, __u32 how)
{
	struct mt_file_id file = { .dev = dev, .ino = ino };
	struct mt_proc_event *e;
	__u32 tgid = current_pid_tgid() >> 32, key;
	__s32 reason = how & STOP_REASON_MASK;
	bool for_probes = reason != MT_NEW_CODE_MMAP || !(how & STOP_FILE) ||
			  known_file_needs_stop(&file, tgid);
	__u64 now;

	if (!(how & STOP_ALWAYS) && !for_probes)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(MT_RING_EVENTS);
		return 0;
	}
	/* to this thread: see stop_for_pressure() */
	if (bpf_send_signal_thread(SIGSTOP)) {
		/* it runs the new code unprobed: its allocations there would be lost unsaid */
		bpf_ringbuf_discard(e, 0);
		count_drop(MT_RING_EVENTS);
		return 0;
	}
	key = tgid | MT_STOPPED_FOR_ATTACH;
	now = stop_value(tgid) | (for_probes ? 0 : MT_STOPPED_NAMES);
	bpf_map_update_elem(&pressure_stopped, &key, &now, BPF_ANY);
	e->kind = MT_NEW_CODE;
	e->pid = tgid;
	e->ppid = 0;
	e->reason = reason;
	e->ts = now & ~MT_STOPPED_VALUE_FLAGS;
	e->comm[0] = 0;
	e->filename[0] = 0;
	e->exe.dev = how & STOP_EXE ? dev : 0;
	e->exe.ino = how & STOP_EXE ? ino : 0;
	e->exe.root = how & STOP_EXE ? root : 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

static __always_inline void file_id_of(struct file *f, struct mt_file_id *id)
{
	struct inode *inode = kernel_ptr(f, koff.file_inode);

	id->dev = kernel_u32(kernel_ptr(inode, koff.inode_sb), koff.sb_dev);
	id->ino = kernel_read(__u64, inode, koff.inode_ino);
}

/* a code mapping as the resolver needs it: its range, offset and file */
static long vma_code_map(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct mt_code_map *m = ctx;
	struct file *f = kernel_ptr(vma, koff.vma_file);
	struct mt_file_id id = {};

	if (f)
		file_id_of(f, &id);
	m->dev = id.dev;
	m->ino = id.ino;
	m->start = kernel_read(__u64, vma, koff.vma_start);
	m->end = kernel_read(__u64, vma, koff.vma_end);
	m->pgoff = kernel_read(__u64, vma, koff.vma_pgoff) << 12;
	return 0;
}

/* the resolver learns the mapping from the event, and the process runs on */
static __noinline void emit_code_map(struct mt_code_map *m)
{
	struct mt_code_map *e = reserve_event(sizeof(*e));

	if (!e)
		return;
	*e = *m;
	e->kind = MT_CODE_MAP;
	e->pid = current_pid_tgid() >> 32;
	submit_event(e);
}

/*
 * The process whose memory an event is about: a vfork child (until it
 * execs or exits) runs in its parent's, and what it allocates there its
 * parent frees (a shell's vfork child does), as the shim counts it too.
 */
static __always_inline __u32 owner_tgid(__u64 id)
{
	struct task_struct *task = (void *)bpf_get_current_task();

	if (kernel_ptr(task, koff.task_vfork_done))
		return task_nr(kernel_ptr(task, koff.task_real_parent), true);
	return id >> 32;
}

__noinline int emit_alloc_stack(__u32 kind, __u64 addr, __u64 size, __u64 old_addr,
				__u64 stack)
{
	__u64 id = current_pid_tgid();
	struct mt_alloc_event *e = reserve_event(sizeof(*e));

	if (!e)
		return 0;
	e->kind = kind;
	e->pid = owner_tgid(id);
	e->tid = (__u32)id;
	e->flags = stack && call_graph == MT_CALL_GRAPH_DWARF ? MT_EVENT_STACK_SEQ : 0;
	e->ts = bpf_ktime_get_ns();
	e->addr = addr;
	e->size = size;
	e->old_addr = old_addr;
	e->stack = stack;
	submit_event(e);
	return 0;
}

static __always_inline void emit_alloc(__u32 kind, __u64 addr, __u64 size,
				       __u64 old_addr)
{
	emit_alloc_stack(kind, addr, size, old_addr, 0);
}

static __always_inline __u64 hash_stack(__u32 tgid, const __u64 *ips, __u32 nr)
{
	__u64 h = 0xcbf29ce484222325ULL ^ tgid;
	__u32 i;

	for (i = 0; i < MT_MAX_FRAMES; i++) {
		if (i >= nr)
			break;
		h = (h ^ ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

/* will the stacks ring be past its watermark once len more bytes are in */
static __always_inline bool stacks_full_after(__u64 len)
{
	return stacks_watermark &&
	       bpf_ringbuf_query(&stacks, BPF_RB_AVAIL_DATA) + len >= stacks_watermark;
}

/*
 * Where a thread's stack ends for unwinding: learnt from a first full copy,
 * or for a main thread, the stack pointer its program started with (its
 * _start's frame sits there, argv and the environment above).
 */
static __always_inline __u64 stack_end_of(__u64 id)
{
	__u32 tid = (__u32)id;
	__u64 *end = bpf_map_lookup_elem(&stack_ends, &tid);
	void *mm;

	if (end)
		return *end;
	if (tid != id >> 32)
		return 0;
	mm = kernel_ptr(bpf_get_current_task(), koff.task_mm);
	return mm ? kernel_read(__u64, mm, koff.mm_start_stack) + STACK_END_SLACK : 0;
}

/* bytes of stack to copy from sp: up to the thread's end, at most stack_copy_size */
static __always_inline __u64 live_stack_len(__u64 id, __u64 sp)
{
	__u64 end = stack_end_of(id), len = stack_copy_size;

	if (end > sp && end - sp < len)
		len = (end - sp + 7) & ~7ULL;
	return len;
}

/*
 * The registers and the live part of the user stack, for userspace to
 * unwind from the CFI; the record's seq stands for the stack until then.
 * The stack may end (the top of its mapping) before sp + len, and a read
 * that crosses the end fails whole: then shorter ones, a page less at a
 * time, from the last page boundary below sp + len.
 */
__noinline __u64 capture_raw_stack(__u64 ip, __u64 sp, __u64 bp)
{
	__u64 id = current_pid_tgid(), want, len, end, seq;
	__u32 i, cpu = bpf_get_smp_processor_id();
	struct raw_stack_buf *buf;
	struct mt_raw_stack *hdr;
	__u8 *data;
	bool full;

	buf = bpf_map_lookup_elem(&raw_scratch, &cpu);
	if (!buf)
		return 0;
	hdr = (struct mt_raw_stack *)buf->bytes;
	data = buf->bytes + sizeof(*hdr);
	want = live_stack_len(id, sp);
	len = want;
	end = (sp + len) & ~4095ULL;
	for (i = 0; i < MT_STACK_COPY_MAX / 4096 + 2; i++) {
		if (len > want || len > MT_STACK_COPY_MAX)
			break;
		if (!bpf_probe_read_user(data, len, (void *)sp))
			break;
		if (end <= sp) {
			len = 0;
			break;
		}
		len = end - sp;
		end -= 4096;
	}
	if (len > want || len > MT_STACK_COPY_MAX)
		len = 0;
	seq = __sync_fetch_and_add(&next_stack_id, 1) + 1;
	hdr->kind = MT_RAW_STACK;
	hdr->pid = id >> 32;
	hdr->tid = (__u32)id;
	hdr->seq = seq;
	hdr->ip = ip;
	hdr->sp = sp;
	hdr->bp = bp;
	hdr->size = len;
	full = stacks_full_after(sizeof(*hdr) + len);
	if (full)
		stop_for_pressure(MT_STOPPED_BY_STACKS);
	if (bpf_ringbuf_output(&stacks, buf, sizeof(*hdr) + len,
			       full ? BPF_RB_FORCE_WAKEUP :
				      wakeup_past(&stacks, stacks_freeze_mark))) {
		count_drop(MT_RING_STACKS);
		return 0;
	}
	return seq;
}

/*
 * The user stack at an allocator's entry as an id: by frame pointers, or
 * with dwarf the seq of a raw copy.  At
 * entry the frame pointer chain still starts in the caller, so the walk
 * skips it: the caller is the return address at the top of the stack.
 */
static __noinline __u64 capture_stack(struct pt_regs *ctx)
{
	__u32 zero = 0, tgid = current_pid_tgid() >> 32;
	struct mt_stack_record *rec;
	__u64 hash, id, *known;
	bool full;
	long len;

	if (call_graph == MT_CALL_GRAPH_DWARF)
		return capture_raw_stack(PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx));
	if (call_graph != MT_CALL_GRAPH_FP)
		return 0;
	rec = bpf_map_lookup_elem(&stack_scratch, &zero);
	if (!rec)
		return 0;
	len = bpf_get_stack(ctx, rec->ips, sizeof(rec->ips), BPF_F_USER_STACK);
	if (len <= 0)
		return 0;
#if defined(__TARGET_ARCH_arm64)
	rec->ips[0] = PT_REGS_RET(ctx);		/* the link register */
#else
	if (bpf_probe_read_user(&rec->ips[0], sizeof(__u64), (void *)PT_REGS_SP(ctx)))
		return 0;
#endif
	rec->nr = len / sizeof(__u64);
	hash = hash_stack(tgid, rec->ips, rec->nr);
	known = bpf_map_lookup_elem(&stack_ids, &hash);
	if (known)
		return *known;

	id = __sync_fetch_and_add(&next_stack_id, 1) + 1;
	bpf_map_update_elem(&stack_ids, &hash, &id, BPF_ANY);
	rec->kind = MT_STACK;
	rec->pid = tgid;
	rec->id = id;
	rec->pad = 0;
	len = offsetof(struct mt_stack_record, ips) + rec->nr * sizeof(__u64);
	if (len > sizeof(*rec))
		len = sizeof(*rec);
	full = stacks_full_after(len);
	if (full)
		stop_for_pressure(MT_STOPPED_BY_STACKS);
	if (bpf_ringbuf_output(&stacks, rec, len,
			       full ? BPF_RB_FORCE_WAKEUP :
				      wakeup_past(&stacks, stacks_freeze_mark))) {
		count_drop(MT_RING_STACKS);
		bpf_map_delete_elem(&stack_ids, &hash);
		return 0;
	}
	return id;
}

static __noinline struct mt_proc_event *reserve_proc_event(__u32 kind,
								__u32 pid)
{
	struct mt_proc_event *e = reserve_event(sizeof(*e));

	if (!e)
		return NULL;
	e->kind = kind;
	e->pid = pid;
	e->ppid = 0;
	e->exit_code = 0;
	e->ts = bpf_ktime_get_ns();
	e->filename[0] = 0;
	e->exe.dev = e->exe.ino = e->exe.root = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/*
 * A shared probe is the process's only where it has none of its own on that
 * file (it had, from before the file's probes were shared): each call is
 * seen once.  The others, outside the tree or the shim's, trap for nothing.
 */
static __noinline bool shared_probe_is_ours(__u32 tgid, __u64 cookie)
{
	struct mt_pid_file key = { .tgid = tgid };
	__u32 slot = MT_COOKIE_SLOT(cookie);
	struct mt_file_id *file;

	if (mode_of(tgid) != MT_MODE_BPF)
		return false;
	file = bpf_map_lookup_elem(&shared_files, &slot);
	if (!file)
		return false;
	key.dev = file->dev;
	key.ino = file->ino;
	return !bpf_map_lookup_elem(&pid_files, &key);
}

/* the probe's shape, or -1 when this call is not BPF's to record */
static __always_inline int probe_shape(__u32 tgid, __u64 cookie)
{
	__u8 mode = mode_of(tgid);

	if (cookie & MT_COOKIE_SHARED)
		return shared_probe_is_ours(tgid, cookie) ? MT_COOKIE_SHAPE(cookie) : -1;
	if (mode == MT_MODE_BPF || (mode && (cookie & MT_COOKIE_FOREIGN)))
		return MT_COOKIE_SHAPE(cookie);
	return -1;
}

/* the return address of a function at its first instruction */
static __always_inline __u64 return_address(struct pt_regs *ctx)
{
	__u64 ret = 0;

#if defined(__TARGET_ARCH_arm64)
	ret = PT_REGS_RET(ctx);		/* the link register */
#else
	bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx));
#endif
	return ret;
}

static __always_inline void take_frame(struct call_frame *f, struct pt_regs *ctx, __u32 shape,
				       bool stack)
{
	f->shape = shape;
	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	/* a free's stack tells nothing the allocation's does not */
	f->stack = stack && shape != MT_SHAPE_FREE_WRAPPER ? capture_stack(ctx) : 0;
}

/*
 * A function an exception may leave (operator new): its arguments and the
 * program's stack now, its result from the call it makes.  Called or
 * jumped to by another such one that waits (operator new[] calling
 * operator new), the first stays the program's call.
 */
static __always_inline void wait_for_inner(struct call_state *st, struct pt_regs *ctx,
					   __u32 shape, __u64 cookie)
{
	__u64 ip = PT_REGS_IP(ctx), sp = PT_REGS_SP(ctx), ret;

	if (st->outer_hi) {
		ret = return_address(ctx);
		if (sp == st->outer_sp || (ret > st->outer_lo && ret <= st->outer_hi))
			goto wait;
	}
	take_frame(&st->outer, ctx, shape, true);
	st->outer_sp = sp;
wait:
	st->outer_lo = ip;
	st->outer_hi = ip + MT_COOKIE_SPAN(cookie);
}

static __always_inline int finish_call(struct pt_regs *ctx);

SEC("uprobe")
int BPF_KPROBE(alloc_enter)
{
	__u64 id = current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx), ret;
	struct call_state *st;
	int shape;

	shape = probe_shape(id >> 32, cookie);
	if (cookie & MT_COOKIE_RET)
		return shape < 0 ? 0 : finish_call(ctx);
	if (shape < 0 && (cookie & MT_COOKIE_SHARED))
		return 0;	/* another's trap: no run of the tree's probes */
	count_run(MT_PROBE_ENTRY);
	if (shape < 0)
		return 0;
	st = call_state_of_current(false);
	if (st && st->depth) {
		/* called from inside another allocator function: not a user call */
		if (shape != MT_SHAPE_FREE && !(cookie & MT_COOKIE_INNER))
			st->depth++;
		return 0;
	}
	if (shape == MT_SHAPE_FREE) {
		__u64 ptr = PT_REGS_PARM1(ctx);

		if (ptr)
			emit_alloc(MT_FREE, ptr, 0, 0);
		return 0;
	}
	if (!st)
		st = call_state_of_current(true);
	/* out of memory, or 65536 threads at once (16384 beside the shim): its event is lost */
	if (!st) {
		count_drop(MT_RING_EVENTS);
		return 0;
	}
	if (cookie & MT_COOKIE_INNER) {
		wait_for_inner(st, ctx, shape, cookie);
		return 0;
	}
	st->depth = 1;
	st->has_outer = 0;
	if (st->outer_hi) {
		/* a waiting call's own: made from its code (after the call instruction) */
		ret = return_address(ctx);
		st->has_outer = ret > st->outer_lo && ret <= st->outer_hi;
		st->outer_hi = 0;
	}
	take_frame(&st->call, ctx, shape, !st->has_outer);
	return 0;
}

static __always_inline void emit_realloc(__u64 ret, __u64 old, __u64 size, __u64 stack)
{
	if (ret)
		emit_alloc_stack(MT_REALLOC, ret, size, old, stack);
	else if (old && !size)
		emit_alloc_stack(MT_REALLOC, 0, 0, old, stack);	/* realloc(p, 0) freed p */
}

/* the block a call returned, from its return value */
static __always_inline __u64 call_result(const struct call_frame *c, __u64 ret)
{
	__u64 ptr = 0;

	if (c->shape != MT_SHAPE_POSIX_MEMALIGN)
		return ret;
	if ((int)ret == 0 && !bpf_probe_read_user(&ptr, sizeof(ptr), (void *)c->args[0]))
		return ptr;
	return 0;
}

/* the event of a call as c (the program's) made it, whose block is addr */
static __always_inline void emit_call(const struct call_frame *c, __u64 addr)
{
	switch (c->shape) {
	case MT_SHAPE_MALLOC:
		if (addr)
			emit_alloc_stack(MT_MALLOC, addr, c->args[0], 0, c->stack);
		break;
	case MT_SHAPE_CALLOC:
		if (addr)
			emit_alloc_stack(MT_CALLOC, addr, c->args[0] * c->args[1], 0, c->stack);
		break;
	case MT_SHAPE_REALLOC:
		emit_realloc(addr, c->args[0], c->args[1], c->stack);
		break;
	case MT_SHAPE_REALLOCARRAY:
		emit_realloc(addr, c->args[0], c->args[1] * c->args[2], c->stack);
		break;
	case MT_SHAPE_FREE_WRAPPER:
		if (c->args[0])
			emit_alloc_stack(MT_FREE, c->args[0], 0, 0, c->stack);
		break;
	case MT_SHAPE_ALIGNED_SIZE_A0:
		if (addr)
			emit_alloc_stack(MT_ALIGNED_ALLOC, addr, c->args[0], 0, c->stack);
		break;
	case MT_SHAPE_ALIGNED_SIZE_A1:
		if (addr)
			emit_alloc_stack(MT_ALIGNED_ALLOC, addr, c->args[1], 0, c->stack);
		break;
	case MT_SHAPE_POSIX_MEMALIGN:
		if (addr)
			emit_alloc_stack(MT_ALIGNED_ALLOC, addr, c->args[2], 0, c->stack);
		break;
	}
}

/* an allocator function returns: the outermost one's call makes its event */
static __always_inline int finish_call(struct pt_regs *ctx)
{
	struct call_state *st;
	__u64 addr;

	count_run(MT_PROBE_RETURN);
	st = call_state_of_current(false);
	if (!st || !st->depth)
		return 0;
	if (--st->depth > 0)
		return 0;
	addr = call_result(&st->call, PT_REGS_RC(ctx));
	emit_call(st->has_outer ? &st->outer : &st->call, addr);
	st->has_outer = 0;
	return 0;
}

SEC("uprobe")
int BPF_KRETPROBE(alloc_exit)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	/* a return of a call the process's own probes saw the entry of: not twice */
	if ((cookie & MT_COOKIE_SHARED) && !shared_probe_is_ours(current_pid_tgid() >> 32, cookie))
		return 0;
	return finish_call(ctx);
}

static __always_inline bool is_memory_syscall(long nr)
{
	return nr == NR_mmap || nr == NR_munmap || nr == NR_mremap || nr == NR_brk;
}

/* a syscall's argument from the pt_regs the tracepoint passes */
#define syscall_arg(regs, reg)	kernel_read(__u64, regs, offsetof(struct pt_regs, reg))

/* the file open on fd in the current process, NULL if none */
static __always_inline void *file_of_fd(__u64 fd)
{
	void *files = kernel_ptr(bpf_get_current_task(), koff.task_files);
	void *fdt = kernel_ptr(files, koff.files_fdt);

	if (!fdt || fd >= kernel_u32(fdt, koff.fdt_max_fds))
		return NULL;
	return kernel_ptr(kernel_ptr(fdt, koff.fdt_fd), fd * sizeof(void *));
}

/*
 * The code mapping an mmap just made, from its arguments and the file its
 * fd names: no mmap lock, which bpf_find_vma() only tries for (it fails
 * while any uprobe is being attached to a file the process maps: the
 * attach write-locks every such process's mm).  False: no file there.
 */
static __always_inline bool code_map_of_mmap(struct pt_regs *regs, __u64 addr, __u64 len,
					     struct mt_code_map *m)
{
	__u64 flags = syscall_arg(regs, SYSCALL_ARG4);
	struct mt_file_id id = {};
	void *f;

	m->start = addr;
	m->end = addr + ((len + 4095) & ~4095ULL);
	m->pgoff = syscall_arg(regs, SYSCALL_ARG6);
	if (flags & MAP_ANONYMOUS)
		return true;	/* no file: dev and ino 0 */
	f = file_of_fd(syscall_arg(regs, SYSCALL_ARG5));
	if (!f)
		return false;
	file_id_of(f, &id);
	m->dev = id.dev;
	m->ino = id.ino;
	return id.ino != 0;
}

static __always_inline bool is_shim_file(const struct mt_file_id *id)
{
	return shim_file.ino && id->ino == shim_file.ino && id->dev == shim_file.dev;
}

static long vma_in_shim(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct file *f = kernel_ptr(vma, koff.vma_file);
	struct mt_file_id id = {};

	if (f)
		file_id_of(f, &id);
	*(bool *)ctx = is_shim_file(&id);
	return 0;
}

/*
 * A mapping call made by the shim's own code (preload/sys.c): by where its
 * code was mapped, else by the mapping of the caller's address, which
 * bpf_find_vma() fails to look at while the mmap lock is contended.
 */
static __always_inline bool called_by_shim(struct pt_regs *regs, long nr)
{
	__u32 tgid = current_pid_tgid() >> 32;
	__u64 ip = syscall_arg(regs, SYSCALL_IP);
	struct code_range *text;
	bool shim = false;

	if (!shim_file.ino || nr == NR_brk)
		return false;
	text = bpf_map_lookup_elem(&shim_mapped, &tgid);
	if (text && text->end)
		return ip >= text->start && ip < text->end;
	bpf_find_vma(bpf_get_current_task_btf(), ip, vma_in_shim, &shim, 0);
	return shim;
}

/* the mapping by which a shim says it cannot reach memtrack, and its unmapping */
static __always_inline bool is_unreached_mark(long nr, const __u64 *args)
{
	return (nr == NR_mmap && args[1] == MT_SHIM_UNREACHED_LEN && args[2] == 0) ||
	       (nr == NR_munmap && args[1] == MT_SHIM_UNREACHED_LEN);
}

static __always_inline bool is_fork_syscall(long nr)
{
	return nr == NR_clone || nr == NR_clone3 || nr == NR_fork || nr == NR_vfork;
}

/*
 * A new process returns from its fork before running a single instruction
 * of its own: the probes of its parent (with a pid, the parent's alone)
 * are not its own yet, so it stops here until userspace has given it its.
 */
static __always_inline void hold_new_child(void)
{
	__u64 id = current_pid_tgid();
	__u32 tgid = id >> 32;

	if ((__u32)id != tgid || !(mode_bits_of(tgid) & MT_MODE_LINKED))
		return;
	stop_for_attach(0, 0, 0, STOP_ALWAYS | MT_NEW_CODE_FORK);
}

/*
 * Every syscall of every process on the machine comes here, and nowhere
 * else (no sys_enter program): the syscall's number and arguments are
 * still in the pt_regs saved at its entry.  The number is tested first.
 */
SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	long nr = syscall_arg(regs, SYSCALL_NR);
	__u64 args[3];

	if (ret == 0 && is_fork_syscall(nr))
		hold_new_child();
	if (!is_memory_syscall(nr) || !is_tracked(current_pid_tgid() >> 32) ||
	    (unsigned long)ret >= (unsigned long)-MAX_ERRNO)
		return 0;
	args[0] = syscall_arg(regs, SYSCALL_ARG1);
	args[1] = syscall_arg(regs, SYSCALL_ARG2);
	args[2] = syscall_arg(regs, SYSCALL_ARG3);
	/*
	 * Known by its length, not by called_by_shim(), which fails while the
	 * mmap lock is contended: probes, before its first allocator call
	 */
	if (is_unreached_mark(nr, args)) {
		if (nr == NR_mmap && shim_chosen(current_pid_tgid() >> 32))
			stop_for_attach(0, 0, 0, STOP_ALWAYS | MT_NEW_CODE_UNREACHED);
		return 0;
	}
	if (called_by_shim(regs, nr))
		return 0;

	switch (nr) {
	case NR_mmap:
		emit_alloc(MT_MMAP, ret, args[1], 0);
		if (args[2] & PROT_EXEC) {
			struct mt_code_map map = {};
			struct mt_file_id file;
			__u32 tgid = current_pid_tgid() >> 32;
			bool unknown, served;

			/* by its fd, else by its mapping: find_vma fails while the lock is contended */
			unknown = !code_map_of_mmap(regs, ret, args[1], &map) &&
				  bpf_find_vma(bpf_get_current_task_btf(), ret, vma_code_map,
					       &map, 0) != 0;
			file.dev = map.dev;
			file.ino = map.ino;
			if (is_shim_file(&file)) {
				struct code_range text = { map.start, map.end };

				bpf_map_update_elem(&shim_mapped, &tgid, &text, BPF_ANY);
				break;
			}
			if (!file.ino && !unknown)
				break;
			/*
			 * with call graphs, userspace records every new code
			 * mapping: one the shim serves tells it by an event (or
			 * waits in its hello), the others stop for it
			 */
			served = !unknown && (waits_in_hello() || mode_of(tgid) == MT_MODE_PRELOAD);
			if (served && call_graph != MT_CALL_GRAPH_NO)
				emit_code_map(&map);
			if (discover_allocators || call_graph != MT_CALL_GRAPH_NO)
				stop_for_attach(file.dev, file.ino, 0,
						STOP_FILE | MT_NEW_CODE_MMAP |
						(unknown || (call_graph != MT_CALL_GRAPH_NO &&
							     !served) ? STOP_ALWAYS : 0));
		}
		break;
	case NR_munmap:
		emit_alloc(MT_MUNMAP, args[0], args[1], 0);
		break;
	case NR_mremap:
		emit_alloc(MT_MUNMAP, args[0], args[1], 0);
		emit_alloc(MT_MMAP, ret, args[2], 0);
		break;
	case NR_brk:
		emit_alloc(MT_BRK, ret, 0, 0);
		break;
	}
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = task_nr(parent, true);
	__u32 ctgid = task_nr(child, true);
	struct code_range *shim_text;
	struct mt_proc_event *e;
	__u8 mode;

	if (ptgid == ctgid)
		return 0;	/* a thread */
	mode = mode_bits_of(ptgid);
	if (!mode)
		return 0;
	/*
	 * With MT_MODE_LINKED: the child stops for its own probes as it first
	 * runs, unless its shim's hello gets them (not a child that runs in
	 * its parent's memory, vfork's: that shim is the parent's)
	 */
	if ((mode & MT_MODE_SHIM_WAITS) &&
	    kernel_ptr(child, koff.task_mm) != kernel_ptr(parent, koff.task_mm))
		mode &= ~MT_MODE_LINKED;
	bpf_map_update_elem(&tracked, &ctgid, &mode, BPF_ANY);
	shim_text = bpf_map_lookup_elem(&shim_mapped, &ptgid);
	if (shim_text)
		bpf_map_update_elem(&shim_mapped, &ctgid, shim_text, BPF_ANY);
	if (call_graph == MT_CALL_GRAPH_DWARF) {
		/* the child's stack is a copy of the forking thread's: so is its end */
		__u32 ptid = task_nr(parent, false);
		__u64 *end = bpf_map_lookup_elem(&stack_ends, &ptid);

		if (end)
			bpf_map_update_elem(&stack_ends, &ctgid, end, BPF_ANY);
	}
	e = reserve_proc_event(MT_FORK, ctgid);
	if (!e)
		return 0;
	e->ppid = ptgid;
	submit_event(e);
	return 0;
}

struct auxv_scan {
	void *mm;
	bool interp;
	bool secure;
};

/* one (type, value) pair of the saved auxv; 1 ends the scan */
static long scan_auxv_pair(__u32 i, void *ctx)
{
	struct auxv_scan *s = ctx;
	__u64 pair[2];

	if (bpf_probe_read_kernel(pair, sizeof(pair),
				  (char *)s->mm + koff.mm_saved_auxv + i * sizeof(pair)) ||
	    (pair[0] == 23 && pair[1])) {	/* AT_SECURE */
		s->secure = true;
		return 1;
	}
	if (pair[0] == 0)			/* AT_NULL */
		return 1;
	if (pair[0] == 7)			/* AT_BASE: where the interpreter is */
		s->interp = pair[1] != 0;
	return 0;
}

/*
 * What ld.so will see of the new image (the auxv the kernel saved): an
 * interpreter to run, and no secure exec (which drops LD_PRELOAD).  By
 * bpf_loop, whose body the verifier checks once, not once an entry.
 */
static __always_inline bool shim_can_load(struct task_struct *p)
{
	struct auxv_scan s = { .mm = kernel_ptr(p, koff.task_mm) };

	if (!s.mm)
		return false;
	bpf_loop(28, scan_auxv_pair, &s, 0);
	return s.interp && !s.secure;
}

#define PIDTYPE_PGID	2

static __always_inline void *pgid_of(struct task_struct *p)
{
	void *sig = kernel_ptr(p, koff.task_signal);

	return sig ? kernel_ptr(sig, koff.signal_pids + PIDTYPE_PGID * sizeof(void *)) : NULL;
}

/*
 * Whether someone would see this process stop: its tracer (gdb, strace),
 * or the job-control shell that made its process group and waits for it
 * with WUNTRACED: the group's leader, and every process of a pipeline,
 * whose group is not its parent's (`ls | head`: head stopped was "[1]+
 * Stopped" in 1 of 5 runs of an interactive bash when only leaders ran on).
 */
static __always_inline bool stop_is_seen(struct task_struct *p)
{
	void *pgid;

	if (kernel_u32(p, koff.task_ptrace))
		return true;
	pgid = pgid_of(p);
	return pgid && (pgid == kernel_ptr(p, koff.task_thread_pid) ||
			pgid != pgid_of(kernel_ptr(p, koff.task_real_parent)));
}

/*
 * An executable userspace already found the shim serves, exec'd from the
 * same root, with nothing of the old image's probes to take down, runs on
 * as pending: its hello, which it waits in, settles the rest.  So does an
 * image not seen yet where a stop would be seen, from a root the shim is
 * in: its hello settles what it can (not a sanitizer runtime's wish to
 * come first, which had to be met before ld.so ran).  0: it stops.
 */
static __always_inline __s32 exec_decided(struct task_struct *p, __u32 tgid,
					  const struct mt_exe_key *key)
{
	__u8 pending = MT_MODE_PENDING;
	__s32 how = MT_EXEC_PENDING;

	__u8 bits = mode_bits_of(tgid);

	/* probes of the old image's to take down first, unless BPF is to trace the new one too */
	if (!decide_at_exec ||
	    (bits & (MT_MODE_LINKED | MT_MODE_SHIM_WAITS)) == MT_MODE_LINKED ||
	    !shim_can_load(p))
		return 0;
	if (!bpf_map_lookup_elem(&exe_ok, key)) {
		if (!stop_is_seen(p) || !bpf_map_lookup_elem(&roots_ok, &key->root))
			return 0;
		how = MT_EXEC_UNSEEN;
	}
	return bpf_map_update_elem(&tracked, &tgid, &pending, BPF_EXIST) ? 0 : how;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(process_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	__u32 tgid = task_nr(p, true);
	struct mt_proc_event *e;
	struct mt_exe_key key;
	struct mt_file_id file;
	__s32 decided;

	if (!is_tracked(tgid))
		return 0;
	/* a new image, a new stack */
	bpf_map_delete_elem(&stack_ends, &tgid);
	/* the kernel's number: in a namespace, a thread's that exec'd stays (its end, a cached stack's) */
	if (!pidns_ino)
		bpf_map_delete_elem(&stack_ends, &old_pid);
	bpf_map_delete_elem(&shim_mapped, &tgid);
	file_id_of(kernel_ptr(bprm, koff.binprm_file), &file);
	key.dev = file.dev;
	key.ino = file.ino;
	key.root = (__u64)kernel_ptr(kernel_ptr(p, koff.task_fs), koff.fs_root_dentry);
	decided = exec_decided(p, tgid, &key);
	end_shim_waits(tgid);
	e = reserve_proc_event(MT_EXEC, tgid);
	if (e) {
		bpf_probe_read_kernel_str(e->filename, sizeof(e->filename),
					  kernel_ptr(bprm, koff.binprm_filename));
		e->reason = decided;
		submit_event(e);
	}
	/* with call graphs or backends to choose, every other exec stops */
	if (!decided && (discover_allocators || call_graph != MT_CALL_GRAPH_NO || decide_at_exec))
		stop_for_attach(key.dev, key.ino, key.root,
				STOP_FILE | STOP_EXE | MT_NEW_CODE_EXEC |
				(call_graph != MT_CALL_GRAPH_NO || decide_at_exec ? STOP_ALWAYS : 0));
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(process_exit, struct task_struct *p)
{
	__u32 tgid = task_nr(p, true), tid;
	struct mt_proc_event *e;

	if (!is_tracked(tgid))
		return 0;
	/* the tid may be another thread's next */
	tid = task_nr(p, false);
	if (call_graph == MT_CALL_GRAPH_DWARF)
		bpf_map_delete_elem(&stack_ends, &tid);
	/* the exiting task is the current one */
	tid = (__u32)bpf_get_current_pid_tgid();
	bpf_map_delete_elem(&calls, &tid);
	if (kernel_u32(kernel_ptr(p, koff.task_signal), koff.signal_live) != 0)
		return 0;
	bpf_map_delete_elem(&tracked, &tgid);
	bpf_map_delete_elem(&their_stops, &tgid);
	bpf_map_delete_elem(&shim_mapped, &tgid);
	e = reserve_proc_event(MT_EXIT, tgid);
	if (!e)
		return 0;
	e->exit_code = kernel_u32(p, koff.task_exit_code);
	bpf_ringbuf_submit(e, wakeup_past(&events, events_freeze_mark));
	return 0;
}

/* marks or clears, in the process's stops by memtrack, that someone else's holds too */
static __always_inline void mark_their_stop(__u32 tgid, bool theirs)
{
	__u32 flags[] = { 0, MT_STOPPED_BY_STACKS, MT_STOPPED_FOR_ATTACH }, key;
	unsigned int i;
	__u64 *v;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		key = tgid | flags[i];
		v = bpf_map_lookup_elem(&pressure_stopped, &key);
		if (!v)
			continue;
		if (theirs)
			__sync_fetch_and_or(v, MT_STOPPED_THEIRS);
		else
			__sync_fetch_and_and(v, ~MT_STOPPED_THEIRS);
	}
}

/*
 * Stops and resumes of tracked processes by anyone: memtrack must not end a
 * stop it did not cause, so a SIGSTOP not sent by memtrack's probes (which
 * signal the process from inside it, with no siginfo) marks the process
 * stopped by others until a SIGCONT.  SIGTSTP, SIGTTIN and SIGTTOU are not
 * followed: whether they stop depends on the process's handlers.
 */
SEC("raw_tp/signal_generate")
int BPF_PROG(signal_generate, int sig, void *info, struct task_struct *task)
{
	__u32 tgid, sender = current_pid_tgid() >> 32;
	__u64 when;

	if (sig != SIGSTOP && sig != SIGCONT)
		return 0;
	tgid = task_nr(task, true);
	if (!is_tracked(tgid))
		return 0;
	if (sig == SIGCONT) {
		__u32 key = tgid | MT_STOPPED_FOR_ATTACH;
		__u64 *held;

		/*
		 * memtrack takes its key before its own SIGCONT: this one ends the
		 * hold early.  A process with links of its own then runs before
		 * they are there, unprobed (a parent that stops and continues its
		 * child); one the shim serves records on, and loses only the calls
		 * of an allocator of its own not probed yet: not counted, or every
		 * job a job-control shell continues would end a run incomplete.
		 * A hold for the resolver alone loses no call.
		 */
		held = bpf_map_lookup_elem(&pressure_stopped, &key);
		if ((mode_bits_of(tgid) & MT_MODE_LINKED) && held && !(*held & MT_STOPPED_NAMES))
			__sync_fetch_and_add(&holds_ended_early, 1);
		bpf_map_delete_elem(&their_stops, &tgid);
		mark_their_stop(tgid, false);
		return 0;
	}
	if ((unsigned long)info == SEND_SIG_PRIV && sender == tgid)
		return 0;
	when = bpf_ktime_get_ns() | (sender == tgid ? MT_THEIR_STOP_SELF : 0);
	bpf_map_update_elem(&their_stops, &tgid, &when, BPF_ANY);
	mark_their_stop(tgid, true);
	return 0;
}

/*
 * Run once by userspace in its own task (BPF_PROG_TEST_RUN) when memtrack's
 * pid namespace is not the initial one: the namespace's level and address,
 * which other tasks' pids are read with, and what the probes will say
 * memtrack's pid is.
 */
__u64 self_pid_tgid = 0;

SEC("raw_tp")
int learn_pidns(void *ctx)
{
	void *pid = kernel_ptr(bpf_get_current_task(), koff.task_thread_pid);
	__u32 level = kernel_u32(pid, koff.pid_level);
	struct bpf_pidns_info ns;

	/* the task's active namespace is memtrack's: its pid's last level */
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) ||
	    level > MAX_PID_NS_LEVEL)
		return 0;
	pidns_addr = (__u64)kernel_ptr(pid + koff.pid_numbers +
				       level * (koff.upid_ns + sizeof(void *)), koff.upid_ns);
	pidns_level = level;
	self_pid_tgid = current_pid_tgid();
	return 0;
}
