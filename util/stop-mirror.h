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
 * of each held process that was running when the hold began, for a short
 * while after the child is resumed, and resumes it if it stopped in that
 * time: a stop that memtrack caused, through the child.
 */
struct stop_mirror;

struct stop_mirror *stop_mirror__new(void);
void stop_mirror__delete(struct stop_mirror *m);
/* child is held: remember its parent, if it runs now (state not T) */
void stop_mirror__held(struct stop_mirror *m, pid_t child);
/* child was resumed: watch its parent from now on */
void stop_mirror__resumed(struct stop_mirror *m, pid_t child, uint64_t now);
/* resumes the watched parents that stopped; forgets those watched long enough */
unsigned int stop_mirror__tick(struct stop_mirror *m, uint64_t now);

/* /proc/<pid>/stat's state and ppid; false when pid is gone */
bool proc_state(pid_t pid, char *state, pid_t *ppid);

#endif
