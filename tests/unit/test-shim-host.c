// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack's end of the shim's socket (util/track/shim-host.c), with this test
 * as the shim: a hello is answered, a ring registration is taken, and a
 * registration still queued when the poller stops is taken by
 * shim_host__flush() (a process that registered its ring and exited just
 * before the end of a run lost all its events before it existed), as is
 * a connection never accepted; a thread without a ring is told, once the
 * process is accepted, and a malformed word of it ends the connection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "util/fd-pass.h"
#include "util/track/shim-host.h"
#include "util/util.h"

#define RING_SIZE	(64U << 10)

struct seen {
	bool strangers;			/* no peer is a tracked process */
	unsigned int hellos, rings, closed, no_rings, warnings, lost;
	char warning[SHIM_WARN_MAX + 1];
	pid_t ring_pid;
	int32_t ring_tid;
	uint32_t no_ring_tid;
	int no_ring_err;
};

static bool tracked(void *ctx, pid_t pid)
{
	(void)pid;
	return !((struct seen *)ctx)->strangers;
}

static void lost(void *ctx, pid_t pid, const char *why)
{
	(void)pid;
	(void)why;
	((struct seen *)ctx)->lost++;
}

static void *decide(void *ctx, pid_t pid, uint32_t flags)
{
	(void)pid;
	(void)flags;
	((struct seen *)ctx)->hellos++;
	return ctx;
}

static bool take_ring(void *ctx, void *proc, struct shim_ring *r)
{
	struct seen *s = ctx;

	CHECK(proc == ctx, "a ring comes with the handle of its hello");
	s->rings++;
	s->ring_pid = r->pid;
	s->ring_tid = r->tid;
	return false;	/* the host unmaps it */
}

static void closed(void *ctx, void *proc)
{
	CHECK(proc == ctx, "a connection ends with the handle of its hello");
	((struct seen *)ctx)->closed++;
}

static void no_ring(void *ctx, pid_t pid, uint32_t tid, int err)
{
	struct seen *s = ctx;

	(void)pid;
	s->no_rings++;
	s->no_ring_tid = tid;
	s->no_ring_err = err;
}

static void warn(void *ctx, pid_t pid, const char *text)
{
	struct seen *s = ctx;

	(void)pid;
	s->warnings++;
	snprintf(s->warning, sizeof(s->warning), "%s", text);
}

/* a connection to the host, as a shim makes it */
static int shim_connect(struct shim_host *h)
{
	const char *name = strchr(shim_host__env(h), '=') + 1;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };	/* an answer that never comes fails, not hangs */
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memcpy(addr.sun_path + 1, name, strlen(name));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr,
			       offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_hello(int sock)
{
	struct shim_hello m = {
		.msg = SHIM_HELLO, .magic = SHIM_MAGIC, .version = SHIM_VERSION, .tid = 1,
	};

	CHECK(send(sock, &m, sizeof(m), 0) == sizeof(m));
}

static void send_ring_of(int sock, int32_t tid, uint64_t size)
{
	struct shim_register m = { .msg = SHIM_REGISTER, .tid = tid, .size = size };
	int fd = memfd_create("test-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	CHECK(fd >= 0 && !ftruncate(fd, SHIM_HDR_SIZE + size) &&
	      !fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW));
	CHECK(send_fds(sock, &m, sizeof(m), &fd, 1, 0) == sizeof(m));
	close(fd);
}

static void send_ring(int sock, int32_t tid)
{
	send_ring_of(sock, tid, RING_SIZE);
}

/* one round of the poller: every event of the host's fds */
static void poll_once(struct shim_host *h, int epfd)
{
	struct epoll_event ev[8];
	int n = epoll_wait(epfd, ev, 8, 1000), i;

	for (i = 0; i < n; i++)
		shim_host__handle(h, ev[i].data.fd, ev[i].events);
}

static char reply(int sock)
{
	char byte = 0;
	int ctl = -1, nfds = 0;

	CHECK(recv_fds(sock, &byte, 1, &ctl, 1, &nfds) == 1);
	if (ctl >= 0)
		close(ctl);
	return byte;
}

/* a host that tells s, its fds in the epoll set epfd; NULL if it cannot be made */
static struct shim_host *new_host(struct seen *s, int epfd)
{
	struct shim_host_opts o = { .ring_size = RING_SIZE };
	struct shim_host_ops ops = {
		.tracked = tracked, .lost = lost, .decide = decide, .ring = take_ring,
		.closed = closed, .no_ring = no_ring, .warn = warn, .ctx = s,
	};
	struct shim_host *h = NULL;

