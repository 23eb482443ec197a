// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/memtrack.h"	/* before the skeleton: its rodata holds our types */
#include "bpf/memtrack.skel.h"
#include "util/probe/bpf_grace_warmer.h"
#include "util/probe/bpf_kernel_offsets.h"
#include "util/probe/bpf_load.h"
#include "util/probe/bpf_offsets_cache.h"
#include "util/probe/bpf_track.h"
#include "util/probe/bpf_probes.h"
#include "util/probe/link-closer.h"
#include "util/probe/pressure.h"
#include "util/proc-maps.h"
#include "util/u64-map.h"
#include "util/probe/uprobe-multi.h"
#include "util/usage.h"
#include "util/util.h"

/*
 * A process that has an allocator file's probes: those of the functions
 * foreign to the shim (fds[0..1]), and with BPF the others (fds[2..3]).
 */
struct pid_link {
	pid_t pid;
	struct mt_file_id file;
	int fds[4];
};

#define LINK_FDS	4

/* the functions of a process's code that only wrap the shim's: [lo, hi) */
struct wrapper_range {
	uint64_t lo, hi;
};

struct pid_wrappers {
	pid_t pid;
	struct wrapper_range *r;
	size_t n, cap;
};

/* a file's allocator probes for every process that maps it, once shared */
struct shared_link {
	struct mt_file_id file;
	int fds[2];
};

#define MOVED_TRACEPOINTS	4

struct bpf_track {
	struct memtrack_bpf *skel;	/* the tracepoints' programs, and every map */
	int alloc_prog[2];		/* the allocator probes': entry, return */
	struct bpf_loader loader;	/* theirs may still load (bpf_track__wait_loaded()) */
	struct memtrack_bpf *probes;	/* their instance, until then */
	int probes_err;
	bool traces_all;		/* opts->bpf_traces_all */
	struct bpf_link *moved_links[MOVED_TRACEPOINTS];	/* the second instance's */
	struct shared_link shared[MT_SHARED_MAX];
	unsigned int nshared, share_after;
	struct u64_map fork_counted;	/* forks counted toward sharing at their fork */
	bool quiet;
	struct probe_files files;	/* every file of code looked at, and its probes */
	struct pid_link *plinks;
	size_t nplinks, plinks_cap;
	struct pid_wrappers *wraps;	/* kept after exit: the shim's stacks come later */
	size_t nwraps, wraps_cap;
	struct u64_map wraps_index;	/* pid -> wraps[] */
	struct link_closer *closer;
	struct grace_warmer warmer;
	struct mt_file_id shim;		/* the preload shim: never probed */
	unsigned int probe_failures;
	int last_probe_error;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level != LIBBPF_DEBUG && verbose < 1)
		return 0;	/* our own message says what failed */
	return vfprintf(stderr, fmt, ap);
}

/*
 * In a pid namespace, the probes find its level and address from memtrack's
 * own task; then they must see memtrack as it sees itself.  -ESRCH if not.
 */
static int learn_pid_namespace(struct bpf_track *t)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	__u64 want = (__u64)getpid() << 32 | (__u32)gettid();
	int err = bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.learn_pidns), &run);

	if (err)
		return -errno;
	pr_debug("pid namespace at level %u: BPF sees memtrack as %llu/%llu, it is %d/%d\n",
		 t->skel->bss->pidns_level,
		 (unsigned long long)(t->skel->bss->self_pid_tgid >> 32),
		 (unsigned long long)(__u32)t->skel->bss->self_pid_tgid, getpid(), gettid());
	return t->skel->bss->self_pid_tgid == want ? 0 : -ESRCH;
}

/*
 * Tracepoints verified on the loader's thread, before the allocator probes:
 * main's program (sys_exit) takes 1.4 ms to check, these 1.5, the probes'
 * 1.5, which may go on loading while the command is started.
 */
static void moved_tracepoints(struct memtrack_bpf *skel,
			      struct bpf_program *progs[MOVED_TRACEPOINTS])
{
	progs[0] = skel->progs.process_fork;
	progs[1] = skel->progs.process_exit;
	progs[2] = skel->progs.signal_generate;
	progs[3] = skel->progs.process_exec;
}

static void load_only(struct memtrack_bpf *skel, struct bpf_program *const *progs, unsigned int n)
{
	struct bpf_program *prog;
	unsigned int i;

	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	for (i = 0; i < n; i++)
		bpf_program__set_autoload(progs[i], true);
}

/*
 * The allocator probes' programs in probes, the moved tracepoints in
 * moved, every other in main
 */
static void split_programs(struct memtrack_bpf *main, struct memtrack_bpf *moved,
			   struct memtrack_bpf *probes)
{
	struct bpf_program *moved_progs[MOVED_TRACEPOINTS];
	struct bpf_program *alloc_progs[] = { probes->progs.alloc_enter, probes->progs.alloc_exit };
	unsigned int i;

	bpf_program__set_autoload(main->progs.alloc_enter, false);
	bpf_program__set_autoload(main->progs.alloc_exit, false);
	moved_tracepoints(main, moved_progs);
	for (i = 0; i < MOVED_TRACEPOINTS; i++)
		bpf_program__set_autoload(moved_progs[i], false);
	moved_tracepoints(moved, moved_progs);
	load_only(moved, moved_progs, MOVED_TRACEPOINTS);
	load_only(probes, alloc_progs, ARRAY_SIZE(alloc_progs));
	bpf_program__set_expected_attach_type(probes->progs.alloc_enter,
					      UPROBE_MULTI_ATTACH_TYPE);
	bpf_program__set_expected_attach_type(probes->progs.alloc_exit,
					      UPROBE_MULTI_ATTACH_TYPE);
}

/*
 * Where the shim serves the tree, the few BPF processes' threads (calls,
 * stack_ends) and linked files (pid_files) have 16K entries, not 64K: the
 * kernel allocates and charges a hash map's buckets at every start, 1 MiB
 * for 64K.  A thread past them loses its calls, counted as drops.
 */
#define MT_BPF_THREADS_BESIDE_SHIM	16384

