// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

#define MAX_HANDED_FDS 256

/* takes fds sent with SCM_RIGHTS; 0 at EOF (memtrack is gone) */
static ssize_t receive_fds(int sock, int *fds, int *nfds)
{
	char data[64], control[CMSG_SPACE(sizeof(int) * 32)];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	if (n <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		int *in = (int *)CMSG_DATA(c), k, count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < count; k++) {
			if (*nfds < MAX_HANDED_FDS)
				fds[(*nfds)++] = in[k];
			else
				close(in[k]);
		}
	}
	return n;
}

static void guardian_main(int sock, int map_fd, const uint32_t *prog_ids, int nprogs)
{
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	int fds[MAX_HANDED_FDS], nfds = 0, i, null_fd;

	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		signal(sigs[i], SIG_IGN);
	prctl(PR_SET_NAME, "memtrack-guard");
	/*
	 * Keep nothing of memtrack's open: not its BPF links, and not its
	 * stdout, or `$(memtrack track ...)` would wait for the guardian.
	 */
	if (dup2(sock, 3) < 0 || dup2(map_fd, 4) < 0)
		_exit(1);
	close_range(5, ~0U, 0);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		if (null_fd > 4)
			close(null_fd);
	}

	for (;;) {
		ssize_t n = receive_fds(3, fds, &nfds);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	/* links memtrack handed over, so that releasing them does not delay its exit */
	for (i = 0; i < nfds; i++)
		close(fds[i]);
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
	int fds[2], high_sock, high_map;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
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
		/* above 4, so that moving them to 3 and 4 clobbers neither */
		high_sock = fcntl(fds[0], F_DUPFD, 5);
		high_map = fcntl(map_fd, F_DUPFD, 5);
		if (high_sock < 0 || high_map < 0)
			_exit(1);
		guardian_main(high_sock, high_map, prog_ids, nprogs);
	}
	close(fds[0]);
	return fds[1];
}

int pressure__hand_over(int guardian_fd, const int *fds, int n)
{
	char control[CMSG_SPACE(sizeof(int) * 32)], byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	int i, chunk;

	for (i = 0; i < n; i += chunk) {
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control,
		};
		struct cmsghdr *c;

		chunk = n - i < 32 ? n - i : 32;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * chunk);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * chunk);
		memcpy(CMSG_DATA(c), fds + i, sizeof(int) * chunk);
		if (sendmsg(guardian_fd, &msg, MSG_NOSIGNAL) < 0)
			return -errno;
	}
	return 0;
}
