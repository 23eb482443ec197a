/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_TRACK_H
#define MEMTRACK_BPF_TRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/probe/allocators.h"
#include "bpf/memtrack.h"

/* The BPF side of `memtrack track`: load, attach, and the maps it reads. */
struct bpf_track;

struct bpf_track_opts {
	uint64_t ring_size[MT_RING_MAX];
	unsigned int watermark_pct;	/* 0: no back-pressure */
	uint64_t freeze_mark[MT_RING_MAX];	/* bytes: wake the poller to freeze; 0: none */
	enum mt_call_graph call_graph;
	unsigned int stack_copy_size;	/* dwarf: bytes of user stack per allocation */
	bool decide_at_exec;		/* every exec stops, for a choice of backend */
	/*
	 * After this many processes got links of their own to a file's
	 * allocator functions (0: never), one link without a pid serves the
	 * BPF processes that map it from then on: no link to make, no hold at
	 * fork, but a trap in every process on the machine mapping it.
	 */
	unsigned int share_after;
	bool quiet;			/* -q: what memtrack chose is said with -v only */
	/*
	 * BPF traces every process (--backend bpf, -p): the first ones get
	 * links as they start (bpf_grace_warmer.h), and thousands may be
	 * BPF's at once; else the shim serves most of them
	 */
	bool bpf_traces_all;
	const char *program;		/* the command's (argv[0]); NULL with -p */
	struct mt_file_id shim_file;	/* the preload shim, never probed */
	uint64_t pidns_dev, pidns_ino;	/* memtrack's pid namespace; 0: the initial one */
};

/* what a process maps, as far as choosing its backend goes */
struct code_scan {
	bool allocator;		/* allocator functions */
	bool lib_allocator;	/* in a library (ld.so maps the shim before them) */
	bool foreign;		/* some whose calls the shim cannot see (probed beside it) */
	bool shim;		/* the preload shim */
	bool exe_found;		/* its executable's file among its mappings */
	bool exe_static;	/* which has no ELF interpreter */
	bool exe_sanitizer;	/* which needs a sanitizer runtime first */
	struct mt_file_id exe_id;
	const char *exe_own;	/* a function the shim interposes that the executable
				 * defines, and that allocates by itself (its own malloc) */
	const char *alias_used;	/* a name some object calls, of a function the shim
				 * interposes under another name (tcmalloc's tc_malloc) */
	char guest[256];	/* allocator code a static program maps itself, not probed */
	struct alloc_set imports, aliases;
};

/* opens, loads and attaches the tracepoints; 0 or -errno */
int bpf_track__open(struct bpf_track **out, const struct bpf_track_opts *opts);
/*
 * The allocator probes' programs may still load when bpf_track__open()
 * returns (none of the command's processes can need them yet): 0 once
 * they are in, or why they cannot be; 0 at once where they load as the
 * command starts.
 */
int bpf_track__wait_loaded(struct bpf_track *t);
/* the command is let go: probes left to load after its start load now */
void bpf_track__command_starts(struct bpf_track *t);
/* finds the allocator functions of the libc this process uses */
int bpf_track__attach_libc(struct bpf_track *t, const char **path);
/* puts the probes into memtrack itself and takes them out: does probing work here */
int bpf_track__check_probes(struct bpf_track *t);
/* which allocator probes a process gets */
enum link_want {
	LINK_NONE,
	LINK_FOREIGN,	/* those of allocators the shim does not interpose */
	LINK_ALL,	/* a process traced by BPF */
};

/*
 * Looks at every executable mapping of pid (a file's allocator functions
 * are found once) and puts the probes want asks for into pid, and into no
 * other process.  With scan, says what pid maps.
 */
int bpf_track__inspect_process(struct bpf_track *t, pid_t pid, enum link_want want,
			       struct code_scan *scan);
struct proc_exec_maps;
/* inspect_process() of mappings read already (proc_exec_maps__read()) */
int bpf_track__inspect_maps(struct bpf_track *t, pid_t pid, const struct proc_exec_maps *maps,
			    enum link_want want, struct code_scan *scan);
/*
 * Probes path, a file inspected already (memtrack's libc), in pid, which
 * BPF traces, before pid maps it (at its exec): its mapping then needs no
 * hold.  The file is path in pid's root, when it is the same file.
 */
