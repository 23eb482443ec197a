// SPDX-License-Identifier: GPL-2.0
/*
 * A track session's pipeline, started before the command runs and
 * finished after its tree is gone: see session.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/version.h"
#include "util/artifact/artifact-format.h"
#include "util/out-file.h"
#include "util/probe/backend.h"
#include "util/probe/bpf_track.h"
#include "util/probe/freezer.h"
#include "util/probe/kernel-check.h"
#include "util/probe/pressure.h"
#include "util/probe/proc-table.h"
#include "util/probe/stop-mirror.h"
#include "util/symbol/dwarf-cache.h"
#include "util/symbol/symbolize.h"
#include "util/track/encoder.h"
#include "util/track/freeze-watch.h"
#include "util/track/live-heap.h"
#include "util/track/merge.h"
#include "util/track/pipeline-stats.h"
#include "util/track/poller.h"
#include "util/track/resolver.h"
#include "util/track/session.h"
#include "util/track/shim-host.h"
#include "util/track/stack-ids.h"
#include "util/track/status-line.h"
#include "util/usage.h"
#include "util/util.h"

#ifndef MEMTRACK_LIBDIR
#define MEMTRACK_LIBDIR		"/usr/local/lib/memtrack"
#endif
#define WINDOW_MAX_AGE_NS	(100 * NSEC_PER_MSEC)
#define BACKLOG_PERIOD_NS	(10 * NSEC_PER_MSEC)
#define PIPELINE_NICE		-10
#define STACK_END_SLACK		64	/* bytes copied above a thread's outermost frame */
#define EARLY_TRAILER_LEVEL	3	/* zstd levels compressed as the run goes (resolver.h) */

const char *const track_ring_names[MT_RING_MAX] = {
	[MT_RING_EVENTS] = "events",
	[MT_RING_STACKS] = "stacks",
};

/* -o <file>.msgpack names the artifact; any other -o is its directory */
static bool output_is_file(const struct track_session *s)
{
	const char *o = s->opts->output_dir;
	size_t len = strlen(o), ext = strlen(ARTIFACT_FILE_EXT);

	return len > ext && !strcmp(o + len - ext, ARTIFACT_FILE_EXT) && o[len - ext - 1] != '/';
}

/* as the invoking user under sudo: see util/out-file.h */
static int prepare_output_dir(struct track_session *s)
{
	char why[OUT_WHY_MAX], *dir;
	const char *slash;

	if (!output_is_file(s)) {
		s->out_dirfd = out_dir__open(&s->run_as, s->opts->output_dir, true, why);
		if (s->out_dirfd < 0)
			return fatal("cannot create output directory '%s': %s",
				     s->opts->output_dir, why);
		return 0;
	}
	slash = strrchr(s->opts->output_dir, '/');
	if (strlen(slash ? slash + 1 : s->opts->output_dir) >= sizeof(s->artifact_name))
		return fatal("the artifact's name is too long: '%s'", s->opts->output_dir);
	strcpy(s->artifact_name, slash ? slash + 1 : s->opts->output_dir);
	dir = slash ? strndup(s->opts->output_dir, slash - s->opts->output_dir + 1) : NULL;
	s->out_dirfd = out_dir__open(&s->run_as, dir ? dir : ".", true, why);
	if (s->out_dirfd < 0)
		fatal("cannot create output directory '%s': %s", dir ? dir : ".", why);
	free(dir);
	return s->out_dirfd < 0 ? -1 : 0;
}

static int create_stats_file(struct track_session *s)
{
	char why[OUT_WHY_MAX];
	int fd;

	fd = out_file__create_path(&s->run_as, s->opts->stats_path, OUT_REPLACE, why);
	if (fd < 0)
		return fatal("failed to create memtrack stats file '%s': %s",
			     s->opts->stats_path, why);
	s->stats = pstats__create(fd, s->opts->stats_path);
	if (!s->stats)
		return fatal("out of memory");
	return 0;
}

#define PROC_PID_INIT_INO	0xEFFFFFFCU	/* the initial pid namespace's inode */

/*
 * memtrack's pid namespace, for BPF to report pids as memtrack sees them
 * (bo's are 0 in the initial one); and /proc must be that namespace's:
 * another's (unshare --pid without --mount-proc) names other processes
 * by the pids memtrack has.
 */
