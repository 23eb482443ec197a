// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "pressure.h"

#define GUARDIAN_SCAN_US	10000
#define GUARDIAN_MAX_SCANS	6000	/* a minute: programs are freed long before */

static int bpf_map_call(int cmd, int map_fd, const void *key, void *value_or_next)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uintptr_t)key;
	attr.value = (uintptr_t)value_or_next;	/* also next_key */
	return syscall(__NR_bpf, cmd, &attr, sizeof(attr)) ? -errno : 0;
}

#define KEYS_PER_PASS 1024

/* collects up to max keys of the map, from the first */
static int collect_keys(int map_fd, uint32_t *keys, int max)
{
	int n = 0, err;

	err = bpf_map_call(BPF_MAP_GET_NEXT_KEY, map_fd, NULL, &keys[0]);
	while (!err && ++n < max)
		err = bpf_map_call(BPF_MAP_GET_NEXT_KEY, map_fd, &keys[n - 1], &keys[n]);
	return err && err != -ENOENT ? err : n;
}

/* deletes the entry, then resumes the process; false if already gone */
static bool resume_key(int map_fd, uint32_t key, uint64_t *stopped_at)
{
	if (bpf_map_call(BPF_MAP_LOOKUP_ELEM, map_fd, &key, stopped_at))
		*stopped_at = 0;
	if (bpf_map_call(BPF_MAP_DELETE_ELEM, map_fd, &key, NULL))
		return false;	/* someone else released it */
	kill(key & ~MT_STOPPED_FLAGS, SIGCONT);
	return true;
}

/* resumes the entries whose flag bits are flags, or all with flags ~0 */
static int release(int map_fd, uint32_t flags, struct stopped_pid *out, int max)
{
	uint32_t keys[KEYS_PER_PASS];
	int n = 0, found, i;
	bool more;

	do {
		found = collect_keys(map_fd, keys, KEYS_PER_PASS);
		if (found < 0)
			return found;
		more = false;
		for (i = 0; i < found; i++) {
			uint64_t stopped_at;

			if (flags != ~0U && (keys[i] & MT_STOPPED_FLAGS) != flags)
				continue;
			if (!resume_key(map_fd, keys[i], &stopped_at))
				continue;
			more = found == KEYS_PER_PASS;
			if (n < max) {
				out[n].pid = keys[i] & ~MT_STOPPED_FLAGS;
				out[n].stopped_at = stopped_at;
			}
			n++;
		}
	} while (more);
	return n;
}

int pressure__release(int map_fd, uint32_t ring_flag, struct stopped_pid *out, int max)
{
	return release(map_fd, ring_flag, out, max);
}

int pressure__release_all(int map_fd)
{
	return release(map_fd, ~0U, NULL, 0);
}

int pressure__resume_attached(int map_fd, pid_t pid)
{
	uint64_t stopped_at;

	return resume_key(map_fd, (uint32_t)pid | MT_STOPPED_FOR_ATTACH, &stopped_at) ?
	       0 : -ENOENT;
}

static bool program_alive(uint32_t id)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	fd = syscall(__NR_bpf, BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd < 0)
		return errno != ENOENT;
	close(fd);
	return true;
}

static bool any_program_alive(const uint32_t *ids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (program_alive(ids[i]))
			return true;
	return false;
}

static void guardian_main(int pipe_fd, int map_fd, const uint32_t *prog_ids, int nprogs)
{
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	int i;
	char c;

	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		signal(sigs[i], SIG_IGN);
	prctl(PR_SET_NAME, "memtrack-guard");
	/* keep nothing of memtrack's open: above all not its BPF links */
	if (dup2(pipe_fd, 3) < 0 || dup2(map_fd, 4) < 0)
		_exit(1);
	close_range(5, ~0U, 0);

	for (;;) {
		ssize_t n = read(3, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	/*
	 * memtrack is gone, but its programs may still run (and stop
	 * processes) until the kernel has released its links: keep resuming
	 * until they are freed, then once more.
	 */
	for (i = 0; i < GUARDIAN_MAX_SCANS && any_program_alive(prog_ids, nprogs); i++) {
		pressure__release_all(4);
		usleep(GUARDIAN_SCAN_US);
	}
	pressure__release_all(4);
	_exit(0);
}

int pressure__start_guardian(int map_fd, const uint32_t *prog_ids, int nprogs)
{
	int fds[2], high_pipe, high_map;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		close(fds[1]);
		high_pipe = fcntl(fds[0], F_DUPFD, 1000);
		high_map = fcntl(map_fd, F_DUPFD, 1000);
		if (high_pipe < 0 || high_map < 0)
			_exit(1);
		guardian_main(high_pipe, high_map, prog_ids, nprogs);
	}
	close(fds[0]);
	return fds[1];
}
