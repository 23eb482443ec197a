/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_STOP_MIRROR_H
#define MEMTRACK_STOP_MIRROR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * BPF holds a process with SIGSTOP (while its probes are put in, and at a
 * full ring); its parent sees the stop, and sudo and su stop themselves to
 * mirror it, for job control.  memtrack resumes the child, never the
 * parent, which would then wait stopped forever.  This watches the parent
 * of each resumed child for a short while, and resumes it if it stopped
 * itself after the child's hold began: a stop that memtrack caused,
 * through the child.  Its other stops are left alone.
 */
struct stop_mirror;

struct stop_mirror_ops {
	/*
	 * When pid last stopped itself (SIGSTOP to its own process; the
	 * CLOCK_MONOTONIC ns of the signal, with MT_THEIR_STOP_SELF), or 0 if
	 * it has not since it last continued.
	 */
	uint64_t (*self_stop)(void *ctx, pid_t pid);
	/* pid's state letter and parent; false when pid is gone */
	bool (*state)(pid_t pid, char *state, pid_t *ppid);
	void (*resume)(pid_t pid);
};

/* ops->state and ops->resume may be NULL: /proc/<pid>/stat and SIGCONT */
struct stop_mirror *stop_mirror__new(const struct stop_mirror_ops *ops, void *ctx);
void stop_mirror__delete(struct stop_mirror *m);
/* child, held since held_at (CLOCK_MONOTONIC ns), was resumed: watch its parent */
void stop_mirror__resumed(struct stop_mirror *m, pid_t child, uint64_t held_at, uint64_t now);
/* resumes the watched parents that mirrored a hold; forgets those watched long enough */
unsigned int stop_mirror__tick(struct stop_mirror *m, uint64_t now);

/* /proc/<pid>/stat's state and ppid; false when pid is gone */
bool proc_state(pid_t pid, char *state, pid_t *ppid);

#endif