	CHECK(!shim_host__new(&h, &o, &ops));
	if (h)
		CHECK(!shim_host__watch(h, epfd));
	return h;
}

/* a connection whose hello the polling host accepted */
static int accepted_conn(struct shim_host *h, int epfd, const char *what)
{
	int a = shim_connect(h);

	CHECK(a >= 0);
	send_hello(a);
	poll_once(h, epfd);	/* the connection */
	poll_once(h, epfd);	/* its hello */
	CHECK_U64(reply(a), SHIM_ACCEPT, what);
	return a;
}

static void test_flush_takes_queued_rings(void)
{
	struct seen s = { 0 };
	int epfd = epoll_create1(EPOLL_CLOEXEC), a, b;
	struct shim_host *h = new_host(&s, epfd);

	if (!h)
		return;
	/* accepted while the poller runs */
	a = accepted_conn(h, epfd, "the hello is accepted");
	send_ring(a, 4242);
	poll_once(h, epfd);
	CHECK_U64(s.rings, 1, "a ring registered while the poller runs is taken");

	/* the poller has stopped: a ring still queued, then the thread's process exits */
	send_ring(a, 4343);
	close(a);
	close(epfd);
	/* a connection the poller never accepted, its hello queued */
	b = shim_connect(h);
	CHECK(b >= 0);
	send_hello(b);

	shim_host__flush(h);
	CHECK_U64(s.rings, 2, "flush: the queued ring is taken");
	CHECK_U64(s.ring_tid, 4343, "flush: with its thread");
	CHECK_U64(s.ring_pid, getpid(), "flush: and the peer's pid");
	CHECK_U64(s.closed, 1, "flush: the closed connection is seen as closed");
	CHECK_U64(s.hellos, 2, "flush: the connection never accepted says hello");
	CHECK_U64(reply(b), SHIM_ACCEPT, "flush: and is answered");
	close(b);
	shim_host__delete(h);
}

static void test_no_ring(void)
{
	struct seen s = { 0 };
	struct shim_no_ring m = { .msg = SHIM_NO_RING, .tid = 777, .err = EMFILE };
	struct shim_host_stats st;
	int epfd = epoll_create1(EPOLL_CLOEXEC), a;
	struct shim_host *h = new_host(&s, epfd);

	if (!h)
		return;
	a = accepted_conn(h, epfd, "no ring: the hello is accepted");
	CHECK(send(a, &m, sizeof(m), 0) == sizeof(m));
	poll_once(h, epfd);
	CHECK_U64(s.no_rings, 1, "no ring: told");
	CHECK_U64(s.no_ring_tid, 777, "no ring: which thread");
	CHECK_U64(s.no_ring_err, EMFILE, "no ring: and why");
	/* cut short: a protocol error, the connection ends */
	CHECK(send(a, &m, sizeof(m) - 4, 0) == sizeof(m) - 4);
	poll_once(h, epfd);
	CHECK_U64(s.no_rings, 1, "no ring: a short message is not taken");
	CHECK_U64(s.closed, 1, "no ring: it closes the connection");
	shim_host__stats(h, &st);
	CHECK_U64(st.bad, 1, "no ring: and counts as bad");
	close(a);
	close(epfd);
	shim_host__delete(h);
}

/* a warning of len bytes of text, sent as size bytes */
static void send_warn(int sock, const char *text, uint32_t len, size_t size)
{
	struct shim_warn m = { .msg = SHIM_WARN, .len = len };

	memcpy(m.text, text, strlen(text) < sizeof(m.text) ? strlen(text) : sizeof(m.text));
	CHECK(send(sock, &m, size, 0) == (ssize_t)size);
}

#define WARN_HEAD	offsetof(struct shim_warn, text)

/* each a protocol error: the warning is not printed, the connection ends */
static void check_bad_warning(const char *text, uint32_t len, size_t size, const char *what)
{
	struct seen s = { 0 };
	struct shim_host_stats st;
	int epfd = epoll_create1(EPOLL_CLOEXEC), a;
	struct shim_host *h = new_host(&s, epfd);

	if (!h)
		return;
	a = accepted_conn(h, epfd, what);
	send_warn(a, text, len, size);
	poll_once(h, epfd);
	shim_host__stats(h, &st);
	CHECK(!s.warnings && s.closed == 1 && st.bad == 1, "%s: %u told, %u closed, %lu bad",
	      what, s.warnings, s.closed, (unsigned long)st.bad);
	close(a);
	close(epfd);
	shim_host__delete(h);
}

