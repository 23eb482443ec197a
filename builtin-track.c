// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack track: run a command and trace every heap allocation of its
 * process tree.  This file reads the command line; the run itself is a
 * track session (util/track/session.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "util/parse-options.h"
#include "util/probe/backend.h"
#include "util/probe/kernel-check.h"
#include "util/probe/proc-tree.h"
#include "util/track/session.h"
#include "util/track/shim-ring.h"
#include "util/usage.h"
#include "util/util.h"

/*
 * The kernel makes every page of a ring when memtrack starts, in every
 * run's fixed cost: 2M holds 32,768 events, and 2M of stacks 32 copies of
 * 64K, the BPF processes' own room when the shim serves the rest
 * (design.md, "Rings").
 */
#define DEFAULT_EVENTS_RING	(2ULL << 20)
#define BPF_EVENTS_RING		(8ULL << 20)
#define DEFAULT_STACKS_RING	(2ULL << 20)
#define BPF_STACKS_RING		(8ULL << 20)
#define DEFAULT_HEAP_RING	(1ULL << 20)
/* util/symbol/unwind.c unwinds x86-64 stacks; elsewhere frame pointers are what there is */
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

static struct track_opts opts = {
	.output_dir = ".",
	/* .ring_size: by the backend */
	.heap_ring_size = DEFAULT_HEAP_RING,
	.poll_ms = 1,
	.watermark_pct = 75,
	.compression_level = 1,
	.call_graph = DEFAULT_CALL_GRAPH,
	.shared_probes = 16,
};

static int ring_by_name(const char *name, size_t len)
{
	int i;

	for (i = 0; i < MT_RING_MAX; i++)
		if (strlen(track_ring_names[i]) == len && !strncmp(track_ring_names[i], name, len))
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
 * the watermark, room for the ones of producers not stopped yet.  0 when
 * no copy goes there.
 */
static uint64_t stacks_ring_min(const struct track_session *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t record = BPF_RINGBUF_HDR_SZ + sizeof(struct mt_raw_stack) + opts.stack_copy_size;
	uint64_t copies = 2 + (cpus > 2 ? cpus : 2);	/* one in flight per CPU, and some */
	uint64_t need = copies * record * 100 / (100 - opts.watermark_pct), min = 4096;

	if (s->call_graph != MT_CALL_GRAPH_DWARF)
		return 0;
	while (min < need)
		min *= 2;
	return min;
}

static int check_stacks_ring(const struct track_session *s)
{
	uint64_t min = stacks_ring_min(s);

	if (opts.ring_size[MT_RING_STACKS] < min)
		return error("--ring-size stacks=%luK is too small for --call-graph dwarf,%u "
			     "at a %u%% watermark: it needs at least %luK",
			     opts.ring_size[MT_RING_STACKS] >> 10, opts.stack_copy_size,
			     opts.watermark_pct, min >> 10);
	return 0;
}

/* the rings not sized by --ring-size: larger where BPF carries every process */
static void size_rings(const struct track_session *s)
{
	bool bpf_traced = s->backend == BACKEND_BPF || opts.attach_pids;
	uint64_t stacks = bpf_traced ? BPF_STACKS_RING : DEFAULT_STACKS_RING;

	if (!opts.ring_size[MT_RING_EVENTS])
		opts.ring_size[MT_RING_EVENTS] = bpf_traced ? BPF_EVENTS_RING : DEFAULT_EVENTS_RING;
	/* a machine of many CPUs needs more room for the copies in flight */
	if (!opts.ring_size[MT_RING_STACKS])
		opts.ring_size[MT_RING_STACKS] = stacks > stacks_ring_min(s) ? stacks :
						 stacks_ring_min(s);
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
	size_rings(s);
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


/* -p <pids>: the processes to attach to, checked; a usage error returns -1 */
static int parse_attach(struct track_session *s, int argc)
{
	if (argc > 0)
		return error("-p and a command cannot go together");
	s->nattach = parse_pid_list(opts.attach_pids, &s->attach);
	if (s->nattach < 0)
		return error("-p expects a list of process ids, not '%s'", opts.attach_pids);
	if (s->backend == BACKEND_PRELOAD)
		return error("-p cannot go with --backend preload: a running process cannot "
			     "take the shim");
	return 0;
}

static int run_session(struct track_session *s, const char **cmd_argv)
{
	int err;

	s->program = s->attach ? NULL : cmd_argv[0];
	if (track_session__prepare(s, cmd_argv) || track_session__launch(s) ||
	    track_session__start(s) || track_session__run(s))
		return MEMTRACK_EXIT_FATAL;
	err = track_session__finish(s);
	return track_session__exit_status(s, err);
}

int cmd_track(int argc, const char **argv)
{
	struct option options[] = {
		OPT_STRING('o', "output", &opts.output_dir, "dir",
			   "directory for the artifact (default: .), or its file: <name>.msgpack"),
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
		OPT_STRING_OF(0, "call-graph", &opts.call_graph, "mode",
			      "call stacks: dwarf[,<size>] (default), fp or no", "dwarf fp no"),
		OPT_STRING_OF(0, "backend", &opts.backend, "how",
			      "auto (default: preload shim, else BPF), preload or bpf",
			      "auto preload bpf"),
		OPT_BOOLEAN(0, "tolerate-drops", &opts.tolerate_drops,
			    "exit with the command's status even if events were dropped"),
		OPT_BOOLEAN(0, "stop-with-root", &opts.stop_with_root,
			    "stop when the root exits, not when the whole tree has"),
		OPT_UINTEGER(0, "detach-after", &opts.detach_after, "seconds",
			     "stop tracking after this long; the tree runs on"),
		OPT_UINTEGER(0, "shared-probes", &opts.shared_probes, "n",
			     "BPF alone: after n processes, one probe for all (default: 16, 0: never)"),
		OPT_BOOLEAN(0, "no-freezer", &opts.no_freezer,
			    "pause producers with SIGSTOP only, not the tree's cgroup freezer"),
		OPT_BOOLEAN(0, "no-libc-freeres", &opts.no_libc_freeres,
			    "leave glibc's buffers and tables unfreed at exit (the shim's processes)"),
		OPT_BOOLEAN('q', "quiet", &opts.quiet, "no summary line at the end, no shim warnings"),
		OPT_INCR('v', "verbose", &verbose, "be more verbose (libbpf's log with -vv)"),
		OPT_BOOLEAN(0, "check-bpf", &opts.check_bpf,
			    "check that the BPF programs load here, and exit"),
		OPT_END()
	};
	const char *shell_argv[] = { "/bin/sh", "-c", NULL, NULL };
	struct track_session s;
	const char **cmd_argv;
	char lacks[512];
	int status;

	argc = parse_options(argc, argv, options, track_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION | PARSE_OPT_KEEP_DASHDASH);
	track_session__init(&s, &opts);
	if (validate_options(&s))
		usage_with_options(track_usage, options);
	if (kernel_check__track(lacks, sizeof(lacks)))
		die("this kernel lacks what memtrack track needs: %s", lacks);
	if (opts.check_bpf) {
		status = track_session__check_bpf(&s) ? MEMTRACK_EXIT_FATAL : 0;
		track_session__exit(&s);
		return status;
	}
	/* "<command>" runs through /bin/sh -c, "-- <program> <args>" as it is */
	if (argc > 0 && !strcmp(argv[0], "--")) {
		argv++;
		argc--;
		cmd_argv = argv;
	} else if (argc == 1) {
		shell_argv[2] = argv[0];
		cmd_argv = shell_argv;
		s.via_shell = true;
	} else {
		cmd_argv = argv;
	}
	if (opts.attach_pids) {
		if (parse_attach(&s, argc))
			usage_with_options(track_usage, options);
		if (session__check_attach_targets(&s))
			exit(MEMTRACK_EXIT_FATAL);
		argc = 1;
		argv = &opts.attach_pids;
	} else if (argc < 1 || !*argv[0]) {
		error("no command given");
		usage_with_options(track_usage, options);
	}
	s.command = s.attach ? proc_tree__cmdline(s.attach[0]) : NULL;
	if (!s.command)
		s.command = join_args(argc, argv);
	if (!opts.stats_path)
		opts.stats_path = stats_path_from_env();

	status = run_session(&s, cmd_argv);
	track_session__exit(&s);
	return status;
}
