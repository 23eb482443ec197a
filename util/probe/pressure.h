/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PRESSURE_H
#define MEMTRACK_PRESSURE_H

#include <stdint.h>
#include <sys/types.h>

struct stopped_pid {
	uint32_t pid;
	uint64_t stopped_at;	/* bpf_ktime_get_ns() when BPF stopped it */
};

/*
 * How a release reaches the stopped-pids bookkeeping and the processes:
 * pressure_bpf_ops is bpf(2) on BPF's pressure_stopped map and SIGCONT; a
 * unit test passes a map of its own and records the resumes.
 */
struct pressure_ops {
	/* BPF_MAP_GET_NEXT_KEY (key NULL: the first), _LOOKUP_ELEM, _DELETE_ELEM: 0 or -errno */
	int (*map_call)(int cmd, int map_fd, const void *key, void *value_or_next);
	void (*resume)(pid_t pid);
};

extern const struct pressure_ops pressure_bpf_ops;

/*
 * Resumes every process that back-pressure on one ring stopped, as the
 * pressure_stopped map records (ring_flag: 0 for events, or
 * MT_STOPPED_BY_STACKS): deletes its entry, then sends SIGCONT (in that
 * order, so a process that BPF stops again meanwhile is recorded again,
 * never left stopped).  The first max are stored in out.  Returns how
 * many were resumed, or -errno.
 */
int pressure__release(const struct pressure_ops *ops, int map_fd, uint32_t ring_flag,
		      struct stopped_pid *out, int max);
/* the same for every entry, also the processes stopped for attaching */
int pressure__release_all(int map_fd);
/* resumes a process that was stopped until its new code was inspected */
int pressure__resume_attached(int map_fd, pid_t pid);

/*
 * Forks a guardian that resumes what the map records once memtrack is gone,
 * however it ends (even SIGKILL): it waits for EOF on a socket whose other
 * end memtrack keeps and for memtrack's exit (a pidfd), by which time the
 * kernel has released memtrack's BPF links, closes the links handed over,
 * waits for programs still running (an RCU grace period), and resumes.
 * It keeps uid 0 and CAP_KILL only.  Returns memtrack's end, or -errno.
 */
int pressure__start_guardian(int map_fd);
/*
 * Gives fds (uprobe links) to the guardian, which closes them once memtrack
 * is gone: unregistering uprobes takes tens of ms that memtrack's exit then
 * does not wait for.
 */
int pressure__hand_over(int guardian_fd, const int *fds, int n);
/*
 * Closes the n fds; with n <= SEND_FDS_MAX, the guardian releases the
 * links among them at once, so that memtrack's exit need not wait for them.
 */
int pressure__close_by_guardian(int guardian_fd, const int *fds, int n);
/* gives the guardian the tree's freezer, which it thaws once memtrack is gone */
int pressure__hand_over_freezer(int guardian_fd, int state_fd, const char *thaw_word);

#endif