static void test_warn(void)
{
	struct seen s = { 0 };
	int epfd = epoll_create1(EPOLL_CLOEXEC), a, b;
	struct shim_host *h = new_host(&s, epfd);
	char longest[SHIM_WARN_MAX + 1];

	if (!h)
		return;
	/* before its hello, a connection may say nothing */
	b = shim_connect(h);
	send_warn(b, "early", 5, WARN_HEAD + 5);
	poll_once(h, epfd);
	poll_once(h, epfd);
	CHECK(!s.warnings && s.hellos == 0, "warn: not before the hello");

	a = accepted_conn(h, epfd, "warn: the hello is accepted");
	send_warn(a, "cannot do that: No such file", 28, WARN_HEAD + 28);
	poll_once(h, epfd);
	CHECK_U64(s.warnings, 1, "warn: told");
	CHECK_STR(s.warning, "cannot do that: No such file", "warn: the text");
	memset(longest, '~', SHIM_WARN_MAX);
	longest[SHIM_WARN_MAX] = 0;
	send_warn(a, longest, SHIM_WARN_MAX, WARN_HEAD + SHIM_WARN_MAX);
	poll_once(h, epfd);
	CHECK_U64(s.warnings, 2, "warn: the longest");
	CHECK_STR(s.warning, longest, "warn: all of it");
	close(a);
	close(b);
	close(epfd);
	shim_host__delete(h);

	check_bad_warning("bell\a", 5, WARN_HEAD + 5, "warn: a control character");
	check_bad_warning("esc\033[2J", 7, WARN_HEAD + 7, "warn: an escape sequence");
	check_bad_warning("caf\xc3\xa9", 5, WARN_HEAD + 5, "warn: a byte past ASCII");
	check_bad_warning("nul\0x", 5, WARN_HEAD + 5, "warn: a NUL inside");
	check_bad_warning("short", 10, WARN_HEAD + 5, "warn: a length past the message");
	check_bad_warning("long enough", 4, WARN_HEAD + 11, "warn: a message past its length");
	check_bad_warning("", 0, WARN_HEAD, "warn: empty");
	check_bad_warning(longest, SHIM_WARN_MAX + 1, WARN_HEAD + SHIM_WARN_MAX,
			  "warn: a length past the most");
	check_bad_warning("x", 1, 6, "warn: cut in its head");
}

/* the peer, from the other end: closed (0), or still open (-1) */
static int peer_closed(int sock)
{
	char byte;

	return recv(sock, &byte, 1, MSG_DONTWAIT) == 0 ? 0 : -1;
}

/*
 * What no shim does: a process not tracked connects (closed at once, or
 * anyone could hold memtrack's descriptors), a second hello while the
 * first connection is open, a ring of a size the control page did not say.
 */
static void test_hostile_peers(void)
{
	struct shim_host_stats st;
	struct seen s = { .strangers = true };
	int epfd = epoll_create1(EPOLL_CLOEXEC), a, b;
	struct shim_host *h = new_host(&s, epfd);

	if (!h)
		return;
	a = shim_connect(h);
	CHECK(a >= 0);
	poll_once(h, epfd);
	CHECK_U64(peer_closed(a), 0, "stranger: closed at accept, before a word");
	shim_host__stats(h, &st);
	CHECK_U64(st.strangers, 1, "stranger: counted");
	CHECK_U64(s.lost, 0, "stranger: no tracked process is lost");
	close(a);

	s.strangers = false;
	a = accepted_conn(h, epfd, "first hello: accepted");
	b = shim_connect(h);
	CHECK(b >= 0);
	send_hello(b);
	poll_once(h, epfd);
	poll_once(h, epfd);
	CHECK_U64(reply(b), SHIM_REJECT, "second hello while the first connection is open: refused");
	CHECK_U64(s.lost, 1, "second hello: the process is said to be lost");
	close(b);

	send_ring_of(a, 4242, 2 * RING_SIZE);
	poll_once(h, epfd);
	CHECK_U64(s.rings, 0, "a ring of another size than the control page's: refused");
	CHECK_U64(peer_closed(a), 0, "and the connection closed");
	close(a);

	/* the first connection closed (an exec): a new hello is the new image's */
	a = accepted_conn(h, epfd, "after the close, a hello is accepted");
	close(a);
	close(epfd);
	shim_host__delete(h);
}

int main(void)
{
	test_hostile_peers();
	test_flush_takes_queued_rings();
	test_no_ring();
	test_warn();
	return test_done("test-shim-host");
}
