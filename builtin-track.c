// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack track: run a command and trace every heap allocation of its
 * process tree.  BPF probes -> rings -> pollers -> encoder -> artifact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "util/bpf_track.h"
#include "util/encoder.h"
#include "util/out-file.h"
#include "util/parse-options.h"
#include "util/pipeline-stats.h"
#include "util/poller.h"
#include "util/proc-table.h"
#include "util/proc-tree.h"
#include "util/resolver.h"
#include "util/stack-ids.h"
#include "util/spawn.h"
#include "util/usage.h"
#include "util/util.h"

#define ARTIFACT_FORMAT		1
#define DEFAULT_EVENTS_RING	(8ULL << 20)
#define DEFAULT_STACKS_RING	(4ULL << 20)
#define WINDOW_MAX_AGE_NS	(100 * NSEC_PER_MSEC)
#define BACKLOG_PERIOD_NS	(10 * NSEC_PER_MSEC)
#define PIPELINE_NICE		-10
/* util/unwind.c unwinds x86-64 stacks; elsewhere frame pointers are what there is */
#if defined(__x86_64__)
#define DEFAULT_CALL_GRAPH	"dwarf"
#else
#define DEFAULT_CALL_GRAPH	"fp"
#endif

static const char *const track_usage[] = {
	"memtrack track [<options>] \"<command>\"",
	"memtrack track [<options>] -- <program> [<args>...]",
	"memtrack track [<options>] -p <pid>[,<pid>...]",
	NULL
};

static struct track_opts {
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
	bool tolerate_drops;
	bool quiet;
	bool check_bpf;
} opts = {
	.output_dir = ".",
	.ring_size = { DEFAULT_EVENTS_RING, DEFAULT_STACKS_RING },
	.poll_ms = 1,
	.watermark_pct = 75,
	.compression_level = 3,
	.call_graph = DEFAULT_CALL_GRAPH,
};

struct track_session {
	struct bpf_track *bpf;
	struct pstats *stats;
	struct encoder *enc;
	struct poller events;
	struct poller stacks;
	enum mt_call_graph call_graph;
	struct symbolizer *sym;
	struct resolver *resolver;
	struct stack_ids *stack_ids;	/* dwarf */
	bool stacks_oom;
	struct proc_table procs;
	struct spawn child;
	pid_t root_pid;
	pid_t *attach;			/* -p: the pids, NULL when we run a command */
	int nattach;
	struct run_as run_as;
	int out_dirfd;			/* -o, opened once */
	int artifact_fd;
	char artifact_path[PATH_MAX];
	const char *libc_path;
	char *command;
	int guardian_fd;
	int status;			/* the root's wait status */
	uint64_t start_ns, end_ns;
	uint64_t event_drops, stack_drops;
	pthread_t sampler;
	atomic_bool sampling;
};

static volatile pid_t forward_to;
static volatile sig_atomic_t interrupted;

static const char *const ring_names[MT_RING_MAX] = {
	[MT_RING_EVENTS] = "events",
	[MT_RING_STACKS] = "stacks",
};

static int ring_by_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < MT_RING_MAX; i++)
		if (strlen(ring_names[i]) == len && !strncmp(ring_names[i], name, len))
			return i;
	return -1;
}

static int parse_ring_size(const struct option *opt __maybe_unused, const char *arg)
{
	const char *eq = strchr(arg, '=');
	long page = sysconf(_SC_PAGESIZE);
	uint64_t size;
	int ring;

	if (!eq || eq == arg)
		return error("--ring-size expects <name>=<size>, not '%s'", arg);
	ring = ring_by_name(arg, eq - arg);
	if (ring < 0)
		return error("unknown ring '%.*s' in --ring-size (rings: events, stacks)",
			     (int)(eq - arg), arg);
	if (parse_size(eq + 1, &size) || size < (uint64_t)page ||
	    (size & (size - 1)) || size > (1ULL << 32))
		return error("ring size '%s' must be a power of two from %ldK to 4G",
			     eq + 1, page >> 10);
	opts.ring_size[ring] = size;
	return 0;
}