static void size_maps(struct memtrack_bpf *skel, const struct bpf_track_opts *opts)
{
	bpf_map__set_max_entries(skel->maps.events, opts->ring_size[MT_RING_EVENTS]);
	bpf_map__set_max_entries(skel->maps.stacks, opts->ring_size[MT_RING_STACKS]);
	/* a raw copy's scratch per CPU, allocated whole at load: only with dwarf */
	bpf_map__set_max_entries(skel->maps.raw_scratch,
				 opts->call_graph == MT_CALL_GRAPH_DWARF ?
				 libbpf_num_possible_cpus() : 1);
	/*
	 * only fp dedupes stacks in BPF, only dwarf copies them to where they
	 * end: a map's buckets are allocated at load, 2.5 ms for 64K of them
	 */
	if (opts->call_graph != MT_CALL_GRAPH_FP)
		bpf_map__set_max_entries(skel->maps.stack_ids, 1);
	if (opts->call_graph != MT_CALL_GRAPH_DWARF)
		bpf_map__set_max_entries(skel->maps.stack_ends, 1);
	else if (!opts->bpf_traces_all)
		bpf_map__set_max_entries(skel->maps.stack_ends, MT_BPF_THREADS_BESIDE_SHIM);
	/* the threads and processes of BPF's own: few when the shim serves the rest */
	if (!opts->bpf_traces_all) {
		bpf_map__set_max_entries(skel->maps.calls, MT_BPF_THREADS_BESIDE_SHIM);
		bpf_map__set_max_entries(skel->maps.pid_files, MT_BPF_THREADS_BESIDE_SHIM);
	}
}

static void set_rodata(struct memtrack_bpf *skel, const struct bpf_track_opts *opts)
{
	skel->rodata->events_watermark =
		opts->ring_size[MT_RING_EVENTS] * opts->watermark_pct / 100;
	skel->rodata->stacks_watermark =
		opts->ring_size[MT_RING_STACKS] * opts->watermark_pct / 100;
	skel->rodata->events_freeze_mark = opts->freeze_mark[MT_RING_EVENTS];
	skel->rodata->stacks_freeze_mark = opts->freeze_mark[MT_RING_STACKS];
	skel->rodata->call_graph = opts->call_graph;
	if (opts->stack_copy_size)
		skel->rodata->stack_copy_size = opts->stack_copy_size;
	skel->rodata->discover_allocators = true;
	skel->rodata->decide_at_exec = opts->decide_at_exec;
	skel->rodata->shim_file = opts->shim_file;
	skel->rodata->pidns_dev = opts->pidns_dev;
	skel->rodata->pidns_ino = opts->pidns_ino;
}

/* of the moved tracepoints' instance, the links alone */
static int attach_moved(struct bpf_track *t, struct memtrack_bpf *moved)
{
	struct bpf_program *progs[MOVED_TRACEPOINTS];
	unsigned int i;

	/* they see nothing until the tree's first process is tracked */
	moved_tracepoints(moved, progs);
	for (i = 0; i < MOVED_TRACEPOINTS; i++)
		if (!(t->moved_links[i] = bpf_program__attach(progs[i])))
			return -errno;
	return 0;
}

/*
 * The instances whose programs alone are kept (their links, their fds):
 * each map of an instance is another descriptor (twenty more made the
 * shim's connection fail under ulimit -n 100).
 */
static int open_instances(struct memtrack_bpf **moved, struct memtrack_bpf **probes)
{
	*moved = memtrack_bpf__open();
	*probes = *moved ? memtrack_bpf__open() : NULL;
	return *probes ? 0 : -errno;
}

/*
 * Where the shim serves the command, its first links come at its hello,
 * after ld.so has mapped its libraries: the probes load on the second CPU
 * as it starts (bpf_track__command_starts()), not before it may.  Loaded
 * first, they delayed a python3.13's exec by 1.3 ms.
 */
static bool probes_after_start(const struct bpf_track *t)
{
	return grace_warmer__guesses(&t->warmer);
}

/*
 * Whether the loader's thread loads the allocator probes' programs now
 * (1.5 ms of CPU), or leaves them to their first use: now where BPF traces
 * every process, or where the command looks like one that links probes as
 * it starts; else few runs ever link any (a tree's first static program
 * waits for them then).
 */
static bool probes_wanted_now(void *arg)
{
	struct bpf_track *t = arg;
	bool now = t->traces_all || grace_warmer__links_soon(&t->warmer);

	if (now && probes_after_start(t))
		pr_debug("the allocator probes load as the command starts\n");
	return now;
}

void bpf_track__command_starts(struct bpf_track *t)
{
	if (t->probes)
		bpf_loader__open_gate(&t->loader);
}

/*
 * Three instances of the object (bpf_load.c): the tracepoints' programs in
 * t->skel, loaded here, a few tracepoints' in a second and the allocator
 * probes' in a third, loaded on a thread in turn; the probes' may still
 * load when this returns.
 */
static int open_and_load(struct bpf_track *t, const struct bpf_track_opts *opts)
{
	struct memtrack_bpf *skel = t->skel, *moved = NULL, *probes = NULL;
	struct map_maker maps;
	int err, moved_err;

	size_maps(skel, opts);
	err = map_maker__start(&maps, skel->obj);
	/* the other instances and the kernel's offsets while the maps are made */
	if (!err)
		err = open_instances(&moved, &probes);
	if (!err)
		err = kernel_offsets__read_cached((struct mt_kernel_offsets *)&skel->rodata->koff);
	if (!err) {
		set_rodata(skel, opts);
		bpf_program__set_autoattach(skel->progs.learn_pidns, false);
		bpf_program__set_autoload(skel->progs.learn_pidns, opts->pidns_ino != 0);
		split_programs(skel, moved, probes);
		err = map_maker__finish(&maps, skel->obj,
					(struct bpf_object *[]){ moved->obj, probes->obj }, 2);
	}
	map_maker__exit(&maps);
	if (!err) {
		bpf_loader__start(&t->loader, &(struct bpf_loader_job){
			.b = moved->skeleton, .c = probes->skeleton,
			.c_now = probes_wanted_now, .arg = t,
			.c_gated = probes_after_start(t) });
		t->probes = probes;
		probes = NULL;
		err = bpf_object__load_skeleton(skel->skeleton);
		/* moved is the thread's until then, whatever happened here */
		moved_err = bpf_loader__wait(&t->loader, 1);
		err = err ? err : moved_err;
	}
	if (!err)
		err = attach_moved(t, moved);
	memtrack_bpf__destroy(moved);
	memtrack_bpf__destroy(probes);
	return err;
}