static int read_pid_namespace(struct bpf_track_opts *bo)
{
	char self[32];
	struct stat st;
	ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);

	if (n <= 0)
		return fatal("cannot read /proc/self (%s): memtrack track needs /proc, mounted "
			     "for its pid namespace", n < 0 ? strerror(errno) : "empty");
	self[n] = 0;
	if (atoi(self) != getpid())
		return fatal("/proc is another pid namespace's (memtrack is pid %d here, %s "
			     "there): mount the namespace's own (unshare --pid --fork "
			     "--mount-proc; a container has it)", getpid(), self);
	if (stat("/proc/self/ns/pid", &st))
		return fatal_errno("cannot read memtrack's pid namespace (/proc/self/ns/pid)");
	if (st.st_ino == PROC_PID_INIT_INO)
		return 0;
	/* as the kernel encodes a dev_t */
	bo->pidns_dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	bo->pidns_ino = st.st_ino;
	return 0;
}

/* the fill at which the tree is frozen: two thirds of the way to the SIGSTOP watermark */
static uint64_t freeze_mark(const struct track_session *s, enum mt_ring_id ring)
{
	return s->freezer ? s->opts->ring_size[ring] * s->opts->watermark_pct * 2 / 300 : 0;
}

/*
 * A command's tree gets a cgroup whose freezer pauses it at a filling BPF
 * ring: a process frozen there is reported to no one, where a SIGSTOP shows
 * in its parent's wait().  Processes of -p stay in their own cgroups.
 */
static struct freezer *exit_freezer;

/* an exit on the way: the tree thawed, and its cgroup gone or left empty for the next run */
static void abandon_freezer(void)
{
	freezer__abandon(exit_freezer);
}

/* a cgroup for the tree, so that back-pressure freezes it rather than stopping it with signals */
static void setup_freezer(struct track_session *s)
{
	char why[256];

	if (s->attach || s->opts->no_freezer)
		return;
	s->freezer = freezer__new(why, sizeof(why));
	if (!s->freezer) {
		pr_debug("no cgroup freezer (%s): back-pressure on BPF rings stops processes "
			 "with SIGSTOP, which their parents can see\n", why);
		return;
	}
	exit_freezer = s->freezer;
	atexit(abandon_freezer);
}

static void delete_freezer(struct track_session *s)
{
	exit_freezer = NULL;
	freezer__delete(s->freezer);
	s->freezer = NULL;
}

static void join_freezer(struct track_session *s)
{
	int err;

	if (!s->freezer)
		return;
	err = s->child.in_cgroup ? 0 : freezer__add(s->freezer, s->child.pid);
	if (!err)
		err = pressure__hand_over_freezer(s->guardian_fd, freezer__state_fd(s->freezer),
						  freezer__thaw_word(s->freezer));
	if (err) {
		pr_debug("cannot use the cgroup freezer %s: %s\n", freezer__describe(s->freezer),
			 strerror(-err));
		delete_freezer(s);
		return;
	}
	pr_debug("back-pressure freezes %s, where the command %s\n", freezer__describe(s->freezer),
		 s->child.in_cgroup ? "starts (clone3)" : "was moved");
}

int session__load_bpf(struct track_session *s)
{
	struct bpf_track_opts bo = {
		.ring_size = { s->opts->ring_size[MT_RING_EVENTS], s->opts->ring_size[MT_RING_STACKS] },
		.watermark_pct = s->opts->watermark_pct,
		.freeze_mark = { freeze_mark(s, MT_RING_EVENTS), freeze_mark(s, MT_RING_STACKS) },
		.call_graph = s->call_graph,
		.stack_copy_size = s->opts->stack_copy_size,
		.decide_at_exec = s->backend != BACKEND_BPF || s->shim_waits,
		/* the shim's processes would trap in shared probes for nothing */
		.share_after = s->backend == BACKEND_BPF || s->attach ? s->opts->shared_probes : 0,
		.quiet = s->opts->quiet,
		.bpf_traces_all = s->backend == BACKEND_BPF || s->attach,
		.program = s->program,
		/* as BPF reads a superblock's dev_t */
		.shim_file = { ((uint64_t)major(s->shim.dev) << 20) | minor(s->shim.dev), s->shim.ino },
	};
	char lacks[1024];
	int err = read_pid_namespace(&bo);

	if (err)
		return err;
	/* after the stats file and the output directory, as a failed load would be */
	if (kernel_check__privileges(lacks, sizeof(lacks)))
		return fatal("cannot load BPF programs: memtrack track needs root, or CAP_BPF and "
			     "CAP_PERFMON; it lacks %s", lacks);
	err = bpf_track__open(&s->bpf, &bo);
	if (err == -EOPNOTSUPP)
		return fatal("memtrack was built without BPF (BUILD_BPF_SKEL=0); "
			     "track cannot run");
	if (err == -ESRCH)
		return fatal("BPF does not see memtrack's pid namespace (inode %llu) as its own: "
			     "pids would not match; run memtrack in the namespace it tracks in "
			     "(or with --pid=host)", (unsigned long long)bo.pidns_ino);
	if (err == -EPERM || err == -EACCES)
		return fatal("cannot load BPF programs: %s; memtrack track needs root "
			     "(or CAP_BPF and CAP_PERFMON)", strerror(-err));
	if (err)
		return fatal("cannot load BPF programs: %s (run with -v for libbpf's log)",
			     strerror(-err));
	err = bpf_track__attach_libc(s->bpf, &s->libc_path);
	if (err)
		return fatal("cannot probe the allocator functions of libc%s%s: %s%s",
			     s->libc_path ? " " : "", s->libc_path ? s->libc_path : "",
			     strerror(-err), err == -EINVAL ? " (another tool's uprobe there "
			     "with a reference counter? see dmesg)" : "");
	return 0;
}

