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
 * Resumes every process recorded in the pressure_stopped map: deletes its
 * entry, then sends SIGCONT (in that order, so a process that BPF stops
 * again meanwhile is recorded again, never left stopped).  The first max
 * are stored in out.  Returns how many were resumed, or -errno.
 */
int pressure__release(int map_fd, struct stopped_pid *out, int max);

/*
 * Forks a guardian that resumes what the map records once memtrack is gone,
 * however it ends (even SIGKILL): it waits for EOF on a pipe whose write end
 * memtrack keeps.  Returns the write end, or -errno.
 */
int pressure__start_guardian(int map_fd);

#endif
