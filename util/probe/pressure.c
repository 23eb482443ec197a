// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "util/fd-pass.h"
#include "util/probe/pressure.h"
#include "util/util.h"

#define GUARDIAN_ROUNDS		3

static int bpf_map_call(int cmd, int map_fd, const void *key, void *value_or_next)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = map_fd;
	attr.key = (uintptr_t)key;
	attr.value = (uintptr_t)value_or_next;	/* also next_key */
	return syscall(__NR_bpf, cmd, &attr, sizeof(attr)) ? -errno : 0;
}

static void send_sigcont(pid_t pid)
{
	kill(pid, SIGCONT);
}

const struct pressure_ops pressure_bpf_ops = {
	.map_call = bpf_map_call,
	.resume = send_sigcont,
};

#define KEYS_PER_PASS 1024

/* collects up to max keys of the map, from the first */
static int collect_keys(const struct pressure_ops *ops, int map_fd, uint32_t *keys, int max)
{
	int n = 0, err;

	err = ops->map_call(BPF_MAP_GET_NEXT_KEY, map_fd, NULL, &keys[0]);
	while (!err && ++n < max)
		err = ops->map_call(BPF_MAP_GET_NEXT_KEY, map_fd, &keys[n - 1], &keys[n]);
	return err && err != -ENOENT ? err : n;
}

/*
 * Deletes the entry, then resumes the process, unless someone else has
 * stopped it too: then the stop is theirs to end.  False if already gone.
 */
static bool resume_key(const struct pressure_ops *ops, int map_fd, uint32_t key,
		       uint64_t *stopped_at)
{
	bool theirs;

	if (ops->map_call(BPF_MAP_LOOKUP_ELEM, map_fd, &key, stopped_at))
		*stopped_at = 0;
	theirs = *stopped_at & MT_STOPPED_THEIRS;
	*stopped_at &= ~MT_STOPPED_VALUE_FLAGS;
	if (ops->map_call(BPF_MAP_DELETE_ELEM, map_fd, &key, NULL))
		return false;	/* someone else released it */
	if (!theirs)
		ops->resume(key & ~MT_STOPPED_FLAGS);
	return true;
}

/* resumes the entries whose flag bits are flags, or all with flags ~0 */
static int release(const struct pressure_ops *ops, int map_fd, uint32_t flags,
		   struct stopped_pid *out, int max)
{
	uint32_t keys[KEYS_PER_PASS];
	int n = 0, found, i;
	bool more;

