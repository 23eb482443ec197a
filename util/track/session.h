/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_TRACK_SESSION_H
#define MEMTRACK_TRACK_SESSION_H

/*
 * One run of memtrack track, from the options to the artifact.
 *
 * Events come in two ways: the preload shim's per-thread rings (shim-host.c
 * takes their hellos and rings, merge.c merges them by time) and BPF's
 * rings (poller.c drains them).  The events poller feeds both into the
 * merge, whose output goes to the encoder; call stacks go through the
 * stacks poller, the unwinder (stack-ids.c) and the resolver to the
 * artifact's trailer.  BPF's process events (fork, exec, new code, exit)
 * choose each process's backend and keep the process table.
 *
 * session.c starts and finishes the pipeline; session-procs.c follows the
 * processes (backends, holds, hellos); session-run.c runs the command or
 * waits for the processes of -p; summary.c says how it went.  Only
 * builtin-track.c reads the command line.
 */

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/memtrack.h"
#include "util/out-file.h"
#include "util/probe/backend.h"
#include "util/probe/freezer.h"
#include "util/track/rule-cache.h"
#include "util/probe/pressure.h"
#include "util/probe/proc-table.h"
#include "util/spawn.h"
#include "util/track/freeze-watch.h"
#include "util/track/poller.h"

struct mt_alloc_event;
struct shim_ring;
struct status_line;
struct live_heap;

struct track_opts {
	const char *output_dir;
	const char *stats_path;
	uint64_t ring_size[MT_RING_MAX];
	unsigned int poll_ms;
	unsigned int watermark_pct;
	unsigned int encoder_threads;
	unsigned int compression_level;
	const char *call_graph;
	unsigned int stack_copy_size;
	const char *attach_pids;
	const char *backend;
	uint64_t heap_ring_size;
	bool tolerate_drops;
	bool stop_with_root;
	bool no_freezer;
	bool no_libc_freeres;
	unsigned int detach_after;	/* seconds, 0: never */
	unsigned int shared_probes;	/* processes with links of their own to a file, 0: no end */
	bool quiet;
	bool check_bpf;
};

/* the waits of one pass over the shim's rings, for its `pressure` row */
struct heap_waits {
	struct stopped_pid *pids;
	size_t n, cap;
	uint64_t episodes;
};

struct track_session {
	const struct track_opts *opts;
	struct bpf_track *bpf;
	enum backend backend;
	bool shim_waits;		/* --backend bpf: the shim preloaded, a waiting room */
	struct shim_env shim;
	struct shim_host *host;
	struct merger *merger;
	struct heap_waits waits;
	uint64_t heap_size;		/* the most the live rings ever had: the last ring_open row */
	unsigned int refused;		/* processes --backend preload could not take */
	unsigned int corrupt;		/* processes whose ring broke the rules */
	unsigned int ringless;		/* shim threads that could not make a ring */
	unsigned int unserved;		/* shim processes the shim's socket could not serve */
	unsigned int blind;		/* static stripped processes: allocations unseen */
	unsigned int untraceable;	/* secure execs under sudo, not tracked */
	struct stop_mirror *mirror;	/* parents that stop when their child is held */
	struct freezer *freezer;	/* the tree's cgroup: back-pressure nobody sees */
	struct freeze_watch watch;	/* freezes it at filling BPF rings */
	struct pstats *stats;
	struct encoder *enc;
	struct poller events;
	struct poller stacks;
	enum mt_call_graph call_graph;
	struct symbolizer *sym;
	struct resolver *resolver;
	struct stack_ids *stack_ids;	/* the shim's stacks, and BPF's raw copies (dwarf) */
	struct rule_cache rules;	/* the shims' CFI rules, from the runs before */
	bool stacks_oom;
	struct proc_table procs;
	struct spawn child;
	bool spawned;			/* child forked, and waiting for its start */
	pid_t root_pid;
	bool root_seen;			/* BPF told of the root's exec (atomic) */
	bool unseen;			/* and never did: the run failed */
	pid_t *attach;			/* -p: the pids, NULL when we run a command */
	int nattach;
	struct run_as run_as;
	int out_dirfd;			/* -o (its directory for a file), opened once */
	int artifact_fd;
	char artifact_path[PATH_MAX];
	char artifact_name[NAME_MAX + 1];	/* in out_dirfd */
	bool via_shell;			/* "<command>" runs through /bin/sh -c */
	const char *program;		/* the command's argv[0]; NULL with -p */
	int not_started;		/* the command's exec failed: why (errno) */
	const char *libc_path;
	char *command;
	int guardian_fd;
	int status;			/* the root's wait status */
	uint64_t start_ns, end_ns;
	uint64_t event_drops, stack_drops;
	uint64_t probe_runs[MT_PROBE_MAX];
	uint64_t held_exec, held_mmap;	/* stops for new code: at exec, at a code mapping */
	uint64_t unheld_exec;		/* execs BPF gave the shim, unheld */
	uint64_t code_maps;		/* code mappings told by event, unheld */
	int64_t cfi_rules;		/* -v: in the shims' shared table at the end, -1: none */
	uint64_t event_lost;		/* in rings dropped as corrupt */
	unsigned int running;		/* tracked processes alive when memtrack stopped */
	bool detached;			/* it stopped tracking a tree that runs on */
	pthread_t sampler;
	atomic_bool sampling;
	struct status_line *status_line;	/* on a terminal, while the command runs */
	struct live_heap *live;		/* for the status line, NULL without one */
	char **warned;			/* "exe\treason" of the processes sent to BPF */
	size_t nwarned, warned_cap;
};