/* the shim next to memtrack (or installed); without it, BPF traces everything */
static int prepare_backend(struct track_session *s)
{
	if (s->attach) {
		s->backend = BACKEND_BPF;	/* a running process cannot take the shim */
		return 0;
	}
	/*
	 * With BPF for every process, the shim is preloaded too, inert: a
	 * process waits in its hello for its probes, where a stop would be
	 * seen by its parent; without the shim, every process stops instead.
	 */
	if (s->backend == BACKEND_BPF) {
		s->shim_waits = !backend__find_shim(&s->shim, MEMTRACK_LIBDIR);
		return 0;
	}
	if (!backend__find_shim(&s->shim, MEMTRACK_LIBDIR))
		return 0;
	if (s->backend == BACKEND_PRELOAD)
		return fatal("cannot find libmemtrack-preload.so next to memtrack or in %s",
			     MEMTRACK_LIBDIR);
	warning("cannot find libmemtrack-preload.so next to memtrack or in %s: "
		"every process is traced with BPF", MEMTRACK_LIBDIR);
	s->backend = BACKEND_BPF;
	return 0;
}

/* a new file: an artifact never replaces one (pids come round again) */
/*
 * A new file in the output directory: an artifact never replaces one
 * (pids come round again); one the user named with -o replaces the last
 * run's, as perf record -o does.
 */
static int open_artifact(struct track_session *s)
{
	enum out_mode mode = s->artifact_name[0] ? OUT_REPLACE : OUT_NEW;
	char why[OUT_WHY_MAX];

	if (s->artifact_name[0])
		snprintf(s->artifact_path, sizeof(s->artifact_path), "%s", s->opts->output_dir);
	else {
		snprintf(s->artifact_name, sizeof(s->artifact_name), "%d%s", s->root_pid,
			 ARTIFACT_DEFAULT_SUFFIX);
		snprintf(s->artifact_path, sizeof(s->artifact_path), "%s/%s",
			 s->opts->output_dir, s->artifact_name);
	}
	s->artifact_fd = out_file__create(&s->run_as, s->out_dirfd, s->artifact_name, mode, why);
	if (s->artifact_fd < 0)
		return fatal("cannot create artifact '%s': %s", s->artifact_path, why);
	return 0;
}

/* a command that never ran leaves no artifact: there is nothing of it to report */
static void remove_artifact(struct track_session *s)
{
	if (unlinkat(s->out_dirfd, s->artifact_name, 0))
		warning("cannot remove artifact '%s': %s", s->artifact_path, strerror(errno));
}

static int unwind_rule(void *ctx, int32_t pid, uint64_t ip, bool ret_addr,
		       struct unwind_rule *rule)
{
	return symbolizer__unwind_rule(ctx, pid, ip, ret_addr, rule);
}

/* the stacks poller's: BPF copies no more of tid's stack than up to its outermost frame */
static void learn_stack_end(void *ctx, uint32_t tid, uint64_t end)
{
	bpf_track__set_stack_end(ctx, tid, end + STACK_END_SLACK);
}

static uint64_t take_stack_id(void *arg, uint64_t seq)
{
	return stack_ids__take(arg, seq);
}

/* the shim's rings as one ring `heap` in the stats (memtrack-stats(1), FILE FORMAT) */
static void write_heap_rows(struct track_session *s, const struct ring_tick *k,
			    const struct merge_stats *after)
{
	struct ring_tick row = *k;
	struct heap_waits *w = &s->waits;

	if (w->n) {
		w->episodes++;
		pstats__pressure(s->stats, "heap", now_ns(), w->pids, w->n, false);
		w->n = 0;
	}
	if (!s->stats)
		return;
	/*
	 * The rings come and go with threads: the size said is the most there
	 * ever was, so that a row's fill is against a size the rows all had.
	 */
	if (after->size > s->heap_size) {
		s->heap_size = after->size;
		pstats__ring_open(s->stats, "heap", after->size, after->size);
	}
	row.t1 = now_ns();
	row.prod1 = after->prod;
	row.cons1 = after->cons;
	if (row.prod1 != row.prod0 || row.cons1 != row.cons0)
		pstats__ring_tick(s->stats, &row);
}