/*
 * A signal sent to memtrack goes to the command.  One from the terminal
 * (Ctrl-C: SI_KERNEL) went to the command's process group already.
 */
static void forward_signal(int sig, siginfo_t *info, void *uc __maybe_unused)
{
	if (forward_to <= 0)
		interrupted = sig;
	else if (info->si_code != SI_KERNEL)
		kill(forward_to, sig);
}

static void install_signal_forwarding(pid_t child)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO };
	size_t i;

	forward_to = child;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* threads started while these are blocked leave them to the main thread */
static void block_forwarded_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	pthread_sigmask(how, &set, NULL);
}

static char *join_args(int argc, const char **argv)
{
	size_t len = 1;
	char *s;
	int i;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = calloc(1, len);
	if (!s)
		die("out of memory");
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static const char *stats_path_from_env(void)
{
	const char *path = getenv("MEMTRACK_STATS");

	if (!path || !*path)
		path = getenv("CODSPEED_MEMTRACK_STATS");
	return path && *path ? path : NULL;
}

/* as the invoking user under sudo: see util/out-file.h */
static void prepare_output_dir(struct track_session *s)
{
	char why[OUT_WHY_MAX];

	s->out_dirfd = out_dir__open(&s->run_as, opts.output_dir, true, why);
	if (s->out_dirfd < 0)
		die("cannot create output directory '%s': %s", opts.output_dir, why);
}

static void create_stats_file(struct track_session *s)
{
	char why[OUT_WHY_MAX];
	int fd;

	fd = out_file__create_path(&s->run_as, opts.stats_path, OUT_REPLACE, why);
	if (fd < 0)
		die("failed to create memtrack stats file '%s': %s", opts.stats_path, why);
	s->stats = pstats__create(fd, opts.stats_path);
	if (!s->stats)
		die("out of memory");
}

/* BPF sees the initial namespace's pids; memtrack's own must be the same */
static void check_pid_namespace(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int nested = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6))
			nested = strchr(line + 7, '\t') != NULL || strchr(line + 7, ' ') != NULL;
	fclose(f);
	if (nested)
		die("memtrack track runs in a pid namespace of its own: BPF sees the "
		    "host's pids; run it in the initial pid namespace (e.g. docker --pid=host)");
}

static void load_bpf(struct track_session *s)
{
	struct bpf_track_opts bo = {
		.ring_size = { opts.ring_size[MT_RING_EVENTS], opts.ring_size[MT_RING_STACKS] },
		.watermark_pct = opts.watermark_pct,
		.call_graph = s->call_graph,
		.stack_copy_size = opts.stack_copy_size,
	};
	int err = bpf_track__open(&s->bpf, &bo);

	if (err == -EOPNOTSUPP)
		die("memtrack was built without BPF (BUILD_BPF_SKEL=0); track cannot run");
	if (err == -EPERM || err == -EACCES)
		die("cannot load BPF programs: %s; memtrack track needs root "
		    "(or CAP_BPF and CAP_PERFMON)", strerror(-err));
	if (err)
		die("cannot load BPF programs: %s (run with -v for libbpf's log)",
		    strerror(-err));
	err = bpf_track__attach_libc(s->bpf, &s->libc_path);
	if (err)
		die("cannot probe the allocator functions of libc%s%s: %s%s",
		    s->libc_path ? " " : "", s->libc_path ? s->libc_path : "",
		    strerror(-err), err == -EINVAL ? " (another tool's uprobe there "
		    "with a reference counter? see dmesg)" : "");
}

/* a new file: an artifact never replaces one (pids come round again) */
static void open_artifact(struct track_session *s)
{
	char name[64], why[OUT_WHY_MAX];

	snprintf(name, sizeof(name), "%d.MemtrackArtifact.msgpack", s->root_pid);
	snprintf(s->artifact_path, sizeof(s->artifact_path), "%s/%s", opts.output_dir, name);
	s->artifact_fd = out_file__create(&s->run_as, s->out_dirfd, name, OUT_NEW, why);
	if (s->artifact_fd < 0) {
		if (!s->attach)
			spawn__abort(&s->child);
		die("cannot create artifact '%s': %s", s->artifact_path, why);
	}
	close(s->out_dirfd);
	s->out_dirfd = -1;
}

