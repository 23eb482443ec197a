// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack track: run a command and trace every heap allocation of its
 * process tree.  BPF probes -> rings -> pollers -> encoder -> artifact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "util/backend.h"
#include "util/bpf_track.h"
#include "util/dwarf-cache.h"
#include "util/encoder.h"
#include "util/freeze-watch.h"
#include "util/freezer.h"
#include "util/kernel-check.h"
#include "util/merge.h"
#include "util/out-file.h"
#include "util/parse-options.h"
#include "util/pipeline-stats.h"
#include "util/poller.h"
#include "util/proc-table.h"
#include "util/proc-tree.h"
#include "util/resolver.h"
#include "util/quote.h"
#include "util/shim-host.h"
#include "util/stack-ids.h"
#include "util/status-line.h"
#include "util/spawn.h"
#include "util/stop-mirror.h"
#include "util/usage.h"
#include "util/util.h"

#define DEFAULT_EVENTS_RING	(8ULL << 20)
#define DEFAULT_STACKS_RING	(8ULL << 20)
#define DEFAULT_HEAP_RING	(1ULL << 20)
#ifndef MEMTRACK_LIBDIR
#define MEMTRACK_LIBDIR		"/usr/local/lib/memtrack"
#endif
#define WINDOW_MAX_AGE_NS	(100 * NSEC_PER_MSEC)
#define BACKLOG_PERIOD_NS	(10 * NSEC_PER_MSEC)
#define PIPELINE_NICE		-10
#define STACK_END_SLACK		64	/* bytes copied above a thread's outermost frame */
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
	const char *backend;
	uint64_t heap_ring_size;
	bool tolerate_drops;
	bool stop_with_root;
	bool no_freezer;
	bool quiet;
	bool check_bpf;
} opts = {
	.output_dir = ".",
	.ring_size = { DEFAULT_EVENTS_RING, DEFAULT_STACKS_RING },
	.heap_ring_size = DEFAULT_HEAP_RING,
	.poll_ms = 1,
	.watermark_pct = 75,
	.compression_level = 1,
	.call_graph = DEFAULT_CALL_GRAPH,
};

/* the waits of one pass over the shim's rings, for its `pressure` row */
struct heap_waits {
	struct stopped_pid *pids;
	size_t n, cap;
	uint64_t episodes;
};

