// SPDX-License-Identifier: GPL-2.0
/*
 * The processes of a tracked tree, as BPF's process events and the
 * shim's hellos tell of them: the backend each takes, the probes it gets,
 * the code it maps, the records of its rings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "preload/shim-abi.h"
#include "util/probe/backend.h"
#include "util/probe/bpf_track.h"
#include "util/probe/proc-table.h"
#include "util/probe/stop-mirror.h"
#include "util/proc-maps.h"
#include "util/symbol/symbolize.h"
#include "util/track/encoder.h"
#include "util/track/live-heap.h"
#include "util/track/merge.h"
#include "util/track/resolver.h"
#include "util/track/session.h"
#include "util/track/shim-host.h"
#include "util/track/stack-ids.h"
#include "util/usage.h"
#include "util/util.h"

static void set_mode(struct track_session *s, pid_t pid, enum mt_mode mode)
{
	struct process *p = proc_table__get(&s->procs, pid);
	int err = bpf_track__set_mode(s->bpf, pid, mode);

	if (err)
		warning("cannot set the backend of pid %d: %s", pid, strerror(-err));
	if (p && p->mode != mode) {
		p->bpf_why = NULL;
		p->pymalloc_off = false;
	}
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
	if (s->backend == BACKEND_BPF)
		tag = "--backend bpf";	/* what the user asked for, whatever else holds */
	if (s->backend == BACKEND_PRELOAD) {
		error("pid %d (%s) cannot take the preload shim: %s", pid, comm_of(s, pid), why);
		s->refused++;
	} else if (s->opts->quiet || verbose >= 1 || s->backend == BACKEND_BPF ||
		   warned_before(s, exe, tag)) {
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
	if ((s->backend == BACKEND_BPF && !s->shim_waits) || s->attach) {
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
 * An image the shim serves with nothing for userspace to do before ld.so
 * runs: the next execs of its file from that root are decided by BPF and
 * run on unheld (their hello settles the rest).  Not one with probes of
 * its own to get first, or whose executable the shim cannot serve.
 */
static void remember_exe(struct track_session *s, const struct mt_proc_event *e,
			 const struct code_scan *scan)
{
	if (bpf_track__mode(s->bpf, e->pid) != MT_MODE_PENDING || !e->exe.ino)
		return;
	/* its shim is visible there: images not seen yet may take it unheld where a stop shows */
	bpf_track__root_ok(s->bpf, e->exe.root);
	if (!scan->exe_found || scan->exe_static || scan->exe_sanitizer || scan->exe_own ||
	    scan->alias_used || scan->foreign || scan->exe_id.dev != e->exe.dev ||
	    scan->exe_id.ino != e->exe.ino)
		return;
	bpf_track__exe_ok(s->bpf, &e->exe);
}

/* an exec BPF decided: the image takes the shim, and runs on to its hello */
static void exec_pending(struct track_session *s, const struct mt_proc_event *e)
{
	struct process *p = proc_table__get(&s->procs, e->pid);

	s->unheld_exec++;
	if (p) {
		/* its hello may have come first */
		p->mode = bpf_track__mode(s->bpf, e->pid);
		p->bpf_why = NULL;
	}
	if (s->sym)
		symbolizer__exec(s->sym, e->pid);
}

/* stopped by BPF at its shim's word that memtrack's socket is out of its reach */
static void shim_not_reached(struct track_session *s, const struct mt_proc_event *e)
{
	int mode = bpf_track__mode(s->bpf, e->pid);

	if (mode == MT_MODE_PENDING || mode == MT_MODE_PRELOAD)
		use_bpf(s, e->pid, "socket unreached",
			"its preload shim cannot reach memtrack's socket (a network namespace "
			"of its own, or MEMTRACK_SHIM gone from its environment)");
	if (s->sym)
		symbolizer__snapshot(s->sym, e->pid);
	bpf_track__resume_attached(s->bpf, e->pid);
	stop_mirror__resumed(s->mirror, e->pid, e->ts, now_ns());
}

/*
 * A tracked process exec'd or mapped code not seen before: choose its
 * backend, probe what needs it, note its mappings for the resolver (it may
 * be gone when its stacks are), resume it.
 */
static void attach_new_code(struct track_session *s, const struct mt_proc_event *e)
{
	struct code_scan scan;

	if (e->reason == MT_NEW_CODE_UNREACHED) {
		shim_not_reached(s, e);
		return;
	}
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
	if (e->reason == MT_NEW_CODE_EXEC) {
		check_blind(s, e->pid, &scan);
		remember_exe(s, e, &scan);
		/* libc probed before ld.so maps it: no hold there (a parent may end one early) */
		if (!scan.exe_static)
			bpf_track__prelink(s->bpf, e->pid, s->libc_path);
	}
	if (s->sym && e->reason == MT_NEW_CODE_EXEC)
		symbolizer__exec(s->sym, e->pid);
	else if (s->sym && e->reason == MT_NEW_CODE_MMAP)
		symbolizer__snapshot(s->sym, e->pid);
	bpf_track__resume_attached(s->bpf, e->pid);
	stop_mirror__resumed(s->mirror, e->pid, e->ts, now_ns());
}

/* a connection to the shim's socket: only a process waiting for its shim, or using it, keeps one */
bool session__shim_tracked(void *ctx, pid_t pid)
{
	struct track_session *s = ctx;
	int mode = bpf_track__mode(s->bpf, pid);

	return mode == MT_MODE_PENDING || mode == MT_MODE_PRELOAD ||
	       (mode == MT_MODE_BPF && bpf_track__shim_waits(s->bpf, pid));
}

/* the process's shim records nothing: the run cannot be exact */
void session__on_shim_lost(void *ctx, pid_t pid, const char *why)
{
	struct track_session *s = ctx;
	char key[32];

	snprintf(key, sizeof(key), "%d", pid);
	if (warned_before(s, key, "lost"))
		return;		/* a child before its exec, and after */
	warning("pid %d (%s) could not be served by memtrack's preload shim socket (%s): "
		"its allocations are not tracked", pid, comm_of(s, pid), why);
	s->unserved++;
}

/*
 * What a pending process mapped before its hello did not stop it: probed
 * now, and its mappings noted for its stacks, from one read of them.  Why
 * the shim cannot serve it, or NULL.
 */
static const char *inspect_at_hello(struct track_session *s, pid_t pid, struct code_scan *scan,
				    char *buf, size_t len, const char **tag)
{
	/* with the shim a waiting room, every probe now: the process goes to BPF */
	enum link_want want = s->shim_waits ? LINK_ALL : LINK_FOREIGN;
	struct proc_exec_maps maps;
	const char *why = NULL;

	if (proc_exec_maps__read(&maps, pid)) {
		memset(scan, 0, sizeof(*scan));
		return NULL;
	}
	if (!bpf_track__inspect_maps(s->bpf, pid, &maps, want, scan))
		why = shim_blind_spot(scan, buf, len, tag);
	if (!why && s->sym)
		symbolizer__snapshot_maps(s->sym, pid, &maps);
	proc_exec_maps__free(&maps);
	return why;
}

/*
 * --backend bpf, a process whose shim would serve it, its probes linked at
 * its hello: BPF traces it, its shim stays inert, and where that shim sees
 * every call the probes see (its blind spots sent it to use_bpf() before),
 * its fork children get their probes in their hello (MT_MODE_SHIM_WAITS).
 */
static void trace_behind_shim(struct track_session *s, pid_t pid, const struct code_scan *scan)
{
	struct process *p;

	set_mode(s, pid, MT_MODE_BPF);
	p = proc_table__get(&s->procs, pid);
	if (p)
		p->bpf_why = "--backend bpf";
	if (scan->shim && !scan->foreign)
		bpf_track__let_shim_wait(s->bpf, pid);
}

/* a shim says hello: its process takes the shim (its merger entry), unless it cannot serve it */
void *session__on_shim_hello(void *ctx, pid_t pid, uint32_t flags)
{
	struct track_session *s = ctx;
	struct merge_proc *mp;
	struct code_scan scan;
	struct process *p;
	int mode = bpf_track__mode(s->bpf, pid);

	if (mode == MT_MODE_BPF && bpf_track__shim_waits(s->bpf, pid)) {
		/* a fork child, not held: its probes before its first allocator call */
		probe_process(s, pid, NULL);
		return NULL;
	}
	if (mode != MT_MODE_PENDING && mode != MT_MODE_PRELOAD)
		return NULL;	/* BPF traces it, or not ours at all */
	if (mode == MT_MODE_PENDING) {
		const char *why = NULL, *tag = NULL;
		char buf[160];

		if (flags & SHIM_SHADOWED) {
			why = "a library preloaded before the shim defines the allocator functions";
			tag = "preloaded allocator";
		} else if (flags & SHIM_NO_NEXT) {
			why = "the shim finds no malloc and free to call";
			tag = "no libc malloc";
		} else {
			why = inspect_at_hello(s, pid, &scan, buf, sizeof(buf), &tag);
		}
		if (why) {
			use_bpf(s, pid, tag, "%s", why);
			return NULL;
		}
		if (s->shim_waits) {
			trace_behind_shim(s, pid, &scan);
			return NULL;
		}
	}
	if (s->shim_waits)
		return NULL;	/* under --backend bpf, no shim records */
	mp = merger__proc(s->merger, pid);
	if (!mp)
		return NULL;
	merger__ref(mp);
	set_mode(s, pid, MT_MODE_PRELOAD);
	p = proc_table__get(&s->procs, pid);
	if (p)
		p->pymalloc_off = flags & SHIM_PYMALLOC_OFF;
	return mp;
}

/* a ring of a process whose hello was accepted: it may have exited since, its events stand */
bool session__on_shim_ring(void *ctx, void *proc, struct shim_ring *r)
{
	struct track_session *s = ctx;
	pid_t pid = r->pid;
	char key[32];
	int err;

	err = merger__add_ring(s->merger, proc, r);
	if (err != -ENOSPC)
		return !err;
	s->ringless++;
	snprintf(key, sizeof(key), "%d", pid);
	if (!warned_before(s, key, "rings"))
		warning("thread %d of pid %d (%s) brings a preload shim ring past the %u a "
			"process may have mapped at once (%u in all): its allocations, and those "
			"of the threads after it, are not tracked", r->tid, pid, comm_of(s, pid),
			MERGE_RINGS_PER_PROC, MERGE_RINGS_MAX);
	return false;
}

void session__on_shim_closed(void *ctx, void *proc)
{
	struct track_session *s = ctx;

	merger__unref(s->merger, proc);
}

/* the thread's calls go unrecorded: the run cannot be exact */
void session__on_shim_no_ring(void *ctx, pid_t pid, uint32_t tid, int err)
{
	struct track_session *s = ctx;

	warning("thread %u of pid %d (%s) could not make its preload shim ring (%s): "
		"its allocations are not tracked", tid, pid, comm_of(s, pid), strerror(err));
	s->ringless++;
}

/* threads the shim could not serve, counted in the process's first ring: no socket to say more */
void session__on_shim_unserved(void *ctx, int32_t pid, uint32_t n)
{
	struct track_session *s = ctx;

	warning("%u thread%s of pid %d (%s) could not make a preload shim ring, and the shim "
		"could not say why (no connection, no descriptor left): %s allocations are not "
		"tracked", n, n == 1 ? "" : "s", pid, comm_of(s, pid), n == 1 ? "its" : "their");
	s->ringless += n;
}

/* the shim's own words (printable, checked by the host), which -q silences */
void session__on_shim_warn(void *ctx, pid_t pid, const char *text)
{
	struct track_session *s = ctx;

	if (!s->opts->quiet)
		warning("pid %d (%s): preload shim: %s", pid, comm_of(s, pid), text);
}

void session__on_merged_event(void *ctx, const struct mt_alloc_event *e)
{
	struct track_session *s = ctx;

	if (s->live)
		live_heap__add(s->live, e);
	encoder__add(s->enc, e);	/* a write error is reported at the end */
}

uint64_t session__on_shim_stack(void *ctx, int32_t pid, const uint64_t *ips, uint32_t nr)
{
	struct track_session *s = ctx;
	unsigned int skip;

	if (!s->stack_ids)
		return 0;
	skip = bpf_track__wrapper_frames(s->bpf, pid, ips, nr);
	return stack_ids__intern(s->stack_ids, pid, ips + skip, nr - skip);
}

/* a process whose ring broke the rules is no longer tracked; memtrack runs on */
void session__on_corrupt_ring(void *ctx, int32_t pid, int32_t tid, const char *why)
{
	struct track_session *s = ctx;

	warning("the preload shim's ring of pid %d (%s), thread %d, is corrupt: %s; "
		"its allocations from now on are not tracked", pid, comm_of(s, pid), tid, why);
	s->corrupt++;
	shim_host__drop(s->host, pid);
}

void session__on_producer_waited(void *ctx, int32_t pid, uint64_t since)
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
	if (e->kind == MT_FORK) {
		bpf_track__fork_wrappers(s->bpf, e->ppid, e->pid);
		bpf_track__count_fork(s->bpf, e->ppid, e->pid);
	}
	else if (e->kind == MT_EXEC)
		bpf_track__forget_wrappers(s->bpf, e->pid);
}

/*
 * A code mapping of a process the shim serves, which did not stop for it:
 * its file is found through map_files while the process lives (the module
 * is usually known by its device and inode already); a file gone with its
 * process leaves the frames in it as module+offset.
 */
static void add_code_map(struct track_session *s, const struct mt_code_map *m)
{
	char link[96], path[MT_PATH_LEN];
	struct sym_mapping map = {
		.start = m->start, .end = m->end, .pgoff = m->pgoff,
		.dev_major = m->dev >> 20, .dev_minor = m->dev & 0xfffff, .ino = m->ino,
		.path = path,
	};
	ssize_t n;

	s->code_maps++;
	if (!s->sym)
		return;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%llx-%llx", m->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		n = snprintf(path, sizeof(path), "/[dev %llu inode %llu]",
			     (unsigned long long)m->dev, (unsigned long long)m->ino);
	path[n < (ssize_t)sizeof(path) ? n : (ssize_t)sizeof(path) - 1] = 0;
	symbolizer__add_mapping(s->sym, m->pid, &map);
}

int session__on_event_record(void *ctx, const void *data, uint32_t len)
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
	case MT_CODE_MAP:
		if (len >= sizeof(struct mt_code_map))
			add_code_map(s, data);
		break;
	case MT_FORK:
	case MT_EXEC:
	case MT_EXIT:
		if (len < sizeof(struct mt_proc_event))
			break;
		if (kind == MT_EXEC && (pid_t)((const struct mt_proc_event *)data)->pid == s->root_pid)
			__atomic_store_n(&s->root_seen, true, __ATOMIC_RELEASE);
		proc_table__apply(&s->procs, data);
		if (kind == MT_EXEC && ((const struct mt_proc_event *)data)->reason)
			exec_pending(s, data);
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

int session__on_stack_record(void *ctx, const void *data, uint32_t len)
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
