/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_FREEZER_H
#define MEMTRACK_FREEZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Back-pressure that the workload cannot see: the tracked tree lives in a
 * cgroup of its own (memtrack-<pid>, under memtrack's own cgroup), which is
 * frozen while a BPF ring is fuller than its freeze mark and thawed once
 * drained.  A frozen task is reported to no one (no wait() status, no
 * SIGCHLD), unlike a SIGSTOP, which stays as the backstop at the ring's
 * watermark.  cgroup v2's cgroup.freeze, or else the v1 freezer controller.
 *
 * Several rings share the freezer: each holds it by its own bit, and the
 * tree thaws when no ring holds it.  Thread-safe.
 */
struct freezer;

/* the cgroup, made and opened; NULL with why filled in when there is none to use */
struct freezer *freezer__new(char *why, size_t why_len);
/* the cgroup2 directory, for clone3's CLONE_INTO_CGROUP; -1 with the v1 freezer */
int freezer__cgroup_fd(const struct freezer *f);
/* moves pid (and its threads) into the cgroup, a grace period's work: 0 or -errno */
int freezer__add(struct freezer *f, pid_t pid);
/* the fd whose write of freezer__thaw_word() thaws the tree: for the guardian */
int freezer__state_fd(const struct freezer *f);
const char *freezer__thaw_word(const struct freezer *f);
/* "cgroup2 /sys/fs/cgroup/x/memtrack-12" or "cgroup v1 freezer ..." */
const char *freezer__describe(const struct freezer *f);

/* ring `bit` asks for the tree frozen: true when this call froze it */
bool freezer__hold(struct freezer *f, unsigned int bit);
/*
 * Ring `bit` no longer asks: the tree thaws when no ring does.  Returns the
 * time the tree was frozen (CLOCK_MONOTONIC ns) when this call thawed it,
 * else 0; the first max pids that were in the cgroup go to pids, their
 * number to *n.
 */
uint64_t freezer__release(struct freezer *f, unsigned int bit, pid_t *pids, int max, int *n);
bool freezer__holds(struct freezer *f, unsigned int bit);
uint64_t freezer__episodes(struct freezer *f);

/*
 * Thaws, moves any process still in the cgroup back to memtrack's own,
 * and removes it; no freeze after.  NULL is fine.  For an exit in the
 * middle of a run too (die()), while other threads may hold f.
 */
void freezer__abandon(struct freezer *f);
/* freezer__abandon(), and frees f */
void freezer__delete(struct freezer *f);

/*
 * A /proc/self/mountinfo line of the hierarchy (v2: fstype cgroup2; v1: a
 * cgroup mount whose options name the freezer): where it is mounted, and
 * the mount's root within it, unescaped.  Changes line.
 */
bool freezer__parse_mount(char *line, bool v2, char *mnt, size_t mnt_len, char *root,
			  size_t root_len);
/* a /proc/self/cgroup line of the hierarchy: v2's "0::/path", v1's "N:...freezer...:/path" */
bool freezer__parse_cgroup(char *line, bool v2, char *path, size_t len);

#endif