struct track_session {
	struct bpf_track *bpf;
	enum backend backend;
	struct shim_env shim;
	struct shim_host *host;
	struct merger *merger;
	struct heap_waits waits;
	uint64_t heap_size;		/* the most the live rings ever had: the last ring_open row */
	unsigned int refused;		/* processes --backend preload could not take */
	unsigned int corrupt;		/* processes whose ring broke the rules */
	unsigned int ringless;		/* shim threads that could not make a ring */
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
	uint64_t probe_runs[MT_PROBE_MAX];
	uint64_t held_exec, held_mmap;	/* stops for new code: at exec, at a code mapping */
	uint64_t event_lost;		/* in rings dropped as corrupt */
	unsigned int running;		/* tracked processes alive when memtrack stopped */
	pthread_t sampler;
	atomic_bool sampling;
	struct status_line *status_line;	/* on a terminal, while the command runs */
	char **warned;			/* "exe\treason" of the processes sent to BPF */
	size_t nwarned, warned_cap;
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
	if (eq - arg == 4 && !strncmp(arg, "heap", 4)) {
		if (parse_size(eq + 1, &size) || size < SHIM_RING_MIN || (size & (size - 1)) ||
		    size > SHIM_RING_MAX)
			return error("heap ring size '%s' must be a power of two from %uK to %uM",
				     eq + 1, SHIM_RING_MIN >> 10, SHIM_RING_MAX >> 20);
		opts.heap_ring_size = size;
		return 0;
	}
	ring = ring_by_name(arg, eq - arg);
	if (ring < 0)
		return error("unknown ring '%.*s' in --ring-size (rings: events, stacks, heap)",
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

/* the fill at which the tree is frozen: two thirds of the way to the SIGSTOP watermark */
static uint64_t freeze_mark(const struct track_session *s, enum mt_ring_id ring)
{
	return s->freezer ? opts.ring_size[ring] * opts.watermark_pct * 2 / 300 : 0;
}

/*
 * A command's tree gets a cgroup whose freezer pauses it at a filling BPF
 * ring: a process frozen there is reported to no one, where a SIGSTOP shows
 * in its parent's wait().  Processes of -p stay in their own cgroups.
 */
static struct freezer *exit_freezer;

/* a die() on the way: the tree thawed, and its cgroup gone or left empty for the next run */
static void abandon_freezer(void)
{
	freezer__abandon(exit_freezer);
}

/* a cgroup for the tree, so that back-pressure freezes it rather than stopping it with signals */
static void setup_freezer(struct track_session *s)
{
	char why[256];

	if (s->attach || opts.no_freezer)
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

static void load_bpf(struct track_session *s)
{
	struct bpf_track_opts bo = {
		.ring_size = { opts.ring_size[MT_RING_EVENTS], opts.ring_size[MT_RING_STACKS] },
		.watermark_pct = opts.watermark_pct,
		.freeze_mark = { freeze_mark(s, MT_RING_EVENTS), freeze_mark(s, MT_RING_STACKS) },
		.call_graph = s->call_graph,
		.stack_copy_size = opts.stack_copy_size,
		.decide_at_exec = s->backend != BACKEND_BPF,
		/* as BPF reads a superblock's dev_t */
		.shim_file = { ((uint64_t)major(s->shim.dev) << 20) | minor(s->shim.dev), s->shim.ino },
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

/* the shim next to memtrack (or installed); without it, BPF traces everything */
static void prepare_backend(struct track_session *s)
{
	if (s->attach)
		s->backend = BACKEND_BPF;	/* a running process cannot take the shim */
	if (s->backend == BACKEND_BPF)
		return;
	if (!backend__find_shim(&s->shim, MEMTRACK_LIBDIR))
		return;
	if (s->backend == BACKEND_PRELOAD)
		die("cannot find libmemtrack-preload.so next to memtrack or in %s",
		    MEMTRACK_LIBDIR);
	warning("cannot find libmemtrack-preload.so next to memtrack or in %s: "
		"every process is traced with BPF", MEMTRACK_LIBDIR);
	s->backend = BACKEND_BPF;
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

static void set_mode(struct track_session *s, pid_t pid, enum mt_mode mode)
{
	struct process *p = proc_table__get(&s->procs, pid);
	int err = bpf_track__set_mode(s->bpf, pid, mode);

	if (err)
		warning("cannot set the backend of pid %d: %s", pid, strerror(-err));
	if (p && p->mode != mode)
		p->bpf_why = NULL;
	if (p)
		p->mode = mode;
}

static const char *comm_of(struct track_session *s, pid_t pid)
{
	struct process *p = proc_table__get(&s->procs, pid);

	return p && p->comm[0] ? p->comm : "?";
}

/* the probes pid is to have: all of them with BPF, else those the shim cannot replace */
static void probe_process(struct track_session *s, pid_t pid, struct code_scan *scan)
{
	enum link_want want = bpf_track__mode(s->bpf, pid) == MT_MODE_BPF ? LINK_ALL :
									  LINK_FOREIGN;
	int err = bpf_track__inspect_process(s->bpf, pid, want, scan);

	if (err && err != -ENOENT)
		warning("cannot inspect the code of pid %d: %s", pid, strerror(-err));
}

/* each kind of process (executable, reason) sent to BPF, warned of once */
static bool warned_before(struct track_session *s, const char *exe, const char *tag)
{
	char key[MT_PATH_LEN + 64];
	size_t i;

	snprintf(key, sizeof(key), "%s\t%s", exe, tag);
	for (i = 0; i < s->nwarned; i++)
		if (!strcmp(s->warned[i], key))
			return true;
	if (grow_array((void **)&s->warned, &s->warned_cap, s->nwarned + 1, sizeof(*s->warned)))
		return false;
	s->warned[s->nwarned] = strdup(key);
	if (s->warned[s->nwarned])
		s->nwarned++;
	return false;
}

/*
 * pid is traced by BPF from now on (tag: why, in a word or two); with
 * --backend preload, that fails the run.  BPF costs a trap per call: the
 * user hears why at once, once per executable and reason.
 */
static void use_bpf(struct track_session *s, pid_t pid, const char *tag, const char *fmt, ...)
{
	struct process *p = proc_table__get(&s->procs, pid);
	const char *exe = p && p->exe[0] ? p->exe : comm_of(s, pid);
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (s->backend == BACKEND_PRELOAD) {
		error("pid %d (%s) cannot take the preload shim: %s", pid, comm_of(s, pid), why);
		s->refused++;
	} else if (verbose >= 1 || warned_before(s, exe, tag)) {
		pr_debug("pid %d (%s): traced by BPF: %s\n", pid, comm_of(s, pid), why);
	} else {
		warning("%s (pid %d) is traced by BPF, slower than the preload shim: %s", exe, pid,
			why);
	}
	set_mode(s, pid, MT_MODE_BPF);
	p = proc_table__get(&s->procs, pid);
	if (p)
		p->bpf_why = tag;
	probe_process(s, pid, NULL);
}

/* at exec: the new image takes the shim (it says hello when it starts), or BPF */
/*
 * Under sudo, the artifact is the invoking user's: a secure exec (a
 * setuid program) is a process that user may not look into, as -p
 * refuses one, so its tracking ends there.
 */
static bool secure_under_sudo(struct track_session *s, pid_t pid)
{
	if (!s->run_as.set || !backend__secure_exec(pid))
		return false;
	warning("pid %d (%s) is a setuid, setgid or capable program, which uid %u may not "
		"trace: it is not tracked from its exec on", pid, comm_of(s, pid),
		(unsigned int)s->run_as.uid);
	bpf_track__untrack(s->bpf, pid);
	s->untraceable++;
	return true;
}

static void choose_backend(struct track_session *s, pid_t pid)
{
	const char *why, *tag = NULL;
	struct process *p;

	if (secure_under_sudo(s, pid))
		return;
	if (s->backend == BACKEND_BPF || s->attach) {
		set_mode(s, pid, MT_MODE_BPF);
		p = proc_table__get(&s->procs, pid);
		if (p)
			p->bpf_why = s->attach ? "-p" : "--backend bpf";
		return;
	}
	why = backend__refusal(pid, &s->shim, &tag);
	if (!why) {
		set_mode(s, pid, MT_MODE_PENDING);
		return;
	}
	use_bpf(s, pid, tag, "%s", why);
	/* where the shim changes what the program does, it goes before ld.so runs */
	if (!strcmp(tag, "sanitizer") || !strcmp(tag, "chroot")) {
		int err = backend__unpreload(pid, &s->shim);

		if (err)
			warning("cannot take the preload shim out of the environment of pid %d "
				"(%s): %s", pid, comm_of(s, pid), strerror(-err));
	}
}

/*
 * Before its first allocator call, a process waiting for its shim may
 * show that the shim will not serve it: an allocator of its own in its
 * executable, an allocator's function called by a name the shim does not
 * interpose, or libc mapped without the shim (ld.so maps LD_PRELOAD's
 * libraries first).  What the shim cannot see elsewhere is probed beside it.
 */
static const char *shim_blind_spot(const struct code_scan *scan, char *buf, size_t len,
				   const char **tag)
{
	if (scan->exe_own) {
		snprintf(buf, len, "its executable has an allocator of its own (%s)", scan->exe_own);
		*tag = "own allocator";
		return buf;
	}
	if (scan->alias_used) {
		snprintf(buf, len, "it calls %s, its allocator's function under another name",
			 scan->alias_used);
		*tag = "allocator alias";
		return buf;
	}
	if (scan->lib_allocator && !scan->shim) {
		*tag = "no shim loaded";
		return "it did not load the preload shim";
	}
	return NULL;
}

static void check_pending(struct track_session *s, pid_t pid, const struct code_scan *scan)
{
	const char *why, *tag;
	char buf[160];

	if (bpf_track__mode(s->bpf, pid) != MT_MODE_PENDING)
		return;
	why = shim_blind_spot(scan, buf, sizeof(buf), &tag);
	if (why)
		use_bpf(s, pid, tag, "%s", why);
}

/*
 * A static executable whose allocator functions have no symbols (stripped)
 * cannot be probed: its allocations go unseen, which is said, not hidden.
 */
static void check_blind(struct track_session *s, pid_t pid, const struct code_scan *scan)
{
	struct process *p;

	if (scan->allocator || scan->foreign || !backend__static_exe(pid))
		return;
	p = proc_table__get(&s->procs, pid);
	warning("pid %d (%s, %s) is a static executable without allocator symbols "
		"(stripped): its allocations are not seen", pid, comm_of(s, pid),
		p && p->exe[0] ? p->exe : "?");
	s->blind++;
}

/*
 * Allocator code that a static program maps by itself is not probed: an
 * emulator's guest (valgrind reads the code it runs, and would run the
 * probes' breakpoints) or, rarely, a library it loads itself.  Said once
 * per executable.
 */
static void check_guest(struct track_session *s, pid_t pid, const struct code_scan *scan)
{
	struct process *p;

	if (!scan->guest[0])
		return;
	p = proc_table__get(&s->procs, pid);
	if (warned_before(s, p && p->exe[0] ? p->exe : comm_of(s, pid), "guest"))
		return;
	warning("pid %d (%s), a static executable, maps allocator code of its own (%s): "
		"not probed, the allocations made there are not seen (an emulator's guest, "
		"as valgrind runs one, is the emulator's business)", pid, comm_of(s, pid),
		scan->guest);
}

/*
 * A tracked process exec'd or mapped code not seen before: choose its
 * backend, probe what needs it, note its mappings for the resolver (it may
 * be gone when its stacks are), resume it.
 */
static void attach_new_code(struct track_session *s, const struct mt_proc_event *e)
{
	struct code_scan scan;

	if (e->reason == MT_NEW_CODE_EXEC) {
		s->held_exec++;
		choose_backend(s, e->pid);
	} else if (e->reason == MT_NEW_CODE_MMAP) {
		s->held_mmap++;
	}
	if (!bpf_track__mode(s->bpf, e->pid)) {
		bpf_track__resume_attached(s->bpf, e->pid);	/* no longer ours */
		stop_mirror__resumed(s->mirror, e->pid, e->ts, now_ns());
		return;
	}
	probe_process(s, e->pid, &scan);
	check_pending(s, e->pid, &scan);
	check_guest(s, e->pid, &scan);
	if (e->reason == MT_NEW_CODE_EXEC)
		check_blind(s, e->pid, &scan);
	if (s->sym && e->reason == MT_NEW_CODE_EXEC)
		symbolizer__exec(s->sym, e->pid);
	else if (s->sym && e->reason == MT_NEW_CODE_MMAP)
		symbolizer__snapshot(s->sym, e->pid);
	bpf_track__resume_attached(s->bpf, e->pid);
	stop_mirror__resumed(s->mirror, e->pid, e->ts, now_ns());
}

/* a shim says hello: its process takes the shim, unless it cannot serve it */
static bool on_shim_hello(void *ctx, pid_t pid, uint32_t flags)
{
	struct track_session *s = ctx;
	struct merge_proc *mp;
	struct code_scan scan;
	int mode = bpf_track__mode(s->bpf, pid);

	if (mode != MT_MODE_PENDING && mode != MT_MODE_PRELOAD)
		return false;	/* BPF traces it, or not ours at all */
	if (mode == MT_MODE_PENDING) {
		const char *why = NULL, *tag = NULL;
		char buf[160];

		if (flags & SHIM_SHADOWED) {
			why = "a library preloaded before the shim defines the allocator functions";
			tag = "preloaded allocator";
		} else if (flags & SHIM_NO_NEXT) {
			why = "the shim finds no malloc and free to call";
			tag = "no libc malloc";
		} else if (!bpf_track__inspect_process(s->bpf, pid, LINK_NONE, &scan)) {
			why = shim_blind_spot(&scan, buf, sizeof(buf), &tag);
		}
		if (why) {
			use_bpf(s, pid, tag, "%s", why);
			return false;
		}
	}
	mp = merger__proc(s->merger, pid);
	if (!mp)
		return false;
	merger__ref(mp);
	set_mode(s, pid, MT_MODE_PRELOAD);
	return true;
}

/* a ring of a process whose hello was accepted: it may have exited since, its events stand */
static bool on_shim_ring(void *ctx, pid_t pid, struct shim_ring *r)
{
	struct track_session *s = ctx;
	struct merge_proc *mp;

	mp = merger__proc(s->merger, pid);
	return mp && !merger__add_ring(s->merger, mp, r);
}

static void on_shim_closed(void *ctx, pid_t pid)
{
	struct track_session *s = ctx;
	struct merge_proc *mp = merger__proc(s->merger, pid);

	if (mp)
		merger__unref(s->merger, mp);
}

/* the thread's calls go unrecorded: the run cannot be exact */
static void on_shim_no_ring(void *ctx, pid_t pid, uint32_t tid, int err)
{
	struct track_session *s = ctx;

	warning("thread %u of pid %d (%s) could not make its preload shim ring (%s): "
		"its allocations are not tracked", tid, pid, comm_of(s, pid), strerror(err));
	s->ringless++;
}

static void on_merged_event(void *ctx, const struct mt_alloc_event *e)
{
	struct track_session *s = ctx;

	encoder__add(s->enc, e);	/* a write error is reported at the end */
}

static uint64_t on_shim_stack(void *ctx, int32_t pid, const uint64_t *ips, uint32_t nr)
{
	struct track_session *s = ctx;
	unsigned int skip;

	if (!s->stack_ids)
		return 0;
	skip = bpf_track__wrapper_frames(s->bpf, pid, ips, nr);
	return stack_ids__intern(s->stack_ids, pid, ips + skip, nr - skip);
}

/* a process whose ring broke the rules is no longer tracked; memtrack runs on */
static void on_corrupt_ring(void *ctx, int32_t pid, int32_t tid, const char *why)
{
	struct track_session *s = ctx;

	warning("the preload shim's ring of pid %d (%s), thread %d, is corrupt: %s; "
		"its allocations from now on are not tracked", pid, comm_of(s, pid), tid, why);
	s->corrupt++;
	shim_host__drop(s->host, pid);
}

static void on_producer_waited(void *ctx, int32_t pid, uint64_t since)
{
	struct heap_waits *w = &((struct track_session *)ctx)->waits;
	size_t i;

	for (i = 0; i < w->n; i++) {
		if (w->pids[i].pid == (uint32_t)pid) {
			if (since < w->pids[i].stopped_at)
				w->pids[i].stopped_at = since;
			return;
		}
	}
	if (grow_array((void **)&w->pids, &w->cap, w->n + 1, sizeof(*w->pids)))
		return;
	w->pids[w->n++] = (struct stopped_pid){ .pid = pid, .stopped_at = since };
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

/* where a process's wrappers are: its parent's at fork, none after exec */
static void follow_wrappers(struct track_session *s, const struct mt_proc_event *e)
{
	if (e->kind == MT_FORK)
		bpf_track__fork_wrappers(s->bpf, e->ppid, e->pid);
	else if (e->kind == MT_EXEC)
		bpf_track__forget_wrappers(s->bpf, e->pid);
}

static int on_event_record(void *ctx, const void *data, uint32_t len)
{
	struct track_session *s = ctx;
	uint32_t kind = *(const uint32_t *)data;

	switch (kind) {
	case MT_MALLOC ... MT_BRK:
		if (len >= sizeof(struct mt_alloc_event) && merger__add_bpf(s->merger, data))
			return -ENOMEM;
		break;
	case MT_NEW_CODE:
		if (len >= sizeof(struct mt_proc_event))
			attach_new_code(s, data);
		break;
	case MT_FORK:
	case MT_EXEC:
	case MT_EXIT:
		if (len < sizeof(struct mt_proc_event))
			break;
		proc_table__apply(&s->procs, data);
		follow_process(s, data);
		follow_wrappers(s, data);
		if (kind == MT_EXIT) {
			merger__exited(s->merger, ((const struct mt_proc_event *)data)->pid);
			bpf_track__unlink_process(s->bpf, ((const struct mt_proc_event *)data)->pid);
		}
		break;
	}
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

/* the stacks poller's: BPF copies no more of tid's stack than up to its outermost frame */
static void learn_stack_end(void *ctx, uint32_t tid, uint64_t end)
{
	bpf_track__set_stack_end(ctx, tid, end + STACK_END_SLACK);
}

static uint64_t take_stack_id(void *arg, uint64_t seq)
{
	return stack_ids__take(arg, seq);
}

/* the shim's rings as one ring `heap` in the stats (DESIGN.md, "Pipeline stats") */
static void write_heap_rows(struct track_session *s, const struct ring_tick *k,
			    const struct merge_stats *after)
{
	struct ring_tick row = *k;
	struct heap_waits *w = &s->waits;

	if (w->n) {
		w->episodes++;
		pstats__pressure(s->stats, "heap", now_ns(), w->pids, w->n);
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

static void start_freeze_watch(struct track_session *s)
{
	int err;

	if (!s->freezer)
		return;
	s->watch.freezer = s->freezer;
	s->watch.stats = s->stats;
	freeze_watch__add(&s->watch, &s->events.ring, freeze_mark(s, MT_RING_EVENTS));
	if (s->resolver)
		freeze_watch__add(&s->watch, &s->stacks.ring, freeze_mark(s, MT_RING_STACKS));
	err = freeze_watch__start(&s->watch);
	if (err)
		die("cannot start the freezer's watch: %s", strerror(-err));
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
	p->on_release = on_pressure_release;
	p->ctx = s;
	err = ring__init(&p->ring, ring_names[ring], bpf_track__ring_fd(s->bpf, ring),
			 opts.ring_size[ring]);
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
static void start_shim_host(struct track_session *s)
{
	struct shim_host_opts ho = {
		.ring_size = opts.heap_ring_size,
		.call_graph = s->call_graph,
	};
	struct shim_host_ops hops = {
		.decide = on_shim_hello,
		.ring = on_shim_ring,
		.closed = on_shim_closed,
		.no_ring = on_shim_no_ring,
		.ctx = s,
	};
	struct merge_ops mops = {
		.emit = on_merged_event,
		.stack = on_shim_stack,
		.corrupt = on_corrupt_ring,
		.waited = on_producer_waited,
		.ctx = s,
	};
	int err;

	s->merger = merger__new(&mops);
	s->mirror = stop_mirror__new(self_stop_of, s);
	if (!s->merger || !s->mirror)
		die("cannot start the merger: out of memory");
	if (s->backend == BACKEND_BPF)
		return;
	err = shim_host__new(&s->host, &ho, &hops);
	if (err)
		die("cannot create the preload shim's socket: %s", strerror(-err));
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
		die("cannot poll the preload shim's socket: %s", strerror(-err));
}

/* the symbolizer, the resolver thread, and with dwarf the unwinding */
static void start_stack_stages(struct track_session *s)
{
	char why[256];
	int cache;

	s->sym = symbolizer__new();
	if (s->sym) {
		cache = dwarf_cache__open_dir(why, sizeof(why));
		if (cache < 0)
			pr_debug("no cache of DWARF answers: %s\n", why);
		symbolizer__set_cache_dir(s->sym, cache);
		s->resolver = resolver__new(s->sym, s->stats);
	}
	if (!s->resolver)
		die("cannot start the resolver: out of memory");
	/* the shim's stacks get their ids here, with fp too */
	s->stack_ids = stack_ids__new(unwind_rule, s->sym, s->resolver);
	if (!s->stack_ids)
		die("cannot start the unwinder: out of memory");
	stack_ids__set_end_fn(s->stack_ids, learn_stack_end, s->bpf);
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
	if (s->stack_ids && s->call_graph == MT_CALL_GRAPH_DWARF) {
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
	start_freeze_watch(s);
	start_backlog_sampler(s);
}

#define FOLLOW_POLL_NS	(20 * NSEC_PER_MSEC)

/*
 * The root is gone: the rest of the tree (orphans, daemons) is followed
 * until its last process exits, as strace -f does, unless asked not to or
 * interrupted; what still runs then is said, in the summary and in Meta.
 */
static void follow_the_rest(struct track_session *s)
{
	struct timespec ts = { .tv_nsec = FOLLOW_POLL_NS };

	while (!opts.stop_with_root && !interrupted && bpf_track__tracked(s->bpf))
		nanosleep(&ts, NULL);
	s->running = bpf_track__tracked(s->bpf);
}

static void run_child(struct track_session *s)
{
	pid_t pid = s->child.pid;
	int err;

	/* until its exec, it runs memtrack's code, which BPF is not to count */
	err = bpf_track__set_mode(s->bpf, pid,
				  s->backend == BACKEND_BPF ? MT_MODE_BPF : MT_MODE_PENDING);
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
	follow_the_rest(s);
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

		/* a running process cannot take the shim */
		err = bpf_track__set_mode(s->bpf, tree[i], MT_MODE_BPF);
		if (p)
			p->mode = MT_MODE_BPF;
		if (!err && p)
			err = proc_tree__describe(tree[i], p);
		if (!err)
			err = bpf_track__inspect_process(s->bpf, tree[i], LINK_ALL, NULL);
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
	follow_the_rest(s);
	s->end_ns = now_ns();
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
	else
		artifact_record__set_exit_code(&run, s->status);
	if (s->running)
		artifact_record__set_running(&run, s->running);
	if (s->blind)
		artifact_record__set_blind(&run, s->blind);
	artifact__pack_meta(pk, &run);
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
	merger__stats(s->merger, &st);
	s->event_lost = st.lost;
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

/* -v: how much DWARF the frames took, and how much of it earlier runs had kept */
static void print_symbolizer_stats(struct track_session *s)
{
	struct symbolizer_stats st;

	if (!s->sym || verbose < 1)
		return;
	symbolizer__stats(s->sym, &st);
	fprintf(stderr, "memtrack track: symbols of %" PRIu64 " files, the DWARF of %" PRIu64
		" read, %" PRIu64 " answered from the cache (%" PRIu64 " addresses)\n",
		st.loaded, st.dwarf_opened, st.dwarf_cached, st.cache_addrs);
}

/* -v: what the tracked tree paid in the BPF path (nothing outside it does) */
static void print_probe_runs(struct track_session *s)
{
	if (verbose < 1)
		return;
	fprintf(stderr, "memtrack track: the allocator probes ran %" PRIu64 " times at entry, "
		"%" PRIu64 " at return\n", s->probe_runs[MT_PROBE_ENTRY],
		s->probe_runs[MT_PROBE_RETURN]);
	fprintf(stderr, "memtrack track: back-pressure froze the tree %" PRIu64 " times, "
		"stopped a process %" PRIu64 " times (SIGSTOP)\n",
		atomic_load(&s->watch.freezes), *bpf_track__pressure_stops(s->bpf));
	fprintf(stderr, "memtrack track: held processes for their new code %" PRIu64
		" times at exec, %" PRIu64 " at a code mapping\n", s->held_exec, s->held_mmap);
}

/* processes traced through the preload shim (or that would have been, had they allocated) */
static size_t preload_processes(const struct proc_table *pt)
{
	size_t i, n = 0;

	for (i = 0; i < pt->count; i++)
		n += pt->procs[i].mode && pt->procs[i].mode != MT_MODE_BPF;
	return n;
}

/* "2 preload, 3 bpf: 2 static, 1 own allocator": how many each backend traced, and why BPF */
static void describe_backends(const struct proc_table *pt, char *buf, size_t len)
{
	const char *whys[16];
	size_t counts[16], n = 0, nbpf = 0, i, j;
	int at;

	for (i = 0; i < pt->count; i++) {
		const char *why = pt->procs[i].bpf_why ? pt->procs[i].bpf_why : "other";

		if (pt->procs[i].mode != MT_MODE_BPF)
			continue;
		nbpf++;
		for (j = 0; j < n && strcmp(whys[j], why); j++)
			;
		if (j == n && n < ARRAY_SIZE(whys)) {
			whys[n] = why;
			counts[n++] = 0;
		}
		if (j < n)
			counts[j]++;
	}
	at = snprintf(buf, len, "%zu preload", preload_processes(pt));
	if (nbpf)
		at += snprintf(buf + at, len - at, ", %zu bpf", nbpf);
	for (j = 0; j < n && at > 0 && (size_t)at < len; j++)
		at += snprintf(buf + at, len - at, "%s%zu %s", j ? ", " : ": ", counts[j], whys[j]);
}

static void print_summary(struct track_session *s)
{
	unsigned int unprobed = bpf_track__probe_failures(s->bpf);
	char size[32], stacks[64] = "", running[64] = "", blind[64] = "", path[PATH_MAX];
	char backends[256];
	uint64_t episodes;

	print_unwind_stats(s);
	print_symbolizer_stats(s);
	print_probe_runs(s);
	if (opts.quiet)
		return;
	quote_term_escape(path, sizeof(path), s->artifact_path);
	if (s->resolver)
		snprintf(stacks, sizeof(stacks), ", %lu stack%s of %lu frame%s",
			 resolver__stacks(s->resolver), resolver__stacks(s->resolver) == 1 ? "" : "s",
			 resolver__frames(s->resolver), resolver__frames(s->resolver) == 1 ? "" : "s");
	if (s->running)
		snprintf(running, sizeof(running), ", %u STILL RUNNING, NOT FOLLOWED", s->running);
	if (s->blind)
		snprintf(blind, sizeof(blind), ", %u PROCESS%s NOT SEEN (static, stripped)",
			 s->blind, s->blind == 1 ? "" : "ES");
	else if (s->untraceable)
		snprintf(blind, sizeof(blind), ", %u SETUID PROCESS%s NOT TRACKED (sudo)",
			 s->untraceable, s->untraceable == 1 ? "" : "ES");
	episodes = s->events.episodes + s->stacks.episodes + s->waits.episodes +
		   atomic_load(&s->watch.episodes);
	describe_backends(&s->procs, backends, sizeof(backends));
	fprintf(stderr, "[ memtrack track: %lu events, %lu process%s (%s)%s, '%s' (%s), "
		"%lu drops, %lu pressure episode%s%s%s%s%s%s ]\n",
		encoder__events_in(s->enc), s->procs.count, s->procs.count == 1 ? "" : "es",
		backends, stacks,
		path, human_bytes(encoder__bytes_written(s->enc), size, sizeof(size)),
		s->event_drops + s->stack_drops + s->event_lost,
		episodes, episodes == 1 ? "" : "s",
		unprobed ? ", SOME ALLOCATORS NOT PROBED (see above)" : "",
		s->corrupt ? ", CORRUPT RINGS (see above)" : "",
		s->ringless ? ", THREADS WITHOUT A RING (see above)" : "",
		running, blind);
}

static int exit_status(const struct track_session *s, int err)
{
	if (err)
		return MEMTRACK_EXIT_FATAL;
	if (s->refused) {
		error("%u processes could not take the preload shim (--backend preload)",
		      s->refused);
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->ringless && !opts.tolerate_drops) {
		error("%u thread%s could not make a preload shim ring: the artifact is "
		      "incomplete", s->ringless, s->ringless == 1 ? "" : "s");
		return MEMTRACK_EXIT_FATAL;
	}
	if (s->event_lost && !opts.tolerate_drops) {
		error("%lu bytes of events in corrupt rings were lost: the artifact is incomplete",
		      s->event_lost);
		return MEMTRACK_EXIT_FATAL;
	}
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
	int err;

	load_bpf(&s);
	err = bpf_track__check_probes(s.bpf);
	if (err)
		die("cannot probe the allocator functions of libc %s: %s", s.libc_path,
		    strerror(-err));
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

/* the mode, and for dwarf the bytes of stack to copy in *copy_size; -1 for a mode that does not exist */
static int parse_call_graph(const char *mode, unsigned int *copy_size)
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
		*copy_size = size;
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

/* --backend, else MEMTRACK_BACKEND, else auto */
static int parse_backend(struct track_session *s)
{
	const char *name = opts.backend ? opts.backend : getenv("MEMTRACK_BACKEND");
	int b = backend__parse(name && *name ? name : "auto");

	if (b < 0)
		return error("--backend expects auto, preload or bpf, not '%s'", name);
	s->backend = b;
	return 0;
}

/* values the option table cannot check: each a usage error */
static int validate_options(struct track_session *s)
{
	int mode = parse_call_graph(opts.call_graph, &opts.stack_copy_size);

	if (mode < 0 || parse_backend(s))
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
			     "zstd level of the artifact, 1 to 19 (default: 1)"),
		OPT_STRING('p', "pid", &opts.attach_pids, "pid[,pid...]",
			   "track these running processes and their descendants"),
		OPT_STRING(0, "call-graph", &opts.call_graph, "mode",
			   "call stacks: dwarf[,<size>] (default), fp or no"),
		OPT_STRING(0, "backend", &opts.backend, "how",
			   "auto (default: preload shim, else BPF), preload or bpf"),
		OPT_BOOLEAN(0, "tolerate-drops", &opts.tolerate_drops,
			    "exit with the command's status even if events were dropped"),
		OPT_BOOLEAN(0, "stop-with-root", &opts.stop_with_root,
			    "stop when the root exits, not when the whole tree has"),
		OPT_BOOLEAN(0, "no-freezer", &opts.no_freezer,
			    "pause producers with SIGSTOP only, not the tree's cgroup freezer"),
		OPT_BOOLEAN('q', "quiet", &opts.quiet, "no summary line at the end"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose (libbpf's log with -vv)"),
		OPT_BOOLEAN(0, "check-bpf", &opts.check_bpf,
			    "check that the BPF programs load here, and exit"),
		OPT_END()
	};
	struct track_session s = {
		.out_dirfd = -1, .artifact_fd = -1, .guardian_fd = -1,
		.watch = { .epoll_fd = -1, .wake_fd = -1 },
	};
	const char *shell_argv[] = { "/bin/sh", "-c", NULL, NULL };
	const char **cmd_argv;
	char lacks[512];
	int err;

	argc = parse_options(argc, argv, options, track_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_KEEP_DASHDASH);
	if (validate_options(&s))
		usage_with_options(track_usage, options);
	if (kernel_check__track(lacks, sizeof(lacks)))
		die("this kernel lacks what memtrack track needs: %s", lacks);
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
		if (s.backend == BACKEND_PRELOAD) {
			error("-p cannot go with --backend preload: a running process cannot "
			      "take the shim");
			usage_with_options(track_usage, options);
		}
		check_attach_targets(&s);
		argc = 1;
		argv = &opts.attach_pids;
	} else if (argc < 1 || !*argv[0]) {
		error("no command given");
		usage_with_options(track_usage, options);
	}
	s.command = s.attach ? proc_tree__cmdline(s.attach[0]) : NULL;
	if (!s.command)
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
	prepare_backend(&s);
	setup_freezer(&s);
	load_bpf(&s);
	proc_table__init(&s.procs);

	err = pressure__start_guardian(bpf_track__pressure_fd(s.bpf));
	if (err < 0)
		die("cannot start the guardian process: %s", strerror(-err));
	s.guardian_fd = err;
	start_shim_host(&s);
	if (s.attach) {
		s.root_pid = s.attach[0];
	} else {
		s.child.cgroup_fd = s.freezer ? freezer__cgroup_fd(s.freezer) : -1;
		err = spawn__fork(&s.child, cmd_argv, &s.run_as);
		if (err)
			die("cannot fork: %s", strerror(-err));
		s.root_pid = s.child.pid;
		join_freezer(&s);
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
	if (!opts.quiet)
		s.status_line = status_line__start(STDERR_FILENO, status_figures, &s);
	if (s.attach)
		run_attached(&s);
	else
		run_child(&s);
	status_line__stop(s.status_line);
	err = finish_pipeline(&s);
	print_summary(&s);

	bpf_track__close(s.bpf);
	close(s.guardian_fd);
	encoder__delete(s.enc);
	merger__delete(s.merger);
	stop_mirror__delete(s.mirror);
	free(s.waits.pids);
	stack_ids__delete(s.stack_ids);
	resolver__delete(s.resolver);
	symbolizer__delete(s.sym);
	proc_table__exit(&s.procs);
	while (s.nwarned)
		free(s.warned[--s.nwarned]);
	free(s.warned);
	free(s.command);
	free(s.attach);
	return exit_status(&s, err);
}