/* after each drain of the BPF ring: merge what is ready into the encoder */
static void on_events_tick(void *ctx)
{
	struct track_session *s = ctx;
	struct merge_stats before, after;
	struct ring_tick k = { .ring = "heap" };

	merger__set_bpf_bound(s->merger, s->events.drained_at);
	merger__stats(s->merger, &before);
	k.t0 = now_ns();
	k.prod0 = before.prod;
	k.cons0 = before.cons;
	merger__pass(s->merger, false);
	merger__stats(s->merger, &after);
	k.peak = before.prod - before.cons > after.prod - after.cons ?
		 before.prod - before.cons : after.prod - after.cons;
	write_heap_rows(s, &k, &after);
	encoder__flush_older(s->enc, WINDOW_MAX_AGE_NS);
	if (stop_mirror__tick(s->mirror, now_ns()))
		pr_debug("resumed a parent that stopped with its held child\n");
}

static void on_events_fd(void *ctx, int fd, uint32_t events)
{
	struct track_session *s = ctx;

	shim_host__handle(s->host, fd, events);
}

/* the shims kick a poller that sleeps, when a ring fills */
static bool events_may_sleep(void *ctx)
{
	struct track_session *s = ctx;

	shim_host__set_asleep(s->host, true);
	if (!merger__busy(s->merger))
		return true;
	shim_host__set_asleep(s->host, false);
	return false;
}

static void events_woke(void *ctx)
{
	struct track_session *s = ctx;

	shim_host__set_asleep(s->host, false);
}

static void on_window(const struct encoder_window_stats *w, void *arg)
{
	pstats__encode(arg, w);
}

/* the figures of the live status line, read from its thread */
static void status_figures(struct status_figures *f, void *arg)
{
	struct track_session *s = arg;

	f->events = encoder__events_in(s->enc);
	f->live_bytes = s->live ? live_heap__bytes(s->live) : 0;
	f->processes = __atomic_load_n(&s->procs.count, __ATOMIC_RELAXED);
	f->episodes = __atomic_load_n(&s->events.episodes, __ATOMIC_RELAXED) +
		      __atomic_load_n(&s->stacks.episodes, __ATOMIC_RELAXED) +
		      __atomic_load_n(&s->waits.episodes, __ATOMIC_RELAXED) +
		      atomic_load(&s->watch.episodes);
}