	do {
		found = collect_keys(ops, map_fd, keys, KEYS_PER_PASS);
		if (found < 0)
			return found;
		more = false;
		for (i = 0; i < found; i++) {
			uint64_t stopped_at;

			if (flags != ~0U && (keys[i] & MT_STOPPED_FLAGS) != flags)
				continue;
			if (!resume_key(ops, map_fd, keys[i], &stopped_at))
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

int pressure__release(const struct pressure_ops *ops, int map_fd, uint32_t ring_flag,
		      struct stopped_pid *out, int max)
{
	return release(ops, map_fd, ring_flag, out, max);
}

int pressure__release_all(int map_fd)
{
	return release(&pressure_bpf_ops, map_fd, ~0U, NULL, 0);
}

int pressure__resume_attached(int map_fd, pid_t pid)
{
	uint64_t stopped_at;

	return resume_key(&pressure_bpf_ops, map_fd, (uint32_t)pid | MT_STOPPED_FOR_ATTACH,
			  &stopped_at) ? 0 : -ENOENT;
}

/*
 * What the guardian needs: to signal processes of any user (CAP_KILL) and
 * the map it holds open (an fd needs no capability).  It keeps uid 0, so
 * that no other user may signal it: under another uid, that user's
 * processes could kill it and leave theirs and others' stopped.
 */
static int keep_only_cap_kill(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	int cap;

	for (cap = 0; cap < 64; cap++)
		if (cap != CAP_KILL && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	data[0].effective = data[0].permitted = 1u << CAP_KILL;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

#define MAX_HANDED_FDS 256

/* 3: the socket, 4: the map, 5: memtrack's pidfd; stdio on /dev/null */
static void guardian_setup(int sock, int map_fd, int pidfd)
{
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP };
	int i, null_fd;

	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		signal(sigs[i], SIG_IGN);
	prctl(PR_SET_NAME, "memtrack-guard");
	/*
	 * Keep nothing of memtrack's open: not its BPF links, and not its
	 * stdout, or `$(memtrack track ...)` would wait for the guardian.
	 */
	if (dup2(sock, 3) < 0 || dup2(map_fd, 4) < 0 || dup2(pidfd, 5) < 0)
		_exit(1);
	close_range(6, ~0U, 0);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		dup2(null_fd, 2);
		if (null_fd > 5)
			close(null_fd);
	}
	/* nothing left to do with more; should it fail, resuming matters more */
	keep_only_cap_kill();
}

/*
 * A message: 0 and links to close once memtrack is gone; CLOSE_MSG and
 * links to close at CLOSED_MSG, which says memtrack closed its copies (the
 * last close is the slow one, and must be ours); or FREEZER_MSG, the thaw
 * word, and the freezer's fd.
 */
#define CLOSE_MSG	'C'
#define CLOSED_MSG	'D'
#define FREEZER_MSG	'F'
#define MAX_WORD	16

static void close_fds(const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

struct handed {
	int kept[MAX_HANDED_FDS], nkept;	/* closed once memtrack is gone */
	int closing[SEND_FDS_MAX], nclosing;	/* closed at CLOSED_MSG */
	int freezer_fd;
	char thaw[MAX_WORD];
};

static void take_message(struct handed *h, const char *msg, ssize_t len, int *fds, int n)
{
	int i;

	if (msg[0] == FREEZER_MSG && len > 1 && n == 1 && h->freezer_fd < 0) {
		h->freezer_fd = fds[0];
		snprintf(h->thaw, sizeof(h->thaw), "%.*s", (int)(len - 1), msg + 1);
		return;
	}
	if (msg[0] == CLOSE_MSG || msg[0] == CLOSED_MSG) {
		close_fds(h->closing, h->nclosing);
		h->nclosing = 0;
	}
	if (msg[0] == CLOSE_MSG) {
		memcpy(h->closing, fds, n * sizeof(*fds));
		h->nclosing = n;
		return;
	}
	for (i = 0; i < n; i++) {
		if (msg[0] == 0 && h->nkept < MAX_HANDED_FDS)
			h->kept[h->nkept++] = fds[i];
		else
			close(fds[i]);
	}
}

static void guardian_main(int sock, int map_fd, int pidfd)
{
	struct pollfd exited = { .fd = 5, .events = POLLIN };
	struct handed h = { .freezer_fd = -1 };
	int i;

	guardian_setup(sock, map_fd, pidfd);
	/* links memtrack hands over, until EOF: memtrack is gone */
	for (;;) {
		char msg[1 + MAX_WORD];
		int fds[SEND_FDS_MAX], n;
		ssize_t len = recv_fds(3, msg, sizeof(msg), fds, SEND_FDS_MAX, &n);

		if (len <= 0)
			break;
		take_message(&h, msg, len, fds, n);
	}
	/* memtrack is gone: a tree it froze runs again (no one to tell of a failure) */
	if (h.freezer_fd >= 0) {
		ssize_t n = pwrite(h.freezer_fd, h.thaw, strlen(h.thaw), 0);

		(void)n;
	}
	/* links memtrack handed over, so that releasing them does not delay its exit */
	close_fds(h.closing, h.nclosing);
	close_fds(h.kept, h.nkept);
	/*
	 * The kernel releases the links of an exiting process before its
	 * pidfd says it has exited (exit_files, exit_task_work, then
	 * exit_notify), and releasing a uprobe link waits for its running
	 * handlers.  Tracepoint programs that started before may still be
	 * running: one RCU grace period later (membarrier), none is.
	 */
	while (poll(&exited, 1, -1) < 0 && errno == EINTR)
		;
	for (i = 0; i < GUARDIAN_ROUNDS; i++) {
		syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
		pressure__release_all(4);
	}
	_exit(0);
}

int pressure__start_guardian(int map_fd)
{
	int fds[2], pidfd, high[3];
	pid_t pid;

	pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds)) {
		close(pidfd);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		close(pidfd);
		return err;
	}
	if (pid == 0) {
		close(fds[1]);
		/* above 5, so that moving them to 3, 4 and 5 clobbers none */
		high[0] = fcntl(fds[0], F_DUPFD, 6);
		high[1] = fcntl(map_fd, F_DUPFD, 6);
		high[2] = fcntl(pidfd, F_DUPFD, 6);
		if (high[0] < 0 || high[1] < 0 || high[2] < 0)
			_exit(1);
		guardian_main(high[0], high[1], high[2]);
	}
	close(fds[0]);
	close(pidfd);
	return fds[1];
}

static int hand_over(int guardian_fd, char byte, const int *fds, int n)
{
	int i, chunk;

	for (i = 0; i < n; i += chunk) {
		ssize_t sent;

		chunk = n - i < SEND_FDS_MAX ? n - i : SEND_FDS_MAX;
		sent = send_fds(guardian_fd, &byte, 1, fds + i, chunk, 0);
		if (sent < 0)
			return sent;
	}
	return 0;
}

int pressure__hand_over(int guardian_fd, const int *fds, int n)
{
	return hand_over(guardian_fd, 0, fds, n);
}

int pressure__close_by_guardian(int guardian_fd, const int *fds, int n)
{
	const char close_msg = CLOSE_MSG, closed_msg = CLOSED_MSG;
	ssize_t err = n > SEND_FDS_MAX ? -EINVAL : send_fds(guardian_fd, &close_msg, 1, fds, n, 0);
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
	if (err >= 0)
		err = send_fds(guardian_fd, &closed_msg, 1, NULL, 0, 0);
	return err < 0 ? (int)err : 0;
}

int pressure__hand_over_freezer(int guardian_fd, int state_fd, const char *thaw_word)
{
	char msg[1 + MAX_WORD];
	size_t len = strlen(thaw_word);
	ssize_t sent;

	if (len >= MAX_WORD)
		return -EINVAL;
	msg[0] = FREEZER_MSG;
	memcpy(msg + 1, thaw_word, len);
	sent = send_fds(guardian_fd, msg, 1 + len, &state_fd, 1, 0);
	return sent < 0 ? (int)sent : 0;
}