/*
 * A tracked process exec'd or mapped code not seen before: probe it, note
 * its mappings for the resolver (it may be gone when its stacks are), resume.
 */
static void attach_new_code(struct track_session *s, const struct mt_proc_event *e)
{
	int err = bpf_track__inspect_process(s->bpf, e->pid);

	if (err && err != -ENOENT)
		warning("cannot inspect the code of pid %d: %s", e->pid, strerror(-err));
	if (s->sym && e->exit_code == MT_NEW_CODE_EXEC)
		symbolizer__exec(s->sym, e->pid);
	else if (s->sym)
		symbolizer__snapshot(s->sym, e->pid);
	bpf_track__resume_attached(s->bpf, e->pid);
}

/* the resolver must know every process's mappings, even after it is gone */
static void follow_process(struct track_session *s, const struct mt_proc_event *e)
{
	if (!s->sym)
		return;
	if (e->kind == MT_FORK)
		symbolizer__fork(s->sym, e->ppid, e->pid);
	else if (e->kind == MT_EXIT)
		symbolizer__exit(s->sym, e->pid);
}

static int on_event_record(void *ctx, const void *data, uint32_t len)
{
	struct track_session *s = ctx;
	uint32_t kind = *(const uint32_t *)data;

	if (kind == MT_NEW_CODE && len >= sizeof(struct mt_proc_event)) {
		attach_new_code(s, data);
	} else if (kind >= MT_FORK && len >= sizeof(struct mt_proc_event)) {
		proc_table__apply(&s->procs, data);
		follow_process(s, data);
	}
	else if (kind && kind < MT_FORK && len >= sizeof(struct mt_alloc_event))
		encoder__add(s->enc, data);	/* a write error is reported at the end */
	return 0;
}

static int on_stack_record(void *ctx, const void *data, uint32_t len)
{
	struct track_session *s = ctx;
	uint32_t kind = *(const uint32_t *)data;

	if (kind == MT_STACK)
		resolver__push(s->resolver, data, len);
	else if (kind == MT_RAW_STACK && s->stack_ids &&
		 stack_ids__add_raw(s->stack_ids, data, len) == -ENOMEM && !s->stacks_oom) {
		warning("out of memory for call stacks: events from now on may have none");
		s->stacks_oom = true;
	}
	return 0;
}

static int unwind_rule(void *ctx, int32_t pid, uint64_t ip, bool ret_addr,
		       struct unwind_rule *rule)
{
	return symbolizer__unwind_rule(ctx, pid, ip, ret_addr, rule);
}

static uint64_t take_stack_id(void *arg, uint64_t seq)
{
	return stack_ids__take(arg, seq);
}

static void on_events_tick(void *ctx)
{
	struct track_session *s = ctx;

	encoder__flush_older(s->enc, WINDOW_MAX_AGE_NS);
}

static void on_window(const struct encoder_window_stats *w, void *arg)
{
	pstats__encode(arg, w);
}

