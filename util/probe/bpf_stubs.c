// SPDX-License-Identifier: GPL-2.0
/*
 * Built with BUILD_BPF_SKEL=0: there is no BPF object, so track cannot run;
 * bpf_track__open() says so, and nothing else is ever reached.
 */
#include <errno.h>
#include <stddef.h>

#include "util/probe/bpf_track.h"

int bpf_track__open(struct bpf_track **out, const struct bpf_track_opts *opts)
{
	(void)opts;
	*out = NULL;
	return -EOPNOTSUPP;
}

int bpf_track__wait_loaded(struct bpf_track *t)
{
	(void)t;
	return -EOPNOTSUPP;
}

void bpf_track__command_starts(struct bpf_track *t)
{
	(void)t;
}

int bpf_track__attach_libc(struct bpf_track *t, const char **path)
{
	(void)t;
	*path = NULL;
	return -EOPNOTSUPP;
}

int bpf_track__inspect_process(struct bpf_track *t, pid_t pid, enum link_want want,
			       struct code_scan *scan)
{
	(void)t, (void)pid, (void)want, (void)scan;
	return -EOPNOTSUPP;
}

int bpf_track__inspect_maps(struct bpf_track *t, pid_t pid, const struct proc_exec_maps *maps,
			    enum link_want want, struct code_scan *scan)
{
	(void)t, (void)pid, (void)maps, (void)want, (void)scan;
	return -EOPNOTSUPP;
}

int bpf_track__prelink(struct bpf_track *t, pid_t pid, const char *path)
{
	(void)t, (void)pid, (void)path;
	return -EOPNOTSUPP;
}

void bpf_track__count_fork(struct bpf_track *t, pid_t parent, pid_t child)
{
	(void)t, (void)parent, (void)child;
}

void bpf_track__unlink_process(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
}

unsigned int bpf_track__wrapper_frames(struct bpf_track *t, pid_t pid, const uint64_t *ips,
				       unsigned int nr)
{
	(void)t, (void)pid, (void)ips, (void)nr;
	return 0;
}

void bpf_track__fork_wrappers(struct bpf_track *t, pid_t parent, pid_t child)
{
	(void)t, (void)parent, (void)child;
}

void bpf_track__forget_wrappers(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
}

int bpf_track__check_probes(struct bpf_track *t)
{
	(void)t;
	return -EOPNOTSUPP;
}

int bpf_track__exe_ok(struct bpf_track *t, const struct mt_exe_key *key)
{
	(void)t, (void)key;
	return -EOPNOTSUPP;
}

int bpf_track__root_ok(struct bpf_track *t, uint64_t root)
{
	(void)t, (void)root;
	return -EOPNOTSUPP;
}

int bpf_track__resume_attached(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
	return -EOPNOTSUPP;
}

unsigned int bpf_track__probe_failures(struct bpf_track *t)
{
	(void)t;
	return 0;
}

int bpf_track__set_mode(struct bpf_track *t, pid_t pid, enum mt_mode mode)
{
	(void)t, (void)pid, (void)mode;
	return -EOPNOTSUPP;
}

void bpf_track__untrack(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
}

unsigned int bpf_track__tracked(struct bpf_track *t)
{
	(void)t;
	return 0;
}

void bpf_track__let_shim_wait(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
}

bool bpf_track__shim_waits(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
	return false;
}

int bpf_track__mode(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
	return 0;
}

int bpf_track__set_stack_end(struct bpf_track *t, uint32_t tid, uint64_t end)
{
	(void)t, (void)tid, (void)end;
	return -EOPNOTSUPP;
}

int bpf_track__ring_fd(struct bpf_track *t, enum mt_ring_id ring)
{
	(void)t, (void)ring;
	return -EOPNOTSUPP;
}

int bpf_track__pressure_fd(struct bpf_track *t)
{
	(void)t;
	return -EOPNOTSUPP;
}

void bpf_track__use_guardian(struct bpf_track *t, int guardian_fd)
{
	(void)t, (void)guardian_fd;
}

const volatile uint64_t *bpf_track__pressure_stops(struct bpf_track *t)
{
	(void)t;
	return NULL;
}

uint64_t bpf_track__holds_ended_early(struct bpf_track *t)
{
	(void)t;
	return 0;
}

uint64_t bpf_track__drops(struct bpf_track *t, enum mt_ring_id ring)
{
	(void)t, (void)ring;
	return 0;
}

uint64_t bpf_track__their_stop(struct bpf_track *t, pid_t pid)
{
	(void)t, (void)pid;
	return 0;
}

uint64_t bpf_track__probe_runs(struct bpf_track *t, enum mt_probe_id probe)
{
	(void)t, (void)probe;
	return 0;
}

void bpf_track__stop_tracing(struct bpf_track *t)
{
	(void)t;
}

void bpf_track__detach(struct bpf_track *t, int guardian_fd)
{
	(void)t, (void)guardian_fd;
}

void bpf_track__close(struct bpf_track *t)
{
	(void)t;
}