/* the probes' programs loaded (now, if the loader left them), or why not (once) */
static int take_probes(struct bpf_track *t)
{
	int err;

	if (!t->probes)
		return t->probes_err;
	err = bpf_loader__wait(&t->loader, 2);
	bpf_loader__exit(&t->loader);
	if (!err) {
		t->alloc_prog[0] = fcntl(bpf_program__fd(t->probes->progs.alloc_enter),
					 F_DUPFD_CLOEXEC, 0);
		t->alloc_prog[1] = fcntl(bpf_program__fd(t->probes->progs.alloc_exit),
					 F_DUPFD_CLOEXEC, 0);
		if (t->alloc_prog[0] < 0 || t->alloc_prog[1] < 0)
			err = -errno;
	}
	memtrack_bpf__destroy(t->probes);
	t->probes = NULL;
	t->probes_err = err;
	return err;
}

int bpf_track__wait_loaded(struct bpf_track *t)
{
	/* after the start, a failure is said at their first use */
	if (!t->probes || probes_after_start(t))
		return t->probes_err;
	return bpf_loader__finish(&t->loader);
}

/* the probes left unloaded, never needed: the loader's thread joined, their instance gone */
static void drop_probes(struct bpf_track *t)
{
	if (!t->probes)
		return;
	bpf_loader__exit(&t->loader);
	memtrack_bpf__destroy(t->probes);
	t->probes = NULL;
}

int bpf_track__open(struct bpf_track **out, const struct bpf_track_opts *opts)
{
	struct bpf_track *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	libbpf_set_print(libbpf_print);
	t->alloc_prog[0] = t->alloc_prog[1] = -1;
	t->traces_all = opts->bpf_traces_all;
	if (opts->bpf_traces_all || opts->program)
		grace_warmer__start(&t->warmer, opts->bpf_traces_all ? NULL : opts->program);
	t->skel = memtrack_bpf__open();
	if (!t->skel) {
		err = -errno;
		goto fail;
	}
	t->shim = opts->shim_file;
	t->share_after = opts->share_after;
	t->quiet = opts->quiet;
	t->closer = link_closer__new();
	if (!t->closer) {
		err = -ENOMEM;
		goto fail;
	}
	err = open_and_load(t, opts);
	if (!err && opts->pidns_ino)
		err = learn_pid_namespace(t);
	if (err)
		goto fail;
	err = memtrack_bpf__attach(t->skel);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	bpf_track__close(t);
	return err < 0 ? err : -EINVAL;
}

/* the kernel's dev_t, as BPF reads it from a superblock */
static __u64 kernel_dev(unsigned int maj, unsigned int min)
{
	return ((__u64)maj << 20) | min;
}