int bpf_track__prelink(struct bpf_track *t, pid_t pid, const char *path);
/* pid's probes go (it exited, or its new image takes the shim) */
void bpf_track__unlink_process(struct bpf_track *t, pid_t pid);
/*
 * How many of the frames ips[] (innermost first) of a stack the shim took
 * in pid are in functions that only wrap the shim's (an executable's own
 * operator new calling malloc): its call is the program's, from the
 * wrapper's caller, as BPF sees it at the wrapper's entry.  The wrappers
 * are those of the code pid was inspected with; a fork's come from its
 * parent, and go at exec.
 */
unsigned int bpf_track__wrapper_frames(struct bpf_track *t, pid_t pid, const uint64_t *ips,
				       unsigned int nr);
void bpf_track__fork_wrappers(struct bpf_track *t, pid_t parent, pid_t child);
/* child, a fork of parent, is one more process the links of parent's files are made for */
void bpf_track__count_fork(struct bpf_track *t, pid_t parent, pid_t child);
void bpf_track__forget_wrappers(struct bpf_track *t, pid_t pid);
/* the next execs of that executable from that root take the shim unheld */
int bpf_track__exe_ok(struct bpf_track *t, const struct mt_exe_key *key);
/* the shim is at its path from that root (a dentry, as BPF saw it) */
int bpf_track__root_ok(struct bpf_track *t, uint64_t root);
/* resumes pid, stopped by BPF until its new code was inspected */
int bpf_track__resume_attached(struct bpf_track *t, pid_t pid);
/* files whose allocator functions could not be probed (each was warned of) */
unsigned int bpf_track__probe_failures(struct bpf_track *t);
/* tracks pid (mode != 0) as mode says */
int bpf_track__set_mode(struct bpf_track *t, pid_t pid, enum mt_mode mode);
/* pid and what it forks from now on are not tracked */
void bpf_track__untrack(struct bpf_track *t, pid_t pid);
/* how many processes are tracked (BPF forgets each at its exit) */
unsigned int bpf_track__tracked(struct bpf_track *t);
/* pid's mode, 0 when not tracked */
int bpf_track__mode(struct bpf_track *t, pid_t pid);
/*
 * A BPF process whose inert shim sees every call its probes see: its fork
 * children are not held for their probes, which their hello gets them
 * (MT_MODE_SHIM_WAITS)
 */
void bpf_track__let_shim_wait(struct bpf_track *t, pid_t pid);
bool bpf_track__shim_waits(struct bpf_track *t, pid_t pid);
/* dwarf: stack copies of thread tid need go no higher than end */
int bpf_track__set_stack_end(struct bpf_track *t, uint32_t tid, uint64_t end);
int bpf_track__ring_fd(struct bpf_track *t, enum mt_ring_id ring);
int bpf_track__pressure_fd(struct bpf_track *t);
/* the links of processes gone are released by the guardian from now on */
void bpf_track__use_guardian(struct bpf_track *t, int guardian_fd);
/* a counter BPF bumps at every stop, read through the mmapped .bss */
const volatile uint64_t *bpf_track__pressure_stops(struct bpf_track *t);
/* holds for new code that another's SIGCONT ended before the probes were there */
uint64_t bpf_track__holds_ended_early(struct bpf_track *t);
/*
 * When someone other than memtrack last stopped the tracked process pid
 * (SIGSTOP), MT_THEIR_STOP_SELF set if it stopped itself; 0 if nobody did
 * since it last continued.
 */
uint64_t bpf_track__their_stop(struct bpf_track *t, pid_t pid);
uint64_t bpf_track__drops(struct bpf_track *t, enum mt_ring_id ring);
/* how many times the allocator probes ran, in any process (the tracked ones only) */
uint64_t bpf_track__probe_runs(struct bpf_track *t, enum mt_probe_id probe);
/* ends the run: the probes produce nothing more, though still attached */
void bpf_track__stop_tracing(struct bpf_track *t);
/*
 * Detaches every probe: the uprobe links go to the guardian, when
 * guardian_fd >= 0, which closes them after memtrack's exit (their release
 * is slow); the maps stay readable.  Call it after the pollers stopped:
 * they may add links.
 */
void bpf_track__detach(struct bpf_track *t, int guardian_fd);
void bpf_track__close(struct bpf_track *t);

#endif