/* a `backlog` row every 10 ms: what the pollers sent, what the encoder took */
static void *backlog_sampler(void *arg)
{
	struct track_session *s = arg;
	struct timespec ts = { .tv_nsec = BACKLOG_PERIOD_NS };

	name_thread("sample");
	while (atomic_load(&s->sampling)) {
		pstats__backlog(s->stats, encoder__events_in(s->enc),
				encoder__events_out(s->enc));
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void start_backlog_sampler(struct track_session *s)
{
	if (!s->stats)
		return;
	atomic_store(&s->sampling, true);
	if (pthread_create(&s->sampler, NULL, backlog_sampler, s)) {
		atomic_store(&s->sampling, false);
		warning("cannot start the backlog sampler: no backlog rows");
	}
}

static void stop_backlog_sampler(struct track_session *s)
{
	if (!atomic_exchange(&s->sampling, false))
		return;
	pthread_join(s->sampler, NULL);
}

/* a parent may have stopped itself to mirror a child that back-pressure stopped */
static void on_pressure_release(void *ctx, const struct stopped_pid *pids, int n)
{
	struct track_session *s = ctx;
	uint64_t now = now_ns();
	int i;

	for (i = 0; i < n; i++)
		stop_mirror__resumed(s->mirror, pids[i].pid, pids[i].stopped_at, now);
}

static int start_freeze_watch(struct track_session *s)
{
	int err;

	if (!s->freezer)
		return 0;
	s->watch.freezer = s->freezer;
	s->watch.stats = s->stats;
	freeze_watch__add(&s->watch, &s->events.ring, freeze_mark(s, MT_RING_EVENTS));
	if (s->resolver)
		freeze_watch__add(&s->watch, &s->stacks.ring, freeze_mark(s, MT_RING_STACKS));
	err = freeze_watch__start(&s->watch);
	if (err)
		return fatal("cannot start the freezer's watch: %s", strerror(-err));
	return 0;
}

static int start_poller(struct track_session *s, struct poller *p, enum mt_ring_id ring,
			ring_record_fn *on_record, void (*on_tick)(void *ctx),
			uint32_t pressure_flag)
{
	int err;

	p->interval_ms = s->opts->poll_ms;
	p->pressure_fd = bpf_track__pressure_fd(s->bpf);
	p->pressure_flag = pressure_flag;
	p->pressure_stops = bpf_track__pressure_stops(s->bpf);
	p->watermark = s->opts->ring_size[ring] * s->opts->watermark_pct / 100;
	p->stats = s->stats;
	p->on_record = on_record;
	p->on_tick = on_tick;
	p->on_release = on_pressure_release;
	p->ctx = s;
	err = ring__init(&p->ring, track_ring_names[ring], bpf_track__ring_fd(s->bpf, ring),
			 s->opts->ring_size[ring]);
	return err ? err : poller__start(p);
}

/* for the stop mirror: when pid last stopped itself */
static uint64_t self_stop_of(void *ctx, pid_t pid)
{
	struct track_session *s = ctx;

	return bpf_track__their_stop(s->bpf, pid);
}

/*
 * The preload shim's end: the socket its processes connect to, polled by
 * the events poller, and the merge of their rings with BPF's events.
 * Before the command starts: its environment names the socket.
 */
static int start_shim_host(struct track_session *s)
{
	struct shim_host_opts ho = {
		.ring_size = s->opts->heap_ring_size,
		.call_graph = s->call_graph,
		.flags = s->opts->no_libc_freeres ? 0 : SHIM_CTL_FREERES,
	};
	struct shim_host_ops hops = {
		.tracked = session__shim_tracked,
		.lost = session__on_shim_lost,
		.decide = session__on_shim_hello,
		.ring = session__on_shim_ring,
		.closed = session__on_shim_closed,
		.no_ring = session__on_shim_no_ring,
		.warn = session__on_shim_warn,
		.ctx = s,
	};
	struct merge_ops mops = {
		.emit = session__on_merged_event,
		.stack = session__on_shim_stack,
		.corrupt = session__on_corrupt_ring,
		.waited = session__on_producer_waited,
		.unserved = session__on_shim_unserved,
		.ctx = s,
	};
	int err;

	s->merger = merger__new(&mops);
	s->mirror = stop_mirror__new(&(struct stop_mirror_ops){ .self_stop = self_stop_of }, s);
	if (!s->merger || !s->mirror)
		return fatal("cannot start the merger: out of memory");
	if (s->backend == BACKEND_BPF && !s->shim_waits)
		return 0;
	err = shim_host__new(&s->host, &ho, &hops);
	if (err)
		return fatal("cannot create the preload shim's socket: %s", strerror(-err));
	s->shim.name_var = shim_host__env(s->host);
	s->child.preload = s->shim.path;
	s->child.preload_var = s->shim.name_var;
	s->events.on_fd = on_events_fd;
	s->events.may_sleep = events_may_sleep;
	s->events.woke = events_woke;
	err = poller__init(&s->events);
	if (!err)
		err = shim_host__watch(s->host, s->events.epoll_fd);
	if (err)
		return fatal("cannot poll the preload shim's socket: %s", strerror(-err));
	return 0;
}

/*
 * Under sudo, a MEMTRACK_CACHE_DIR of the environment is the user's word:
 * opened (and made) as the user, as -o is, so root never writes where the
 * user could not; the user's own, not writable by others.  Root's files in
 * it, read back only if root's (dwarf-cache.c), are the user's artifacts'
 * business alone.
 */
static int open_user_cache_dir(struct track_session *s, const char *path, char *why, size_t len)
{
	char err[OUT_WHY_MAX];
	struct stat st;
	int fd = out_dir__open(&s->run_as, path, true, err);

	if (fd < 0) {
		snprintf(why, len, "%s", err);
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != s->run_as.uid || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len, "%s is not uid %u's alone", path, (unsigned int)s->run_as.uid);
		close(fd);
		return -1;
	}
	return fd;
}

static int open_cache_dir(struct track_session *s, char *why, size_t len)
{
	const char *path = getenv(DWARF_CACHE_ENV);

	if (s->run_as.set && path && *path)
		return open_user_cache_dir(s, path, why, len);
	return dwarf_cache__open_dir(why, len);
}

/* the symbolizer, the resolver thread, and with dwarf the unwinding */
static int start_stack_stages(struct track_session *s)
{
	char why[256];
	int cache;

	s->sym = symbolizer__new();
	if (s->sym) {
		cache = open_cache_dir(s, why, sizeof(why));
		if (cache < 0)
			pr_debug("no cache of DWARF answers: %s\n", why);
		rule_cache__start(&s->rules, cache, s->run_as.set ? s->run_as.uid : getuid(),
				  shim_host__rules_fd(s->host), verbose > 0);
		symbolizer__set_cache_dir(s->sym, cache);
		s->resolver = resolver__new(s->sym, s->stats);
	}
	if (!s->resolver)
		return fatal("cannot start the resolver: out of memory");
	/* the shim's stacks get their ids here, with fp too */
	s->stack_ids = stack_ids__new(unwind_rule, s->sym, s->resolver);
	if (!s->stack_ids)
		return fatal("cannot start the unwinder: out of memory");
	stack_ids__set_end_fn(s->stack_ids, learn_stack_end, s->bpf);
	return 0;
}

/* the resolver's side records go into the artifact between the windows */
static void write_side_records(void *ctx, resolver_pack_fn *pack, void *pack_arg)
{
	struct track_session *s = ctx;

	encoder__add_side(s->enc, pack, pack_arg);	/* a write error is said at the end */
}

static int start_pipeline(struct track_session *s)
{
	struct encoder_opts eo = {
		.fd = s->artifact_fd,
		.threads = s->opts->encoder_threads,
		.level = s->opts->compression_level,
		.on_window = on_window,
		.on_window_arg = s->stats,
	};
	int err;

	if (s->call_graph != MT_CALL_GRAPH_NO && start_stack_stages(s))
		return -1;
	if (s->stack_ids && s->call_graph == MT_CALL_GRAPH_DWARF) {
		eo.stack_id = take_stack_id;
		eo.stack_id_arg = s->stack_ids;
	}
	s->enc = encoder__new(&eo);
	if (!s->enc)
		return fatal("cannot start the encoder: out of memory");
	if (s->resolver) {
		ZSTD_CCtx *zc = encoder__new_cctx(s->enc);

		if (!zc)
			return fatal("cannot start the encoder: out of memory");
		/* the levels that take seconds for a big trailer would hold the resolver up */
		resolver__compress_with(s->resolver, zc,
					s->opts->compression_level <= EARLY_TRAILER_LEVEL);
		resolver__set_flush(s->resolver, write_side_records, s);
	}
	err = start_poller(s, &s->events, MT_RING_EVENTS, session__on_event_record,
			   on_events_tick, 0);
	if (err)
		return fatal("cannot start the events poller: %s", strerror(-err));
	if (s->resolver) {
		err = start_poller(s, &s->stacks, MT_RING_STACKS, session__on_stack_record, NULL,
				   MT_STOPPED_BY_STACKS);
		if (err)
			return fatal("cannot start the stacks poller: %s", strerror(-err));
	}
	if (start_freeze_watch(s))
		return -1;
	start_backlog_sampler(s);
	return 0;
}

static void pack_meta(msgpack_packer *pk, const struct track_session *s)
{
	struct artifact_record run = { 0 };

	artifact_record__set_version(&run, memtrack_version_string);
	artifact_record__set_command(&run, s->command);
	artifact_record__set_root_pid(&run, s->root_pid);
	artifact_record__set_start(&run, s->start_ns);
	artifact_record__set_end(&run, s->end_ns);
	artifact_record__set_drops(&run, (struct artifact_drops){
		.events = s->event_drops, .stacks = s->stack_drops });
	/* allocations made before attaching are unknown to this artifact, and
	 * the processes attached to may still run: no exit code */
	if (s->attach)
		artifact_record__set_attached(&run, true);
	else if (!s->detached)
		artifact_record__set_exit_code(&run, s->status);
	if (s->running)
		artifact_record__set_running(&run, s->running);
	if (s->detached)
		artifact_record__set_detached(&run, true);
	if (s->blind)
		artifact_record__set_blind(&run, s->blind);
	artifact__pack_meta(pk, &run);
}

static void pack_trailer_last(msgpack_packer *pk, void *arg)
{
	struct track_session *s = arg;

	pack_meta(pk, s);
	proc_table__pack(&s->procs, pk);
}

/*
 * The trailer in two frames: the resolver's records, compressed as the run
 * went, then Meta and the processes: report reads the last frame first
 * for the processes' lifetimes, and a file cut between the two frames has
 * no Meta, so its trailer reads as missing, as a cut one-frame trailer
 * did.  Records the resolver could not pack leave the first frame out.
 */
static int write_trailer(struct track_session *s)
{
	const void *records = NULL;
	size_t len = 0;
	int err;

	if (s->resolver)
		records = resolver__trailer_frame(s->resolver, &len);
	if (records && len && (err = encoder__append_frame(s->enc, records, len)))
		return err;
	return encoder__append_records(s->enc, pack_trailer_last, s);
}

/* events whose stack copy never reached the unwinder got none: lost stacks too */
static void add_unpublished_stacks(struct track_session *s)
{
	struct stack_ids_stats st;

	if (!s->stack_ids)
		return;
	stack_ids__stats(s->stack_ids, &st);
	s->stack_drops += st.unpublished;
}

/*
 * The pollers are stopped: what the rings still hold goes out, whatever the
 * bounds, and the shims still running go their way untracked.
 */
static void finish_merge(struct track_session *s)
{
	struct merge_stats st;

	shim_host__flush(s->host);
	merger__set_bpf_bound(s->merger, UINT64_MAX);
	merger__pass(s->merger, true);
	merger__stalled(s->merger);
	merger__read_unserved(s->merger);
	merger__stats(s->merger, &st);
	s->event_lost = st.lost;
	s->cfi_rules = verbose > 0 ? rule_table__count(shim_host__rules_fd(s->host)) : -1;
	shim_host__delete(s->host);
	s->host = NULL;
}

/* everything after the root exits: drain, release, trailer; 0 or -errno */
static int finish_pipeline(struct track_session *s)
{
	int err, ret = 0;

	bpf_track__stop_tracing(s->bpf);
	err = poller__stop(&s->events);
	if (s->resolver) {
		int stacks_err = poller__stop(&s->stacks);

		err = err ? err : stacks_err;
	}
	finish_merge(s);
	/* thawed, and whatever still runs goes back to memtrack's cgroup */
	freeze_watch__stop(&s->watch);
	delete_freezer(s);
	/* every raw stack is unwound: an event still waiting for one gets none */
	if (s->stack_ids)
		stack_ids__close(s->stack_ids);
	/* the pollers may have added links until they stopped */
	bpf_track__detach(s->bpf, s->guardian_fd);
	/* every fork and exec is known now: the rest of the stacks resolve */
	if (s->resolver)
		resolver__finish(s->resolver);
	/* whatever is still recorded as stopped by us is resumed now */
	pressure__release_all(bpf_track__pressure_fd(s->bpf));
	s->event_drops = bpf_track__drops(s->bpf, MT_RING_EVENTS);
	s->stack_drops = bpf_track__drops(s->bpf, MT_RING_STACKS);
	s->probe_runs[MT_PROBE_ENTRY] = bpf_track__probe_runs(s->bpf, MT_PROBE_ENTRY);
	s->probe_runs[MT_PROBE_RETURN] = bpf_track__probe_runs(s->bpf, MT_PROBE_RETURN);

	ret = encoder__drain(s->enc);
	stop_backlog_sampler(s);
	add_unpublished_stacks(s);
	if (!ret)
		ret = write_trailer(s);
	if (!ret && s->resolver)
		ret = resolver__pack_error(s->resolver);
	if (ret)
		error("cannot write artifact '%s': %s", s->artifact_path, strerror(-ret));
	/* no fsync, as perf record: 1-2 ms a run on this disk, more for a big artifact */
	if (close(s->artifact_fd) && !ret)
		ret = error_errno("cannot write artifact '%s'", s->artifact_path);
	rule_cache__finish(&s->rules);
	if (pstats__close(s->stats))
		warning("the stats file '%s' is incomplete", s->opts->stats_path);
	if (err)
		error("the events poller failed: %s", strerror(-err));
	return ret ? ret : err;
}

void track_session__init(struct track_session *s, const struct track_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->opts = opts;
	s->out_dirfd = -1;
	s->artifact_fd = -1;
	s->guardian_fd = -1;
	s->child.go_fd = -1;
	s->child.exec_fd = -1;
	s->child.ready_fd = -1;
	s->child.report_fd = -1;
	s->watch.epoll_fd = -1;
	s->watch.wake_fd = -1;
	s->cfi_rules = -1;
	s->rules.dir = s->rules.table = -1;
	proc_table__init(&s->procs);
	run_as__from_sudo(&s->run_as);
}

/*
 * The command forked (in the cgroup) before the BPF programs load: it
 * drops privileges and waits on another CPU meanwhile, and the fork of a
 * memtrack without its maps and threads yet is the cheaper one.
 */
static int fork_command(struct track_session *s, const char **argv)
{
	int err;

	s->child.cgroup_fd = s->freezer ? freezer__cgroup_fd(s->freezer) : -1;
	err = spawn__fork(&s->child, argv, &s->run_as);
	if (err)
		return fatal("cannot fork: %s", strerror(-err));
	s->spawned = true;
	return 0;
}

int track_session__prepare(struct track_session *s, const char **argv)
{
	int err;

	/* the stats file comes first, before anything needs privilege */
	if (s->opts->stats_path && create_stats_file(s))
		return -1;
	if (prepare_output_dir(s))
		return -1;
	/* a command that dies before its start must not kill us through the go pipe */
	signal(SIGPIPE, SIG_IGN);
	if (prepare_backend(s))
		return -1;
	setup_freezer(s);
	/* the shim's socket is in the command's environment */
	if (start_shim_host(s))
		return -1;
	if (!s->attach && fork_command(s, argv))
		return -1;
	if (session__load_bpf(s))
		return -1;
	err = pressure__start_guardian(bpf_track__pressure_fd(s->bpf));
	if (err < 0)
		return fatal("cannot start the guardian process: %s", strerror(-err));
	s->guardian_fd = err;
	bpf_track__use_guardian(s->bpf, s->guardian_fd);
	return 0;
}

int track_session__launch(struct track_session *s)
{
	int err;

	if (s->attach) {
		s->root_pid = s->attach[0];
	} else {
		err = spawn__wait_ready(&s->child);
		if (err) {
			s->spawned = false;
			return fatal("cannot fork: %s", strerror(-err));
		}
		s->root_pid = s->child.pid;
		join_freezer(s);
	}
	return open_artifact(s);
}

static int status_figures_start(struct track_session *s)
{
	if (!s->opts->quiet)
		s->status_line = status_line__start(STDERR_FILENO, status_figures, s);
	return 0;
}

/*
 * The pipeline runs ahead of the processes it drains: on a loaded machine
 * a starved poller means stopped producers.  But a thread of it woken by a
 * tracked process (its hello, its exit, a record) does not preempt that
 * process (SCHED_BATCH, at the same nice): a kernel that packs tasks on
 * busy CPUs (a 2-vCPU VM's, the other CPU idle) woke the poller on the
 * process's CPU, and every step of a shim's start and end became a switch
 * to memtrack and back.  The threads made from here on inherit both; the
 * command, forked before, keeps the priority memtrack was started with.
 */
static void set_pipeline_priority(void)
{
	if (setpriority(PRIO_PROCESS, 0, PIPELINE_NICE))
		pr_debug("cannot raise memtrack's priority: %s\n", strerror(errno));
	if (sched_setscheduler(0, SCHED_BATCH, &(struct sched_param){ 0 }))
		pr_debug("cannot make memtrack's threads SCHED_BATCH: %s\n", strerror(errno));
}

int track_session__start(struct track_session *s)
{
	int err;

	/* the live heap costs a hash update an event: only for the status line */
	if (!s->opts->quiet && status_line__wanted(STDERR_FILENO)) {
		s->live = malloc(sizeof(*s->live));
		if (s->live)
			live_heap__init(s->live);
	}
	set_pipeline_priority();
	session__block_forwarded_signals(SIG_BLOCK);
	if (s->attach) {
		/* before the poller runs: both would change the same tables */
		s->start_ns = now_ns();
		if (session__attach_to_tree(s))
			return -1;
	}
	if (start_pipeline(s))
		return -1;
	/* they loaded while the pipeline started: the command runs with them */
	err = bpf_track__wait_loaded(s->bpf);
	if (err)
		return fatal("cannot load the allocator probes: %s", strerror(-err));
	return status_figures_start(s);
}

int track_session__finish(struct track_session *s)
{
	int err = finish_pipeline(s);

	if (s->not_started || s->unseen) {
		remove_artifact(s);
		return err;
	}
	session__print_summary(s);
	return err;
}

/* what a failed start leaves: a command that never ran, a frozen cgroup */
static void abandon_start(struct track_session *s)
{
	if (s->spawned)
		spawn__abort(&s->child);
	s->spawned = false;
	/* other threads may still hold it: thawed and removed, not freed */
	freezer__abandon(s->freezer);
}

void track_session__exit(struct track_session *s)
{
	abandon_start(s);
	rule_cache__finish(&s->rules);
	status_line__stop(s->status_line);
	if (s->bpf)
		bpf_track__close(s->bpf);
	if (s->guardian_fd >= 0)
		close(s->guardian_fd);
	if (s->out_dirfd >= 0)
		close(s->out_dirfd);
	encoder__delete(s->enc);
	merger__delete(s->merger);
	stop_mirror__delete(s->mirror);
	free(s->waits.pids);
	if (s->live)
		live_heap__exit(s->live);
	free(s->live);
	stack_ids__delete(s->stack_ids);
	resolver__delete(s->resolver);
	/*
	 * Not freed: memtrack ends here, and the kernel takes the symbol
	 * tables of every library back at once (freed one by one, 0.9 ms of
	 * the end of a clang's run).  What its caches learned is written.
	 */
	symbolizer__save_caches(s->sym);
	s->sym = NULL;
	proc_table__exit(&s->procs);
	while (s->nwarned)
		free(s->warned[--s->nwarned]);
	free(s->warned);
	free(s->command);
	free(s->attach);
}

int track_session__check_bpf(struct track_session *s)
{
	int err;

	if (session__load_bpf(s))
		return -1;
	err = bpf_track__check_probes(s->bpf);
	if (err)
		return fatal("cannot probe the allocator functions of libc %s: %s", s->libc_path,
			     strerror(-err));
	printf("BPF programs load and attach (libc: %s)\n", s->libc_path);
	return 0;
}
