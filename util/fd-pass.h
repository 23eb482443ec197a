/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_FD_PASS_H
#define MEMTRACK_FD_PASS_H

/*
 * Messages with descriptors on a unix socket (SCM_RIGHTS), for memtrack
 * and for the preload shim alike: inline, so that the shim, which links
 * nothing of util/, has the same code; nothing here allocates.
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define SEND_FDS_MAX	32	/* fds in one message */

/*
 * One message of len bytes on a unix socket, with n fds (at most
 * SEND_FDS_MAX) passed along (SCM_RIGHTS); MSG_NOSIGNAL is added to
 * flags.  Returns the bytes sent, or -errno.
 */
static inline ssize_t send_fds(int sock, const void *buf, size_t len, const int *fds, int n, int flags)
{
	char control[CMSG_SPACE(sizeof(int) * SEND_FDS_MAX)];
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t sent;

	if (n > SEND_FDS_MAX)
		return -EINVAL;
	if (n > 0) {
		msg.msg_control = control;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	sent = sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
	return sent < 0 ? -errno : sent;
}

/*
 * One message into buf, the fds passed along into fds (at most max, the
 * others closed; O_CLOEXEC), their number in *nfds.  Returns the bytes
 * read (0 at EOF), or -errno; EINTR is retried.
 */
static inline ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, int max, int *nfds)
{
	char control[CMSG_SPACE(sizeof(int) * SEND_FDS_MAX)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t got;

	*nfds = 0;
	do
		got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		const int *in = (const int *)CMSG_DATA(c);
		size_t k, count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < count; k++) {
			if (*nfds < max)
				fds[(*nfds)++] = in[k];
			else
				close(in[k]);
		}
	}
	return got;
}

#endif