/* the BPF rings by enum mt_ring_id, as --ring-size and the stats name them */
extern const char *const track_ring_names[MT_RING_MAX];

/*
 * Each step returns 0, or -1 after saying what failed (error()); then
 * track_session__exit() undoes what was done, the command included.
 */
void track_session__init(struct track_session *s, const struct track_opts *opts);
/*
 * stats file, output directory, backend, freezer, the shim's socket, the
 * command forked (unless -p), BPF, guardian
 */
int track_session__prepare(struct track_session *s, const char **argv);
/* the command ready (waiting for its start) or the processes of -p found; the artifact */
int track_session__launch(struct track_session *s);
/* the pipeline running: pollers, merge, unwinder, resolver, encoder */
int track_session__start(struct track_session *s);
/* the command, or -p's processes, until the tree is gone or memtrack is interrupted */
int track_session__run(struct track_session *s);
/* drains, releases, writes the trailer, prints the summary line: 0 or -errno */
int track_session__finish(struct track_session *s);
/* memtrack's exit status: the command's, or why the artifact is not to be trusted */
int track_session__exit_status(const struct track_session *s, int err);
void track_session__exit(struct track_session *s);
/* --check-bpf: load and attach, say so, unload */
int track_session__check_bpf(struct track_session *s);

/* between the session's files */
int session__load_bpf(struct track_session *s);
int session__on_event_record(void *ctx, const void *data, uint32_t len);
int session__on_stack_record(void *ctx, const void *data, uint32_t len);
bool session__shim_tracked(void *ctx, pid_t pid);
void session__on_shim_lost(void *ctx, pid_t pid, const char *why);
void *session__on_shim_hello(void *ctx, pid_t pid, uint32_t flags);
bool session__on_shim_ring(void *ctx, void *proc, struct shim_ring *r);
void session__on_shim_closed(void *ctx, void *proc);
void session__on_shim_no_ring(void *ctx, pid_t pid, uint32_t tid, int err);
void session__on_shim_warn(void *ctx, pid_t pid, const char *text);
void session__on_shim_unserved(void *ctx, int32_t pid, uint32_t n);
void session__on_merged_event(void *ctx, const struct mt_alloc_event *e);
uint64_t session__on_shim_stack(void *ctx, int32_t pid, const uint64_t *ips, uint32_t nr);
void session__on_corrupt_ring(void *ctx, int32_t pid, int32_t tid, const char *why);
void session__on_producer_waited(void *ctx, int32_t pid, uint64_t since);
int session__attach_to_tree(struct track_session *s);
int session__check_attach_targets(const struct track_session *s);
void session__block_forwarded_signals(int how);
void session__print_summary(struct track_session *s);

#endif
