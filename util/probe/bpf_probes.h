/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_PROBES_H
#define MEMTRACK_BPF_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/probe/allocators.h"
#include "bpf/memtrack.h"

/*
 * Where the allocator probes go: for each file of code, found once, the
 * offsets of its allocator functions and their cookies (shape, whether the
 * preload shim cannot see the function's calls, whether its result comes
 * from the allocator call it makes); and the uprobe_multi links
 * that put them in one process, and in that process alone (the link's pid):
 * other processes, however many map the same libc, never trap.
 *
 * What the kernel (6.18) does with such a link, measured (/work/exp of the
 * session that made this; numbers from a 2-CPU VM where a trap costs 13 us):
 *  - a process other than the link's: no breakpoint in its memory, no
 *    trap (a bystander's malloc loop ran in 19.95 vs 19.98 ms bare);
 *  - the link's threads, and the process after an exec that maps the same
 *    file again: the program runs (uprobe_mmap puts the breakpoints back);
 *  - a child it forks: the breakpoints come along with the memory, trap on
 *    every call, and run no program (uprobe_prog_run wants the link's
 *    thread group; the handler never asks to remove them): the child needs
 *    a link of its own before its first call, so BPF holds it as it first
 *    returns from its fork (sys_exit in the child, ret 0) until userspace
 *    has made it (0.3 ms median);
 *  - closing a link costs about 20 ms whatever its size (one
 *    uprobe_unregister_sync per link), alive process or not; closes in
 *    parallel share the wait.  They are closed off the pollers' threads.
 *  - making or closing a link takes the kernel's uprobe lock (dup_mmap_sem)
 *    for writing: a grace period, during which every fork on the machine
 *    waits; after --shared-probes processes a file's probes are one link
 *    without a pid (util/probe/bpf_track.c, design.md section 6).
 * Perf-event uprobes with inherit=1 were no alternative: a fork of the
 * traced process fails with EFAULT when memtrack opened them, and their
 * programs do not run in children.
 */
/* the probes of one link pair: entry offsets, and those that also get a return probe */
struct probe_set {
	unsigned int nentry, nreturn;
	uint64_t *entry, *entry_cookies;
	uint64_t *ret, *ret_cookies;
};

/* a function of the file that only wraps the C family: [offset, offset + size) */
struct probe_range {
	uint64_t offset, size;
};

struct probe_file {
	struct mt_file_id id;
	enum mt_file_kind kind;
	struct probe_set seen;		/* the functions whose calls the shim sees */
	struct probe_set foreign;	/* those it cannot: probed beside it too */
	unsigned int nentry;		/* in both */
	struct alloc_set imports;	/* allocator names it takes from other objects */
	struct alloc_set aliases;	/* names the shim does not interpose, of functions it does */
	const char *own;		/* a function the shim interposes that allocates by itself */
	struct probe_range *wrappers;	/* functions that call the shim's: frames to drop */
	unsigned int nwrappers;
	unsigned int own_links;		/* processes given links of their own to it */
	bool shared;			/* its `seen` probes are a link without a pid */
	bool interp;			/* has an ELF interpreter */
	bool sanitizer;			/* needs a sanitizer runtime first */
};

struct probe_files {
	struct probe_file *files;
	size_t n, cap;
};

struct probe_file *probe_files__find(struct probe_files *pf, const struct mt_file_id *id);
/*
 * The file of id, read through path the first time (util/alloc-code.h
 * says what is read); NULL when out of memory, with *err.
 */
struct probe_file *probe_files__inspect(struct probe_files *pf, const struct mt_file_id *id,
					const char *path, int *err);
void probe_files__exit(struct probe_files *pf);

/*
 * Puts the probes of set into pid (path: the file, as pid maps it): the
 * return probes, then the entry probes, so that a call never has an entry
 * without its return.  fds[] gets the two links (-1 for none).  0 or -errno.
 */
int probe_set__link(const struct probe_set *set, int entry_prog, int return_prog,
		    const char *path, pid_t pid, int fds[2]);

#endif