/* a `backlog` row every 10 ms: what the pollers sent, what the encoder took */
static void *backlog_sampler(void *arg)
{
	struct track_session *s = arg;
	struct timespec ts = { .tv_nsec = BACKLOG_PERIOD_NS };

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

static int start_poller(struct track_session *s, struct poller *p, enum mt_ring_id ring,
			ring_record_fn *on_record, void (*on_tick)(void *ctx),
			uint32_t pressure_flag)
{
	int err;

	p->interval_ms = opts.poll_ms;
	p->pressure_fd = bpf_track__pressure_fd(s->bpf);
	p->pressure_flag = pressure_flag;
	p->pressure_stops = bpf_track__pressure_stops(s->bpf);
	p->watermark = opts.ring_size[ring] * opts.watermark_pct / 100;
	p->stats = s->stats;
	p->on_record = on_record;
	p->on_tick = on_tick;
	p->ctx = s;
	err = ring__init(&p->ring, ring_names[ring], bpf_track__ring_fd(s->bpf, ring),
			 opts.ring_size[ring]);
	return err ? err : poller__start(p);
}

/* the symbolizer, the resolver thread, and with dwarf the unwinding */
static void start_stack_stages(struct track_session *s)
{
	s->sym = symbolizer__new();
	if (s->sym)
		s->resolver = resolver__new(s->sym, s->stats);
	if (!s->resolver)
		die("cannot start the resolver: out of memory");
	if (s->call_graph != MT_CALL_GRAPH_DWARF)
		return;
	s->stack_ids = stack_ids__new(unwind_rule, s->sym, s->resolver);
	if (!s->stack_ids)
		die("cannot start the unwinder: out of memory");
}

static void start_pipeline(struct track_session *s)
{
	struct encoder_opts eo = {
		.fd = s->artifact_fd,
		.threads = opts.encoder_threads,
		.level = opts.compression_level,
		.on_window = on_window,
		.on_window_arg = s->stats,
	};
	int err;

	if (s->call_graph != MT_CALL_GRAPH_NO)
		start_stack_stages(s);
	if (s->stack_ids) {
		eo.stack_id = take_stack_id;
		eo.stack_id_arg = s->stack_ids;
	}
	s->enc = encoder__new(&eo);
	if (!s->enc)
		die("cannot start the encoder: out of memory");
	err = start_poller(s, &s->events, MT_RING_EVENTS, on_event_record, on_events_tick, 0);
	if (err)
		die("cannot start the events poller: %s", strerror(-err));
	if (s->resolver) {
		err = start_poller(s, &s->stacks, MT_RING_STACKS, on_stack_record, NULL,
				   MT_STOPPED_BY_STACKS);
		if (err)
			die("cannot start the stacks poller: %s", strerror(-err));
	}
	start_backlog_sampler(s);
}

static void run_child(struct track_session *s)
{
	pid_t pid = s->child.pid;
	int err;

	err = bpf_track__track_pid(s->bpf, pid);
	if (!err && !proc_table__get(&s->procs, pid))
		err = -ENOMEM;
	if (err) {
		spawn__abort(&s->child);
		die("cannot track pid %d: %s", pid, strerror(-err));
	}
	proc_table__get(&s->procs, pid)->ppid = getpid();
	install_signal_forwarding(pid);
	block_forwarded_signals(SIG_UNBLOCK);
	s->start_ns = now_ns();
	if (spawn__start(&s->child))
		die_errno("cannot start the command");
	while (waitpid(pid, &s->status, 0) < 0) {
		if (errno != EINTR)
			die_errno("waitpid");
	}
	forward_to = -1;	/* reaped: its pid may be anyone's now */
	s->end_ns = now_ns();
}

/* the kernel's ptrace check, PTRACE_MODE_ATTACH with the caller's fs creds */
static int open_proc_mem(void *arg, char *why __maybe_unused, size_t len __maybe_unused)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", *(const pid_t *)arg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * -p under sudo: only what the invoking user could trace, or memtrack
 * would hand them another user's process (its names, its allocations)
 * and let back-pressure stop it.  0, or -errno with why filled in.
 */
static int may_trace(const struct track_session *s, pid_t pid, char *why, size_t len)
{
	int fd;

	if (!s->run_as.set)
		return 0;
	fd = run_as__call(&s->run_as, open_proc_mem, &pid, why, len);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* "uid N" of a process, from /proc, for messages */
static unsigned long process_uid(pid_t pid)
{
	char path[64], line[256];
	unsigned long uid = -1UL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %*u %lu", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

/* -p: the given processes and their descendants, as they run now */
static void attach_to_tree(struct track_session *s)
{
	char why[256];
	pid_t *tree;
	int n, i, err;

	n = proc_tree__collect(s->attach, s->nattach, &tree);
	if (n < 0)
		die("cannot read the process tree: %s", strerror(-n));
	for (i = 0; i < n; i++) {
		struct process *p;

		/* the given pids were checked already: these are descendants */
		if (i >= s->nattach && may_trace(s, tree[i], why, sizeof(why))) {
			warning("not tracking pid %d, a descendant: uid %u may not trace "
				"it (%s)", tree[i], (unsigned int)s->run_as.uid, why);
			continue;
		}
		p = proc_table__get(&s->procs, tree[i]);

		err = bpf_track__track_pid(s->bpf, tree[i]);
		if (!err && p)
			err = proc_tree__describe(tree[i], p);
		if (!err)
			err = bpf_track__inspect_process(s->bpf, tree[i]);
		if (err && err != -ENOENT && err != -ESRCH)
			warning("cannot track pid %d: %s", tree[i], strerror(-err));
	}
	pr_debug("attached to %d processes\n", n);
	free(tree);
}

/* -p: until every given process has exited, or memtrack is interrupted */
static void wait_for_attached(struct track_session *s)
{
	struct pollfd *fds = calloc(s->nattach, sizeof(*fds));
	int i, left = s->nattach;

	if (!fds)
		die("out of memory");
	for (i = 0; i < s->nattach; i++) {
		fds[i].fd = syscall(SYS_pidfd_open, s->attach[i], 0);
		fds[i].events = POLLIN;
		if (fds[i].fd < 0)
			left--;
	}
	while (left > 0 && !interrupted) {
		if (poll(fds, s->nattach, -1) < 0)
			continue;	/* EINTR: a signal asked us to stop */
		for (i = 0; i < s->nattach; i++) {
			if (fds[i].fd >= 0 && fds[i].revents) {
				close(fds[i].fd);
				fds[i].fd = -1;
				left--;
			}
		}
	}
	for (i = 0; i < s->nattach; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	free(fds);
}

static void run_attached(struct track_session *s)
{
	install_signal_forwarding(0);
	block_forwarded_signals(SIG_UNBLOCK);
	if (!opts.quiet)
		fprintf(stderr, "memtrack: tracking pid %s and its descendants; "
			"Ctrl-C to stop\n", opts.attach_pids);
	wait_for_attached(s);
	s->end_ns = now_ns();
}

static void pack_meta(msgpack_packer *pk, const struct track_session *s)
{
	msgpack_pack_map(pk, s->attach ? 11 : 10);
	if (s->attach) {
		/* allocations made before attaching are unknown to this artifact */
		pack_key(pk, "attached");
		msgpack_pack_true(pk);
	}
	pack_key(pk, "type");
	pack_str(pk, "Meta");
	pack_key(pk, "format");
	msgpack_pack_int(pk, ARTIFACT_FORMAT);
	pack_key(pk, "tool");
	pack_str(pk, "memtrack");
	pack_key(pk, "version");
	pack_str(pk, memtrack_version_string);
	pack_key(pk, "command");
	pack_str(pk, s->command);
	pack_key(pk, "root_pid");
	msgpack_pack_int32(pk, s->root_pid);
	pack_key(pk, "start");
	msgpack_pack_uint64(pk, s->start_ns);
	pack_key(pk, "end");
	msgpack_pack_uint64(pk, s->end_ns);
	pack_key(pk, "drops");
	msgpack_pack_map(pk, 2);
	pack_key(pk, "events");
	msgpack_pack_uint64(pk, s->event_drops);
	pack_key(pk, "stacks");
	msgpack_pack_uint64(pk, s->stack_drops);
	pack_key(pk, "exit_code");
	msgpack_pack_int32(pk, s->status);
}

static void pack_trailer(msgpack_packer *pk, void *arg)
{
	struct track_session *s = arg;

	pack_meta(pk, s);
	proc_table__pack(&s->procs, pk);
	if (s->resolver)
		resolver__pack(s->resolver, pk);
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

	ret = encoder__drain(s->enc);
	stop_backlog_sampler(s);
	add_unpublished_stacks(s);
	if (!ret)
		ret = encoder__append_records(s->enc, pack_trailer, s);
	if (ret)
		error("cannot write artifact '%s': %s", s->artifact_path, strerror(-ret));
	if (fsync(s->artifact_fd) && errno != EINVAL && !ret)
		ret = error_errno("cannot write artifact '%s'", s->artifact_path);
	if (close(s->artifact_fd) && !ret)
		ret = error_errno("cannot write artifact '%s'", s->artifact_path);
	if (pstats__close(s->stats))
		warning("the stats file '%s' is incomplete", opts.stats_path);
	if (err)
		error("the events poller failed: %s", strerror(-err));
	return ret ? ret : err;
}

static const char *human_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = n;
	size_t u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
	return buf;
}

/* -v: what the dwarf unwinding did */
static void print_unwind_stats(struct track_session *s)
{
	struct stack_ids_stats st;
	char size[32];

	if (!s->stack_ids || verbose < 1)
		return;
	stack_ids__stats(s->stack_ids, &st);
	fprintf(stderr, "memtrack track: unwound %lu stack copies (%s), %.1f frames each, "
		"into %lu distinct stacks\n", st.raw,
		human_bytes(st.raw_bytes, size, sizeof(size)),
		st.raw ? (double)st.frames / st.raw : 0.0, st.stacks);
}

static void print_summary(struct track_session *s)
{
	unsigned int unprobed = bpf_track__probe_failures(s->bpf);
	char size[32], stacks[64] = "";

	if (opts.quiet)
		return;
	print_unwind_stats(s);
	if (s->resolver)
		snprintf(stacks, sizeof(stacks), ", %lu stacks of %lu frames",
			 resolver__stacks(s->resolver), resolver__frames(s->resolver));
	fprintf(stderr, "[ memtrack track: %lu events, %lu processes%s, '%s' (%s), "
		"%lu drops, %lu pressure episodes%s ]\n",
		encoder__events_in(s->enc), s->procs.count, stacks, s->artifact_path,
		human_bytes(encoder__bytes_written(s->enc), size, sizeof(size)),
		s->event_drops + s->stack_drops, s->events.episodes + s->stacks.episodes,
		unprobed ? ", SOME ALLOCATORS NOT PROBED (see above)" : "");
}

static int exit_status(const struct track_session *s, int err)
{
	if (err)
		return MEMTRACK_EXIT_FATAL;
	if ((s->event_drops || s->stack_drops) && !opts.tolerate_drops) {
		error("%lu events and %lu call stacks were dropped: the artifact is incomplete "
		      "(use a larger --ring-size, or --tolerate-drops)",
		      s->event_drops, s->stack_drops);
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->attach)
		return 0;
	if (WIFSIGNALED(s->status))
		return 128 + WTERMSIG(s->status);
	return WEXITSTATUS(s->status);
}

static int check_bpf(void)
{
	struct track_session s = { 0 };

	load_bpf(&s);
	bpf_track__close(s.bpf);
	printf("BPF programs load and attach (libc: %s)\n", s.libc_path);
	return 0;
}

static void check_attach_targets(const struct track_session *s)
{
	char why[256];
	int i;

	for (i = 0; i < s->nattach; i++) {
		if (kill(s->attach[i], 0) && errno == ESRCH)
			die("no process with pid %d", s->attach[i]);
		if (may_trace(s, s->attach[i], why, sizeof(why)))
			die("cannot attach to pid %d (uid %lu): uid %u, who ran sudo, may "
			    "not trace it (%s)", s->attach[i], process_uid(s->attach[i]),
			    (unsigned int)s->run_as.uid, why);
	}
}

/* dwarf[,<size>]: the bytes of stack copied, a multiple of 8 as perf rounds them */
static int parse_stack_copy_size(const char *arg)
{
	char *end;
	unsigned long size;

	if (!*arg)
		return MT_STACK_COPY_DEFAULT;
	errno = 0;
	size = strtoul(arg, &end, 0);
	if (errno || *end || !size || size > MT_STACK_COPY_MAX)
		return error("--call-graph dwarf,<size>: the size must be 1 to %d bytes, not '%s'",
			     MT_STACK_COPY_MAX, arg);
	return (size + 7) & ~7UL;
}

/* -1 for a mode that does not exist */
static int parse_call_graph(const char *mode)
{
	int size;

	if (!strcmp(mode, "no"))
		return MT_CALL_GRAPH_NO;
	if (!strcmp(mode, "fp"))
		return MT_CALL_GRAPH_FP;
	if (!strncmp(mode, "dwarf", 5) && (!mode[5] || mode[5] == ',')) {
#if !defined(__x86_64__)
		return error("--call-graph dwarf unwinds x86-64 stacks only; use fp here");
#endif
		size = parse_stack_copy_size(mode[5] ? mode + 6 : "");
		if (size < 0)
			return -1;
		opts.stack_copy_size = size;
		return MT_CALL_GRAPH_DWARF;
	}
	return error("--call-graph expects fp, dwarf[,<size>] or no, not '%s'", mode);
}

/*
 * With dwarf every allocation puts a stack copy in the stacks ring: above
 * the watermark, room for the ones of producers not stopped yet.
 */
static int check_stacks_ring(const struct track_session *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t record = BPF_RINGBUF_HDR_SZ + sizeof(struct mt_raw_stack) + opts.stack_copy_size;
	uint64_t copies = 2 + (cpus > 2 ? cpus : 2);	/* one in flight per CPU, and some */
	uint64_t need = copies * record * 100 / (100 - opts.watermark_pct), min = 4096;

	if (s->call_graph != MT_CALL_GRAPH_DWARF)
		return 0;
	while (min < need)
		min *= 2;
	if (opts.ring_size[MT_RING_STACKS] < min)
		return error("--ring-size stacks=%luK is too small for --call-graph dwarf,%u "
			     "at a %u%% watermark: it needs at least %luK",
			     opts.ring_size[MT_RING_STACKS] >> 10, opts.stack_copy_size,
			     opts.watermark_pct, min >> 10);
	return 0;
}

/* values the option table cannot check: each a usage error */
static int validate_options(struct track_session *s)
{
	int mode = parse_call_graph(opts.call_graph);

	if (mode < 0)
		return -1;
	s->call_graph = mode;
	if (opts.watermark_pct < 1 || opts.watermark_pct > 99)
		return error("--pressure-watermark must be between 1 and 99, not %u",
			     opts.watermark_pct);
	if (opts.poll_ms < 1 || opts.poll_ms > 60000)
		return error("--poll-interval must be between 1 and 60000 ms, not %u",
			     opts.poll_ms);
	if (opts.encoder_threads > 64)
		return error("--encoder-threads must be at most 64, not %u",
			     opts.encoder_threads);
	if (opts.compression_level < 1 || opts.compression_level > 19)
		return error("--compression-level must be between 1 and 19, not %u",
			     opts.compression_level);
	return check_stacks_ring(s);
}

int cmd_track(int argc, const char **argv)
{
	struct option options[] = {
		OPT_STRING('o', "output", &opts.output_dir, "dir",
			   "directory for the artifact (default: .)"),
		OPT_STRING(0, "stats", &opts.stats_path, "path",
			   "write pipeline stats as JSON lines (or MEMTRACK_STATS)"),
		OPT_CALLBACK(0, "ring-size", NULL, "name=size",
			     "size of a ring, a power of two (e.g. events=16M)",
			     parse_ring_size),
		OPT_UINTEGER(0, "poll-interval", &opts.poll_ms, "ms",
			     "time between polls of the rings (default: 1)"),
		OPT_UINTEGER(0, "pressure-watermark", &opts.watermark_pct, "pct",
			     "stop producers when a ring is this full (default: 75)"),
		OPT_UINTEGER(0, "encoder-threads", &opts.encoder_threads, "n",
			     "threads compressing the artifact (default: 1 on 2 cores)"),
		OPT_UINTEGER('z', "compression-level", &opts.compression_level, "n",
			     "zstd level of the artifact, 1 to 19 (default: 3)"),
		OPT_STRING('p', "pid", &opts.attach_pids, "pid[,pid...]",
			   "track these running processes and their descendants"),
		OPT_STRING(0, "call-graph", &opts.call_graph, "mode",
			   "call stacks: dwarf[,<size>] (default), fp or no"),
		OPT_BOOLEAN(0, "tolerate-drops", &opts.tolerate_drops,
			    "exit with the command's status even if events were dropped"),
		OPT_BOOLEAN('q', "quiet", &opts.quiet, "no summary line at the end"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose (libbpf's log with -vv)"),
		OPT_BOOLEAN(0, "check-bpf", &opts.check_bpf,
			    "check that the BPF programs load here, and exit"),
		OPT_END()
	};
	struct track_session s = { .out_dirfd = -1, .artifact_fd = -1, .guardian_fd = -1 };
	const char *shell_argv[] = { "/bin/sh", "-c", NULL, NULL };
	const char **cmd_argv;
	int err;

	argc = parse_options(argc, argv, options, track_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_KEEP_DASHDASH);
	if (validate_options(&s))
		usage_with_options(track_usage, options);
	if (opts.check_bpf)
		return check_bpf();
	if (argc > 0 && !strcmp(argv[0], "--")) {
		argv++;
		argc--;
		cmd_argv = argv;
	} else if (argc == 1) {
		shell_argv[2] = argv[0];
		cmd_argv = shell_argv;
	} else {
		cmd_argv = argv;
	}
	run_as__from_sudo(&s.run_as);
	if (opts.attach_pids) {
		if (argc > 0) {
			error("-p and a command cannot go together");
			usage_with_options(track_usage, options);
		}
		s.nattach = parse_pid_list(opts.attach_pids, &s.attach);
		if (s.nattach < 0) {
			error("-p expects a list of process ids, not '%s'", opts.attach_pids);
			usage_with_options(track_usage, options);
		}
		check_attach_targets(&s);
		argc = 1;
		argv = &opts.attach_pids;
	} else if (argc < 1 || !*argv[0]) {
		error("no command given");
		usage_with_options(track_usage, options);
	}
	s.command = join_args(argc, argv);

	/* the stats file comes first, before anything needs privilege */
	if (!opts.stats_path)
		opts.stats_path = stats_path_from_env();
	if (opts.stats_path)
		create_stats_file(&s);
	prepare_output_dir(&s);
	check_pid_namespace();
	/* a command that dies before its start must not kill us through the go pipe */
	signal(SIGPIPE, SIG_IGN);
	load_bpf(&s);
	proc_table__init(&s.procs);

	err = pressure__start_guardian(bpf_track__pressure_fd(s.bpf));
	if (err < 0)
		die("cannot start the guardian process: %s", strerror(-err));
	s.guardian_fd = err;
	if (s.attach) {
		s.root_pid = s.attach[0];
	} else {
		err = spawn__fork(&s.child, cmd_argv, &s.run_as);
		if (err)
			die("cannot fork: %s", strerror(-err));
		s.root_pid = s.child.pid;
	}
	open_artifact(&s);

	/*
	 * The pipeline runs ahead of the processes it drains: on a loaded
	 * machine a starved poller means stopped producers.  The command
	 * keeps the priority memtrack was started with.
	 */
	if (setpriority(PRIO_PROCESS, 0, PIPELINE_NICE))
		pr_debug("cannot raise memtrack's priority: %s\n", strerror(errno));
	block_forwarded_signals(SIG_BLOCK);
	if (s.attach) {
		/* before the poller runs: both would change the same tables */
		s.start_ns = now_ns();
		attach_to_tree(&s);
	}
	start_pipeline(&s);
	if (s.attach)
		run_attached(&s);
	else
		run_child(&s);
	err = finish_pipeline(&s);
	print_summary(&s);

	bpf_track__close(s.bpf);
	close(s.guardian_fd);
	encoder__delete(s.enc);
	stack_ids__delete(s.stack_ids);
	resolver__delete(s.resolver);
	symbolizer__delete(s.sym);
	proc_table__exit(&s.procs);
	free(s.command);
	free(s.attach);
	return exit_status(&s, err);
}