static bool same_file(const struct mt_file_id *a, const struct mt_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/* BPF stops a process that maps a file not looked at yet */
static int tell_bpf_kind(struct bpf_track *t, const struct probe_file *f)
{
	__u8 kind = f->kind;

	if (bpf_map__update_elem(t->skel->maps.inspected, &f->id, sizeof(f->id), &kind,
				 sizeof(kind), BPF_ANY))
		return -errno;
	return 0;
}

static struct pid_link *find_link(struct bpf_track *t, pid_t pid, const struct mt_file_id *id)
{
	size_t i;

	for (i = 0; i < t->nplinks; i++)
		if (t->plinks[i].pid == pid && same_file(&t->plinks[i].file, id))
			return &t->plinks[i];
	return NULL;
}

/*
 * BPF's view of pid's links: which files, and that it has some (its forks
 * need theirs); probes of functions the shim does not interpose are
 * probes a fork's shim cannot wait for.
 */
static int tell_bpf_linked(struct bpf_track *t, pid_t pid, const struct mt_file_id *id,
			   bool foreign)
{
	struct mt_pid_file key = { .tgid = pid, .dev = id->dev, .ino = id->ino };
	__u32 tgid = pid;
	__u8 one = 1, mode;

	if (bpf_map__update_elem(t->skel->maps.pid_files, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	if (bpf_map__lookup_elem(t->skel->maps.tracked, &tgid, sizeof(tgid), &mode,
				 sizeof(mode), 0))
		return 0;
	mode |= MT_MODE_LINKED;
	if (foreign)
		mode &= ~MT_MODE_SHIM_WAITS;
	bpf_map__update_elem(t->skel->maps.tracked, &tgid, sizeof(tgid), &mode, sizeof(mode),
			     BPF_ANY);
	return 0;
}

static int link_set(struct bpf_track *t, pid_t pid, const struct probe_set *set,
		    const char *path, int *fds)
{
	int err;

	if (!set->nentry)
		return 0;
	err = take_probes(t);
	return err ? err : probe_set__link(set, t->alloc_prog[0], t->alloc_prog[1], path, pid, fds);
}

/*
 * Whether f's probes are to be shared now: every link of its own
 * costs a grace period of the kernel's uprobe lock on the path of every
 * fork, and a consumer every call of every process with one walks, so a
 * tree of many processes shares them; so does one where a hold for links
 * was ended by another's SIGCONT (a parent that continues what it sees
 * stopped wins that race every time).  A file with foreign functions is
 * never shared (the shim's processes would trap in them).
 */
static bool shares_probes(struct bpf_track *t, const struct probe_file *f)
{
	return t->share_after && !f->shared && f->kind == MT_FILE_ALLOCATOR &&
	       t->nshared < MT_SHARED_MAX &&
	       (f->own_links >= t->share_after || bpf_track__holds_ended_early(t));
}

static int tell_bpf_shared(struct bpf_track *t, const struct mt_file_id *id, __u32 slot)
{
	if (bpf_map__update_elem(t->skel->maps.shared_slots, id, sizeof(*id), &slot,
				 sizeof(slot), BPF_ANY))
		return -errno;
	return 0;
}

/* a process with links of its own needs a hold at fork only for those not shared */
static bool has_unshared_links(struct bpf_track *t, pid_t pid)
{
	struct probe_file *f;
	size_t i;

	for (i = 0; i < t->nplinks; i++) {
		if (t->plinks[i].pid != pid)
			continue;
		f = probe_files__find(&t->files, &t->plinks[i].file);
		if (!f || !f->shared)
			return true;
	}
	return false;
}

static void set_linked(struct bpf_track *t, pid_t pid, bool linked)
{
	__u32 tgid = pid;
	__u8 mode;

	if (bpf_map__lookup_elem(t->skel->maps.tracked, &tgid, sizeof(tgid), &mode,
				 sizeof(mode), 0))
		return;
	if (!!(mode & MT_MODE_LINKED) == linked)
		return;
	mode = linked ? mode | MT_MODE_LINKED : mode & ~MT_MODE_LINKED;
	bpf_map__update_elem(t->skel->maps.tracked, &tgid, sizeof(tgid), &mode, sizeof(mode),
			     BPF_EXIST);
}

/* the processes whose links are all shared now fork without a hold */
static void unhold_shared_forks(struct bpf_track *t)
{
	size_t i;

	for (i = 0; i < t->nplinks; i++)
		if (!has_unshared_links(t, t->plinks[i].pid))
			set_linked(t, t->plinks[i].pid, false);
}

/* the link pair of f's `seen` probes in every process, their cookies naming the slot */
static int link_shared(struct bpf_track *t, const struct probe_file *f, const char *path,
		       __u32 slot, int fds[2])
{
	struct probe_set set = f->seen;
	uint64_t mark = MT_COOKIE_SHARED | (uint64_t)slot << 8;
	unsigned int i;
	int err;

	set.entry_cookies = calloc(set.nentry + set.nreturn, sizeof(*set.entry_cookies));
	if (!set.entry_cookies)
		return -ENOMEM;
	set.ret_cookies = set.entry_cookies + set.nentry;
	for (i = 0; i < set.nentry; i++)
		set.entry_cookies[i] = f->seen.entry_cookies[i] | mark;
	for (i = 0; i < set.nreturn; i++)
		set.ret_cookies[i] = f->seen.ret_cookies[i] | mark;
	err = take_probes(t);
	if (!err)
		err = probe_set__link(&set, t->alloc_prog[0], t->alloc_prog[1], path, 0, fds);
	free(set.entry_cookies);
	return err;
}

/*
 * f's probes for every BPF process that maps it, from now on: the slot's
 * file first, so that a process with links of its own there never counts
 * a call twice; the file's slot last, so that until the link is there a
 * process that maps it still stops for its probes.
 */
static int share_probes(struct bpf_track *t, struct probe_file *f, const char *path,
			const char *name)
{
	struct shared_link *sl = &t->shared[t->nshared];
	__u32 slot = t->nshared;
	int err;

	sl->file = f->id;
	if (bpf_map__update_elem(t->skel->maps.shared_files, &slot, sizeof(slot), &f->id,
				 sizeof(f->id), BPF_ANY))
		return -errno;
	err = link_shared(t, f, path, slot, sl->fds);
	if (err)
		return err;
	t->nshared++;
	f->shared = true;
	/* without it, a process that maps the file stops for probes it has: slower */
	tell_bpf_shared(t, &f->id, slot);
	unhold_shared_forks(t);
	if (t->quiet)
		pr_debug("the probes of %s are shared\n", name);
	else
		warning("the probes of %s are shared from now on (%u processes had their "
			"own%s): they trap in every process that maps it until memtrack ends "
			"(--shared-probes)", name, f->own_links,
			bpf_track__holds_ended_early(t) ?
			", and a parent continued one held for them" : "");
	return 0;
}

/* a link that cannot be made leaves every process its own, as before: slower, not wrong */
static void try_share_probes(struct bpf_track *t, struct probe_file *f, const char *path,
			     const char *name)
{
	int err = share_probes(t, f, path, name);

	if (!err)
		return;
	pr_debug("cannot share the probes of %s: %s\n", name, strerror(-err));
	t->share_after = 0;
}

/*
 * The foreign functions' probes, and with LINK_ALL the others: a process
 * that goes from the shim to BPF gets the rest, none twice.
 */
static int link_file(struct bpf_track *t, pid_t pid, struct probe_file *f,
		     const char *path, const char *name, enum link_want want)
{
	struct pid_link *l = find_link(t, pid, &f->id), fresh;
	int err, i;

	if (l && (want != LINK_ALL || l->fds[2] >= 0 || !f->seen.nentry))
		return 0;
	if (want == LINK_ALL && !l) {
		if (shares_probes(t, f))
			try_share_probes(t, f, path, name);
		if (f->shared)
			return 0;
	}
	if (!l) {
		for (i = 0; i < LINK_FDS; i++)
			fresh.fds[i] = -1;
		fresh.pid = pid;
		fresh.file = f->id;
		err = link_set(t, pid, &f->foreign, path, fresh.fds);
		if (err)
			return err;
		l = &fresh;
	}
	if (want == LINK_ALL) {
		err = link_set(t, pid, &f->seen, path, l->fds + 2);
		if (err && l == &fresh) {
			for (i = 0; i < 2; i++)
				if (fresh.fds[i] >= 0)
					close(fresh.fds[i]);
		}
		if (err)
			return err;
	}
	pr_debug("probed %u allocator functions of %s in pid %d\n",
		 f->foreign.nentry + (want == LINK_ALL ? f->seen.nentry : 0), name, pid);
	if (l != &fresh)
		return 0;
	if (grow_array((void **)&t->plinks, &t->plinks_cap, t->nplinks + 1, sizeof(*t->plinks))) {
		for (i = 0; i < LINK_FDS; i++)
			if (fresh.fds[i] >= 0)
				close(fresh.fds[i]);
		return -ENOMEM;
	}
	t->plinks[t->nplinks++] = fresh;
	err = tell_bpf_linked(t, pid, &f->id, f->foreign.nentry != 0);
	if (!err && want == LINK_ALL && pid != getpid()) {
		if (!u64_map__find(&t->fork_counted, pid))
			f->own_links++;
		if (shares_probes(t, f))
			try_share_probes(t, f, path, name);
	}
	return err;
}

/* pid's mapping of file id, named for a link: its map_files path, and its path */
static int mapping_of(pid_t pid, const struct mt_file_id *id, char *path, size_t len,
		      char *name, size_t name_len)
{
	struct proc_maps maps;
	struct proc_map m;
	int err = -ENOENT;

	if (proc_maps__open(&maps, pid))
		return err;
	while (proc_maps__next(&maps, &m) > 0) {
		if (!proc_map__exec(&m) || m.ino != id->ino ||
		    kernel_dev(m.dev_major, m.dev_minor) != id->dev)
			continue;
		snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m.start,
			 m.end);
		snprintf(name, name_len, "%s", m.path);
		err = 0;
		break;
	}
	proc_maps__close(&maps);
	return err;
}

/*
 * A fork of a process with links of its own needs its own, and is counted
 * toward sharing now: a parent that continues a child memtrack holds
 * (job control, a supervisor) has it run and exit before it got any, so
 * that counting the links made would never reach the limit.
 */
void bpf_track__count_fork(struct bpf_track *t, pid_t parent, pid_t child)
{
	char path[64], name[PATH_MAX];
	struct probe_file *f;
	uint64_t *counted;
	size_t i;

	if (!t->share_after)
		return;
	for (i = 0; i < t->nplinks; i++) {
		if (t->plinks[i].pid != parent || t->plinks[i].fds[2] < 0)
			continue;
		f = probe_files__find(&t->files, &t->plinks[i].file);
		counted = u64_map__get(&t->fork_counted, child);
		if (!f || !counted)
			continue;
		f->own_links++;
		/* a parent gone already: the next process that maps the file shares them */
		if (shares_probes(t, f) &&
		    !mapping_of(parent, &f->id, path, sizeof(path), name, sizeof(name)))
			try_share_probes(t, f, path, name);
	}
}

static void probe_failed(struct bpf_track *t, const char *file, int err)
{
	t->probe_failures++;
	t->last_probe_error = err;
	warning("cannot probe the allocator functions of '%s': %s%s", file,
		strerror(-err), err == -EINVAL ?
		" (another tool's uprobe there with a reference counter? see dmesg)" : "");
}

static void note_code(struct code_scan *scan, const struct probe_file *f,
		      const struct mt_file_id *shim)
{
	unsigned int i;

	if (f->kind == MT_FILE_FOREIGN_ALLOCATOR)
		scan->foreign = true;
	if (f->kind == MT_FILE_ALLOCATOR || f->kind == MT_FILE_FOREIGN_ALLOCATOR) {
		scan->allocator = true;
		if (!scan->exe_found || !same_file(&f->id, &scan->exe_id))
			scan->lib_allocator = true;
	}
	if (same_file(&f->id, shim))
		scan->shim = true;
	for (i = 0; i < ALLOC_SET_WORDS; i++) {
		scan->imports.w[i] |= f->imports.w[i];
		scan->aliases.w[i] |= f->aliases.w[i];
	}
}

static struct pid_wrappers *find_wrappers(struct bpf_track *t, pid_t pid, bool add)
{
	struct pid_wrappers *w;
	uint64_t *i;
	bool added;

	if (!add) {
		i = u64_map__find(&t->wraps_index, pid);
		return i ? &t->wraps[*i] : NULL;
	}
	w = u64_map__element(&t->wraps_index, pid, (void **)&t->wraps, &t->nwraps,
			     &t->wraps_cap, sizeof(*t->wraps), &added);
	if (w && added)
		w->pid = pid;
	return w;
}

static void add_wrapper(struct pid_wrappers *w, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->r[i].lo == lo && w->r[i].hi == hi)
			return;
	if (grow_array((void **)&w->r, &w->cap, w->n + 1, sizeof(*w->r)))
		return;		/* a frame more in some stacks */
	w->r[w->n++] = (struct wrapper_range){ lo, hi };
}

/* where f's wrappers are in pid, as m maps them */
static void note_wrappers(struct bpf_track *t, pid_t pid, const struct probe_file *f,
			  const struct proc_map *m)
{
	struct pid_wrappers *w;
	unsigned int i;

	if (!f->nwrappers || !(w = find_wrappers(t, pid, true)))
		return;
	for (i = 0; i < f->nwrappers; i++) {
		const struct probe_range *r = &f->wrappers[i];

		if (r->offset >= m->pgoff && r->offset + r->size <= m->pgoff + (m->end - m->start))
			add_wrapper(w, m->start + (r->offset - m->pgoff),
				    m->start + (r->offset - m->pgoff) + r->size);
	}
}

unsigned int bpf_track__wrapper_frames(struct bpf_track *t, pid_t pid, const uint64_t *ips,
				       unsigned int nr)
{
	struct pid_wrappers *w = find_wrappers(t, pid, false);
	unsigned int skip = 0;
	size_t i;

	/* a return address is past its call: the call's byte is the one before it */
	while (w && skip < nr) {
		for (i = 0; i < w->n; i++)
			if (ips[skip] - 1 >= w->r[i].lo && ips[skip] - 1 < w->r[i].hi)
				break;
		if (i == w->n)
			break;
		skip++;
	}
	return skip < nr ? skip : 0;
}

void bpf_track__fork_wrappers(struct bpf_track *t, pid_t parent, pid_t child)
{
	struct pid_wrappers *p, *c = find_wrappers(t, child, true);
	size_t i;

	if (!c)
		return;
	c->n = 0;	/* a pid used again */
	p = find_wrappers(t, parent, false);	/* after the array may have moved */
	for (i = 0; p && i < p->n; i++)
		add_wrapper(c, p->r[i].lo, p->r[i].hi);
}

void bpf_track__forget_wrappers(struct bpf_track *t, pid_t pid)
{
	struct pid_wrappers *w = find_wrappers(t, pid, false);

	if (w)
		w->n = 0;
}

/* the file of a mapping, looked at once */
static struct probe_file *mapping_file(struct bpf_track *t, pid_t pid, const struct proc_map *m,
				       char *path, size_t len, int *err)
{
	struct mt_file_id id = { kernel_dev(m->dev_major, m->dev_minor), m->ino };
	struct probe_file *f = probe_files__find(&t->files, &id);

	/* the mapped file itself, wherever (and whatever) its path is now */
	snprintf(path, len, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	*err = 0;
	if (f)
		return f;
	f = probe_files__inspect(&t->files, &id, path, err);
	if (!f)
		return NULL;
	if (same_file(&id, &t->shim))
		f->kind = MT_FILE_PLAIN;	/* its functions call libc's */
	if (*err)
		probe_failed(t, m->path, *err);
	*err = tell_bpf_kind(t, f);
	return f;
}

/* a mapping's file: probed in pid if asked for */
static int inspect_mapping(struct bpf_track *t, pid_t pid, const struct proc_map *m,
			   enum link_want want, struct code_scan *scan)
{
	char path[64];
	struct probe_file *f;
	int err;

	f = mapping_file(t, pid, m, path, sizeof(path), &err);
	if (!f)
		return err;
	note_code(scan, f, &t->shim);
	note_wrappers(t, pid, f, m);
	if (scan->exe_static && !same_file(&scan->exe_id, &f->id) && f->kind != MT_FILE_PLAIN) {
		/* code a static program maps itself: an emulator's guest (valgrind) */
		if (!scan->guest[0])
			snprintf(scan->guest, sizeof(scan->guest), "%s", m->path);
		return err;
	}
	if (err || f->kind == MT_FILE_PLAIN || want == LINK_NONE ||
	    (want == LINK_FOREIGN && f->kind != MT_FILE_FOREIGN_ALLOCATOR))
		return err;
	err = link_file(t, pid, f, path, m->path, want);
	if (err && err != -ENOMEM && err != -ESRCH && err != -ENOENT)
		probe_failed(t, m->path, err);
	return err == -ENOMEM ? err : 0;
}

/* the file of pid's executable, among its mappings */
static void find_exe(struct bpf_track *t, pid_t pid, const struct proc_exec_maps *maps,
		     struct code_scan *scan)
{
	char exe[64], target[PATH_MAX], path[64];
	struct probe_file *f;
	size_t i;
	ssize_t n;
	int err;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	n = readlink(exe, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = 0;
	if (n > 10 && !strcmp(target + n - 10, " (deleted)"))
		target[n - 10] = 0;
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->v[i];

		if (!m->ino || strcmp(m->path, target))
			continue;
		f = mapping_file(t, pid, m, path, sizeof(path), &err);
		if (!f)
			break;
		scan->exe_found = true;
		scan->exe_static = !f->interp;
		scan->exe_sanitizer = f->sanitizer;
		scan->exe_id = f->id;
		scan->exe_own = f->own;
		break;
	}
}

/*
 * A static image after one that had probes (an exec keeps the links of the
 * pid): those of other files go now, before it maps them itself (valgrind
 * maps its guest's libc), and at once: a close is the link's release.
 */
static void unlink_guest_files(struct bpf_track *t, pid_t pid, const struct mt_file_id *exe)
{
	size_t i, j, kept = 0;

	for (i = 0; i < t->nplinks; i++) {
		struct pid_link *l = &t->plinks[i];
		struct mt_pid_file key = { .tgid = pid, .dev = l->file.dev, .ino = l->file.ino };

		if (l->pid != pid || same_file(&l->file, exe)) {
			t->plinks[kept++] = *l;
			continue;
		}
		bpf_map__delete_elem(t->skel->maps.pid_files, &key, sizeof(key), 0);
		for (j = 0; j < LINK_FDS; j++)
			if (l->fds[j] >= 0)
				close(l->fds[j]);
	}
	t->nplinks = kept;
}

/* a name some object calls that the shim does not interpose, of a function it does */
static void find_alias_use(struct code_scan *scan)
{
	unsigned int i;

	for (i = 0; i < nr_alloc_symbols; i++)
		if (alloc_set__has(&scan->imports, i) && alloc_set__has(&scan->aliases, i)) {
			scan->alias_used = alloc_symbols[i].name;
			return;
		}
}

int bpf_track__inspect_maps(struct bpf_track *t, pid_t pid, const struct proc_exec_maps *maps,
			    enum link_want want, struct code_scan *scan)
{
	struct code_scan ignored;
	size_t i;
	int err = 0;

	if (!scan)
		scan = &ignored;
	memset(scan, 0, sizeof(*scan));
	find_exe(t, pid, maps, scan);
	if (scan->exe_static)
		unlink_guest_files(t, pid, &scan->exe_id);
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->v[i];

		if (!m->ino || m->path[0] != '/')
			continue;
		err = inspect_mapping(t, pid, m, want, scan);
		if (err == -ENOMEM)
			break;
	}
	find_alias_use(scan);
	/* a fork's mode came with its parent's links: does it need a hold at its forks */
	if (t->nshared && want == LINK_ALL)
		set_linked(t, pid, has_unshared_links(t, pid));
	return err == -ENOMEM ? err : 0;	/* a process gone meanwhile: what was read */
}

int bpf_track__inspect_process(struct bpf_track *t, pid_t pid, enum link_want want,
			       struct code_scan *scan)
{
	struct proc_exec_maps maps;
	int err = proc_exec_maps__read(&maps, pid);

	if (err) {
		if (scan)
			memset(scan, 0, sizeof(*scan));
		return err == -ESRCH ? -ENOENT : err;
	}
	err = bpf_track__inspect_maps(t, pid, &maps, want, scan);
	proc_exec_maps__free(&maps);
	return err;
}

void bpf_track__use_guardian(struct bpf_track *t, int guardian_fd)
{
	link_closer__use_guardian(t->closer, guardian_fd);
}

/* pid's links go, to a thread that closes them: each close takes milliseconds */
void bpf_track__unlink_process(struct bpf_track *t, pid_t pid)
{
	size_t i, j, kept = 0;
	uint64_t counted;

	u64_map__take(&t->fork_counted, pid, &counted);
	for (i = 0; i < t->nplinks; i++) {
		struct pid_link *l = &t->plinks[i];
		struct mt_pid_file key = { .tgid = pid, .dev = l->file.dev, .ino = l->file.ino };

		if (l->pid != pid) {
			t->plinks[kept++] = *l;
			continue;
		}
		bpf_map__delete_elem(t->skel->maps.pid_files, &key, sizeof(key), 0);
		for (j = 0; j < LINK_FDS; j++)
			if (l->fds[j] >= 0)
				link_closer__close(t->closer, l->fds[j]);
	}
	t->nplinks = kept;
}

/*
 * pid's links to all of a file's allocator functions go, those to its
 * foreign ones stay: what the shim serves, BPF need not see.
 */
static void unlink_served(struct bpf_track *t, pid_t pid)
{
	size_t i, j, kept = 0;

	for (i = 0; i < t->nplinks; i++) {
		struct pid_link *l = &t->plinks[i];
		struct mt_pid_file key = { .tgid = pid, .dev = l->file.dev, .ino = l->file.ino };

		if (l->pid == pid) {
			for (j = 2; j < LINK_FDS; j++) {
				if (l->fds[j] >= 0)
					link_closer__close(t->closer, l->fds[j]);
				l->fds[j] = -1;
			}
			if (l->fds[0] < 0 && l->fds[1] < 0) {
				bpf_map__delete_elem(t->skel->maps.pid_files, &key, sizeof(key), 0);
				continue;
			}
		}
		t->plinks[kept++] = *l;
	}
	t->nplinks = kept;
}

int bpf_track__exe_ok(struct bpf_track *t, const struct mt_exe_key *key)
{
	__u8 one = 1;

	if (bpf_map__update_elem(t->skel->maps.exe_ok, key, sizeof(*key), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

int bpf_track__root_ok(struct bpf_track *t, uint64_t root)
{
	__u8 one = 1;

	if (bpf_map__update_elem(t->skel->maps.roots_ok, &root, sizeof(root), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

int bpf_track__resume_attached(struct bpf_track *t, pid_t pid)
{
	return pressure__resume_attached(bpf_track__pressure_fd(t), pid);
}

unsigned int bpf_track__probe_failures(struct bpf_track *t)
{
	return t->probe_failures;
}

struct libc_image {
	const char *name;
	uint64_t lo, hi;	/* where its segments are loaded */
};

static int find_libc(struct dl_phdr_info *info, size_t size __maybe_unused, void *data)
{
	const char *name = info->dlpi_name, *base = strrchr(name, '/');
	struct libc_image *libc = data;
	int i;

	if (!base || strncmp(base + 1, "libc.so", 7))
		return 0;
	libc->name = name;
	libc->lo = UINT64_MAX;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < libc->lo)
			libc->lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > libc->hi)
			libc->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return 1;
}

/* libc's mappings alone, if they can be told: the rest of memtrack's would cost a millisecond */
static void keep_libc(struct proc_exec_maps *maps, const struct libc_image *libc)
{
	size_t i, kept = 0;

	for (i = 0; i < maps->n; i++)
		if (maps->v[i].start >= libc->lo && maps->v[i].start < libc->hi)
			maps->v[kept++] = maps->v[i];
	if (kept)
		maps->n = kept;
}

/*
 * The libc memtrack itself maps is the one its commands will map: look at
 * memtrack's own mappings of it, with the (device, inode) that BPF sees
 * (stat()'s differs on overlayfs and btrfs).
 */
int bpf_track__attach_libc(struct bpf_track *t, const char **path)
{
	static char resolved[PATH_MAX];
	struct libc_image libc = { 0 };
	unsigned int failures = t->probe_failures;
	struct proc_exec_maps maps;
	struct code_scan scan;
	int err;

	dl_iterate_phdr(find_libc, &libc);
	*path = libc.name && realpath(libc.name, resolved) ? resolved : NULL;
	err = proc_exec_maps__read(&maps, getpid());
	if (err)
		return err;
	if (libc.name)
		keep_libc(&maps, &libc);
	err = bpf_track__inspect_maps(t, getpid(), &maps, LINK_NONE, &scan);
	proc_exec_maps__free(&maps);
	if (err)
		return err;
	if (t->probe_failures > failures)
		return t->last_probe_error;
	return scan.allocator ? 0 : -ENOENT;
}

static struct mt_file_id file_id_of_stat(const struct stat *st)
{
	return (struct mt_file_id){ kernel_dev(major(st->st_dev), minor(st->st_dev)), st->st_ino };
}

/*
 * The probes go on our own open file, by its descriptor: the process's
 * root is its word, and a path in it may name another file by the time
 * the kernel looks (probes at libc's offsets in some other file's code).
 * Its root only says whether it would map the same file.
 */
int bpf_track__prelink(struct bpf_track *t, pid_t pid, const char *path)
{
	char rooted[PATH_MAX + 32], by_fd[32];
	struct mt_file_id id, own;
	struct probe_file *f;
	struct stat st;
	int fd, err;

	if (!path || bpf_track__mode(t, pid) != MT_MODE_BPF)
		return 0;
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", pid, path);
	if (stat(rooted, &st))
		return 0;
	id = file_id_of_stat(&st);
	f = probe_files__find(&t->files, &id);
	if (!f || f->kind == MT_FILE_PLAIN)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	own = fstat(fd, &st) ? (struct mt_file_id){ 0 } : file_id_of_stat(&st);
	err = 0;
	if (same_file(&own, &id)) {
		snprintf(by_fd, sizeof(by_fd), "/proc/self/fd/%d", fd);
		err = link_file(t, pid, f, by_fd, path, LINK_ALL);
	}
	close(fd);
	return err;
}

/* probes libc in memtrack itself (not tracked: they make no event), to see that it works */
int bpf_track__check_probes(struct bpf_track *t)
{
	unsigned int failures = t->probe_failures;
	int err = bpf_track__inspect_process(t, getpid(), LINK_ALL, NULL);

	if (!err && t->probe_failures > failures)
		err = t->last_probe_error;
	if (!err && !t->nplinks)
		err = -ENOENT;
	bpf_track__unlink_process(t, getpid());
	return err;
}

int bpf_track__set_mode(struct bpf_track *t, pid_t pid, enum mt_mode mode)
{
	__u32 key = pid;
	__u8 value = mode;
	int old = bpf_track__mode(t, pid);

	if (old == (int)mode)
		return 0;	/* and MT_MODE_LINKED stays */
	/*
	 * BPF's probes of libc are no use to the shim; foreign ones serve every
	 * mode.  They go once the shim serves the process, not while it is
	 * pending: one that comes back to BPF (its shim refused, or out of
	 * memtrack's reach) would get new links while the old ones close, and a
	 * call would run the entry probes of both and the return probe of one.
	 */
	if (mode == MT_MODE_PRELOAD)
		unlink_served(t, pid);
	if (has_unshared_links(t, pid))
		value |= MT_MODE_LINKED;
	if (bpf_map__update_elem(t->skel->maps.tracked, &key, sizeof(key), &value,
				 sizeof(value), BPF_ANY))
		return -errno;
	return 0;
}

void bpf_track__untrack(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;

	bpf_track__unlink_process(t, pid);
	bpf_map__delete_elem(t->skel->maps.tracked, &key, sizeof(key), 0);
}

unsigned int bpf_track__tracked(struct bpf_track *t)
{
	int fd = bpf_map__fd(t->skel->maps.tracked);
	__u32 key, next;
	unsigned int n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

static __u8 mode_bits(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;
	__u8 value;

	if (bpf_map__lookup_elem(t->skel->maps.tracked, &key, sizeof(key), &value,
				 sizeof(value), 0))
		return 0;
	return value;
}

int bpf_track__mode(struct bpf_track *t, pid_t pid)
{
	return mode_bits(t, pid) & ~MT_MODE_FLAGS;
}

bool bpf_track__shim_waits(struct bpf_track *t, pid_t pid)
{
	return mode_bits(t, pid) & MT_MODE_SHIM_WAITS;
}

void bpf_track__let_shim_wait(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;
	__u8 value = mode_bits(t, pid);

	if ((value & ~MT_MODE_FLAGS) != MT_MODE_BPF)
		return;
	value |= MT_MODE_SHIM_WAITS;
	bpf_map__update_elem(t->skel->maps.tracked, &key, sizeof(key), &value, sizeof(value),
			     BPF_EXIST);
}

int bpf_track__set_stack_end(struct bpf_track *t, uint32_t tid, uint64_t end)
{
	__u64 value = end;

	if (bpf_map__update_elem(t->skel->maps.stack_ends, &tid, sizeof(tid), &value,
				 sizeof(value), BPF_ANY))
		return -errno;
	return 0;
}

int bpf_track__ring_fd(struct bpf_track *t, enum mt_ring_id ring)
{
	switch (ring) {
	case MT_RING_EVENTS:
		return bpf_map__fd(t->skel->maps.events);
	case MT_RING_STACKS:
		return bpf_map__fd(t->skel->maps.stacks);
	default:
		return -EINVAL;
	}
}

int bpf_track__pressure_fd(struct bpf_track *t)
{
	return bpf_map__fd(t->skel->maps.pressure_stopped);
}

const volatile uint64_t *bpf_track__pressure_stops(struct bpf_track *t)
{
	return (const volatile uint64_t *)&t->skel->bss->pressure_stops;
}

uint64_t bpf_track__holds_ended_early(struct bpf_track *t)
{
	return __atomic_load_n(&t->skel->bss->holds_ended_early, __ATOMIC_RELAXED);
}

/* a per-CPU counter's sum over the CPUs */
static uint64_t percpu_sum(const struct bpf_map *map, __u32 key)
{
	int ncpus = libbpf_num_possible_cpus(), i;
	uint64_t sum = 0;
	__u64 *vals;

	if (ncpus <= 0)
		return 0;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(map), &key, vals))
		for (i = 0; i < ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

uint64_t bpf_track__their_stop(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;
	__u64 when;

	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.their_stops), &key, &when) ?
	       0 : when;
}

uint64_t bpf_track__drops(struct bpf_track *t, enum mt_ring_id ring)
{
	return percpu_sum(t->skel->maps.drops, ring);
}

uint64_t bpf_track__probe_runs(struct bpf_track *t, enum mt_probe_id probe)
{
	return percpu_sum(t->skel->maps.probe_runs, probe);
}

void bpf_track__stop_tracing(struct bpf_track *t)
{
	__atomic_store_n(&t->skel->bss->tracing_done, 1, __ATOMIC_RELEASE);
}

/* an open link to hand over; one memory cannot be found for is closed now */
static void keep_link_fd(int **fds, size_t *n, size_t *cap, int fd)
{
	if (fd < 0)
		return;
	if (grow_array((void **)fds, cap, *n + 1, sizeof(**fds))) {
		close(fd);
		return;
	}
	(*fds)[(*n)++] = fd;
}

/* a link's fd to hand over, libbpf's object left to free without closing it */
static void keep_link(int **fds, size_t *n, size_t *cap, struct bpf_link *link)
{
	if (!link)
		return;
	bpf_link__disconnect(link);
	keep_link_fd(fds, n, cap, bpf_link__fd(link));
}

/*
 * The tracepoints' links go to the guardian with the probes': each one
 * closed turns a static key off, kernel text rewritten on every CPU (0.46
 * ms of a run's end for the five here).  Their programs do nothing once
 * tracing is done.
 */
static void keep_tracepoint_links(struct bpf_track *t, int **fds, size_t *n, size_t *cap)
{
	const struct bpf_object_skeleton *s = t->skel->skeleton;
	int i;

	for (i = 0; i < s->prog_cnt; i++)
		keep_link(fds, n, cap, *s->progs[i].link);
	for (i = 0; i < MOVED_TRACEPOINTS; i++)
		keep_link(fds, n, cap, t->moved_links[i]);
}

void bpf_track__detach(struct bpf_track *t, int guardian_fd)
{
	int *fds = NULL;
	size_t n = 0, cap, i;

	bpf_track__stop_tracing(t);
	/* the links still to close, and those of the processes that live on */
	if (t->closer)
		n = link_closer__stop(t->closer, &fds);
	cap = n;
	keep_link_fd(&fds, &n, &cap, grace_warmer__finish(&t->warmer));
	for (i = 0; i < LINK_FDS * t->nplinks; i++)
		keep_link_fd(&fds, &n, &cap, t->plinks[i / LINK_FDS].fds[i % LINK_FDS]);
	for (i = 0; i < 2 * t->nshared; i++)
		keep_link_fd(&fds, &n, &cap, t->shared[i / 2].fds[i % 2]);
	keep_tracepoint_links(t, &fds, &n, &cap);
	/* the guardian closes them after memtrack has gone: their release is slow */
	if (guardian_fd >= 0 && n)
		pressure__hand_over(guardian_fd, fds, n);
	for (i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	t->nplinks = 0;
	t->nshared = 0;
	link_closer__delete(t->closer);
	t->closer = NULL;
	memtrack_bpf__detach(t->skel);
	for (i = 0; i < MOVED_TRACEPOINTS; i++) {
		bpf_link__destroy(t->moved_links[i]);
		t->moved_links[i] = NULL;
	}
}

void bpf_track__close(struct bpf_track *t)
{
	unsigned int i;

	if (!t)
		return;
	bpf_track__detach(t, -1);
	drop_probes(t);
	memtrack_bpf__destroy(t->skel);
	for (i = 0; i < ARRAY_SIZE(t->alloc_prog); i++)
		if (t->alloc_prog[i] >= 0)
			close(t->alloc_prog[i]);
	probe_files__exit(&t->files);
	free(t->plinks);
	while (t->nwraps)
		free(t->wraps[--t->nwraps].r);
	free(t->wraps);
	u64_map__exit(&t->wraps_index);
	u64_map__exit(&t->fork_counted);
	free(t);
}
