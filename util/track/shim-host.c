// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/fd-pass.h"
#include "util/track/shim-host.h"
#include "util/usage.h"
#include "util/util.h"

/*
 * A shim holds one connection: a second while the first is open, or a
 * few, is no shim's.  The host leaves the last descriptors to the rest of
 * memtrack, and takes a burst of connections a slice at a time.
 */
#define CONNS_PER_PROC		4
#define FD_SPARE		64
#define ACCEPTS_PER_CALL	64

enum conn_state { CONN_NONE, CONN_HELLO, CONN_ACCEPTED };

struct conn {
	enum conn_state state;
	pid_t pid;
	pid_t own_pid;		/* in a pid namespace below memtrack's: its pid there, else 0 */
	void *proc;		/* CONN_ACCEPTED: what decide gave */
};

struct shim_host {
	struct shim_host_ops ops;
	struct shim_host_opts opts;
	int listen_fd;
	int reply_fds[2];		/* the control page's and, with dwarf stacks, the CFI rules' */
	int nreply_fds;
	struct shim_control *ctl;
	int epoll_fd;
	int spare_fd;			/* closed to accept, and refuse, when none is left */
	bool listen_off;		/* no descriptor at all: the socket unwatched until one closes */
	int fd_ceiling;			/* a connection's fd at or above it is refused */
	struct conn *conns;		/* by fd */
	size_t conns_cap;
	char env[sizeof(MEMTRACK_SHIM_ENV) + 1 + SHIM_NAME_MAX];
	const char *name;
	ino_t pidns;			/* memtrack's pid namespace */
	struct shim_host_stats st;
};

/* the inode of a process's pid namespace, 0 if unknown */
static ino_t pidns_of(const char *pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* the last number of the NSpid line of a status file: the task's id in its own namespace */
static long own_nspid(const char *status)
{
	char line[256], *p, *end;
	long nr = -1, v;
	FILE *f = fopen(status, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = line + 6; (v = strtol(p, &end, 10)), end != p; p = end)
			nr = v;
		break;
	}
	fclose(f);
	return nr;
}

/*
 * A process of a deeper pid namespace: SO_PEERCRED says its pid as memtrack
 * sees it, the shim says its tids as the process does.  Its pid there, read
 * while its hello waits for the answer; 0 in memtrack's namespace.
 */
static pid_t own_pid_of(const struct shim_host *h, pid_t pid)
{
	char num[16], path[64];
	long own;

	snprintf(num, sizeof(num), "%d", pid);
	if (!h->pidns || pidns_of(num) == h->pidns)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	own = own_nspid(path);
	return own > 0 && own != pid ? own : 0;
}

/*
 * The tid, as memtrack sees it, of the thread that the shim of a process
 * in a deeper namespace calls tid: memtrack's /proc lists both.  The
 * process's word if the thread is gone already.
 */
static uint32_t outer_tid(const struct conn *c, uint32_t tid)
{
	char path[64 + sizeof(((struct dirent *)0)->d_name)];
	struct dirent *d;
	uint32_t found = tid;
	DIR *dir;

	if (!c->own_pid)
		return tid;
	if (tid == (uint32_t)c->own_pid)
		return c->pid;
	snprintf(path, sizeof(path), "/proc/%d/task", c->pid);
	dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", c->pid, d->d_name);
		if (own_nspid(path) == tid) {
			found = strtoul(d->d_name, NULL, 10);
			break;
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

static int create_control(struct shim_host *h)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("memtrack-control", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	h->reply_fds[h->nreply_fds++] = fd;
	if (ftruncate(fd, page))
		return -errno;
	h->ctl = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h->ctl == MAP_FAILED) {
		h->ctl = NULL;
		return -errno;
	}
	h->ctl->magic = SHIM_MAGIC;
	h->ctl->call_graph = h->opts.call_graph;
	h->ctl->flags = h->opts.flags;
	h->ctl->ring_size = h->opts.ring_size;
	/* the shims may map it, but only to read: our mapping alone writes */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
		  F_SEAL_SEAL))
		return -errno;
	return 0;
}

/*
 * The table the shims share their CFI rules in (shim-abi.h), sized once for
 * good.  Without it each process computes its own rules, as before: no
 * reason to fail a run.
 */
static void create_cfi_rules(struct shim_host *h)
{
	int fd;

	if (h->opts.call_graph != MT_CALL_GRAPH_DWARF)
		return;
	fd = memfd_create("memtrack-cfi-rules", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return;
	if (ftruncate(fd, SHIM_RULES_MAP_SIZE) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return;
	}
	h->reply_fds[h->nreply_fds++] = fd;
}

static int create_socket(struct shim_host *h)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	uint64_t nonce = 0;
	int len, fd;

	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		nonce = now_ns();
	len = snprintf(h->env, sizeof(h->env), "%s=memtrack-%d-%016llx", MEMTRACK_SHIM_ENV,
		       getpid(), (unsigned long long)nonce);
	h->name = h->env + sizeof(MEMTRACK_SHIM_ENV);
	len -= sizeof(MEMTRACK_SHIM_ENV);
	memcpy(addr.sun_path + 1, h->name, len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	h->listen_fd = fd;
	if (bind(fd, (struct sockaddr *)&addr, offsetof(struct sockaddr_un, sun_path) + 1 + len) ||
	    listen(fd, SOMAXCONN))
		return -errno;
	return 0;
}

static int fd_ceiling(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) || lim.rlim_cur == RLIM_INFINITY ||
	    lim.rlim_cur > INT32_MAX)
		return INT32_MAX;
	return lim.rlim_cur > 2 * FD_SPARE ? (int)(lim.rlim_cur - FD_SPARE) : (int)lim.rlim_cur / 2;
}

int shim_host__new(struct shim_host **out, const struct shim_host_opts *opts,
		   const struct shim_host_ops *ops)
{
	struct shim_host *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return -ENOMEM;
	h->ops = *ops;
	h->opts = *opts;
	h->listen_fd = h->epoll_fd = -1;
	h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	h->fd_ceiling = fd_ceiling();
	h->pidns = pidns_of("self");
	err = create_control(h);
	if (!err) {
		create_cfi_rules(h);
		err = create_socket(h);
	}
	if (err) {
		shim_host__delete(h);
		return err;
	}
	*out = h;
	return 0;
}

void shim_host__delete(struct shim_host *h)
{
	size_t fd;

	if (!h)
		return;
	for (fd = 0; fd < h->conns_cap; fd++)
		if (h->conns[fd].state != CONN_NONE)
			close(fd);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->ctl)
		munmap(h->ctl, sysconf(_SC_PAGESIZE));
	while (h->nreply_fds)
		close(h->reply_fds[--h->nreply_fds]);
	if (h->spare_fd >= 0)
		close(h->spare_fd);
	free(h->conns);
	free(h);
}

const char *shim_host__env(const struct shim_host *h)
{
	return h->env;
}

static int watch_fd(int epoll_fd, int fd)
{
	if (epoll_fd < 0)
		return 0;	/* flushing: nobody polls any more */
	return epoll_add_fd(epoll_fd, fd, EPOLLIN);
}

int shim_host__watch(struct shim_host *h, int epoll_fd)
{
	h->epoll_fd = epoll_fd;
	return watch_fd(epoll_fd, h->listen_fd);
}

void shim_host__set_asleep(struct shim_host *h, bool asleep)
{
	__atomic_store_n(&h->ctl->poller_asleep, asleep, __ATOMIC_SEQ_CST);
}

static void listen_on(struct shim_host *h, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.fd = h->listen_fd };

	if (h->epoll_fd >= 0 && h->listen_off == on &&
	    !epoll_ctl(h->epoll_fd, EPOLL_CTL_MOD, h->listen_fd, &ev))
		h->listen_off = !on;
}

static void close_conn(struct shim_host *h, int fd)
{
	struct conn *c = &h->conns[fd];

	if (c->state == CONN_ACCEPTED && h->ops.closed)
		h->ops.closed(h->ops.ctx, c->proc);
	c->state = CONN_NONE;
	if (h->epoll_fd >= 0)
		epoll_ctl(h->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	if (h->spare_fd < 0)
		h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	listen_on(h, true);
}

/* room for fd in the table, new entries empty */
static int grow_conns(struct shim_host *h, int fd)
{
	size_t old = h->conns_cap;

	if (grow_array((void **)&h->conns, &h->conns_cap, fd + 1, sizeof(*h->conns)))
		return -ENOMEM;
	memset(h->conns + old, 0, (h->conns_cap - old) * sizeof(*h->conns));
	memset(&h->conns[fd], 0, sizeof(h->conns[fd]));
	return 0;
}

static unsigned int conns_of(const struct shim_host *h, pid_t pid)
{
	unsigned int n = 0;
	size_t fd;

	for (fd = 0; fd < h->conns_cap; fd++)
		n += h->conns[fd].state != CONN_NONE && h->conns[fd].pid == pid;
	return n;
}

/* a tracked process memtrack cannot serve: the run misses its allocations */
static void lost(struct shim_host *h, pid_t pid, const char *why)
{
	h->st.lost++;
	if (h->ops.lost)
		h->ops.lost(h->ops.ctx, pid, why);
}

static pid_t peer_pid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.pid <= 0)
		return 0;
	return cred.pid;
}

static bool is_tracked(struct shim_host *h, pid_t pid)
{
	return pid > 0 && (!h->ops.tracked || h->ops.tracked(h->ops.ctx, pid));
}

/*
 * No descriptor left: the spare one makes room to take the connection, see
 * whose it is and close it, so the socket's queue drains (else it stays
 * readable, and the poller spins on it).  Without even that, the socket
 * is unwatched until a connection closes.  False: stop accepting.
 */
static bool refuse_for_lack_of_fd(struct shim_host *h)
{
	pid_t pid;
	int fd;

	if (h->spare_fd < 0) {
		listen_on(h, false);
		return false;
	}
	close(h->spare_fd);
	fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? (listen_on(h, false), false) : false;
	pid = peer_pid(fd);
	close(fd);
	if (is_tracked(h, pid))
		lost(h, pid, "memtrack had no descriptor left for its connection");
	else
		h->st.strangers++;
	return true;
}

/*
 * Anyone may connect: only a tracked process keeps its connection, and
 * a few of them, below the descriptors the rest of memtrack needs.
 */
static void accept_conns(struct shim_host *h)
{
	unsigned int n;

	for (n = 0; n < ACCEPTS_PER_CALL; n++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		pid_t pid;

		if (fd < 0) {
			if ((errno != EMFILE && errno != ENFILE) || !refuse_for_lack_of_fd(h))
				return;
			continue;
		}
		pid = peer_pid(fd);
		if (!is_tracked(h, pid)) {
			h->st.strangers++;
			close(fd);
			continue;
		}
		if (fd >= h->fd_ceiling) {
			lost(h, pid, "memtrack had no descriptor to spare for its connection");
			close(fd);
			continue;
		}
		if (conns_of(h, pid) >= CONNS_PER_PROC) {
			lost(h, pid, "it opened more connections to memtrack than a shim does");
			close(fd);
			continue;
		}
		if (grow_conns(h, fd) || watch_fd(h->epoll_fd, fd)) {
			lost(h, pid, "memtrack ran out of memory for its connection");
			close(fd);
			continue;
		}
		h->conns[fd].state = CONN_HELLO;
		h->conns[fd].pid = pid;
	}
}

static int send_reply(struct shim_host *h, int fd, bool accept)
{
	char byte = accept ? SHIM_ACCEPT : SHIM_REJECT;

	return send_fds(fd, &byte, 1, h->reply_fds, accept ? h->nreply_fds : 0, MSG_DONTWAIT) == 1 ?
		       0 : -1;
}

/*
 * Another connection of pid that said hello and is still open: its
 * messages taken first, if the process closed it (an exec, a program that
 * closes every descriptor).  True when one is still open.
 */
static bool other_hello_open(struct shim_host *h, int fd, pid_t pid)
{
	size_t other;

	for (other = 0; other < h->conns_cap; other++) {
		struct pollfd pfd = { .fd = other, .events = POLLIN | POLLRDHUP };

		if ((int)other == fd || h->conns[other].state != CONN_ACCEPTED ||
		    h->conns[other].pid != pid)
			continue;
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)))
			shim_host__handle(h, other, EPOLLHUP);
		if (h->conns[other].state == CONN_ACCEPTED)
			return true;
	}
	return false;
}

/* false: the connection is to be closed */
static bool on_hello(struct shim_host *h, int fd, const struct shim_hello *m, size_t n)
{
	struct conn *c = &h->conns[fd];
	void *proc;

	if (n != sizeof(*m) || m->magic != SHIM_MAGIC || m->version != SHIM_VERSION ||
	    c->state != CONN_HELLO)
		return false;
	h->st.hellos++;
	if (other_hello_open(h, fd, c->pid)) {
		/* a shim says hello once per connection it holds, and holds one */
		send_reply(h, fd, false);
		h->st.refused++;
		lost(h, c->pid, "a second connection said hello while its first was open");
		return false;
	}
	/* a hello from the main thread of memtrack's namespace, the common case, costs nothing */
	c->own_pid = m->tid == (uint32_t)c->pid ? 0 : own_pid_of(h, c->pid);
	proc = h->ops.decide(h->ops.ctx, c->pid, m->flags);
	if (send_reply(h, fd, proc != NULL)) {
		/* the process is gone: a shim waits for its answer as long as memtrack lives */
		if (proc && h->ops.closed)
			h->ops.closed(h->ops.ctx, proc);
		return false;
	}
	if (!proc) {
		h->st.refused++;
		return false;
	}
	h->st.accepted++;
	c->state = CONN_ACCEPTED;
	c->proc = proc;
	return true;
}

static bool on_register(struct shim_host *h, int fd, const struct shim_register *m,
			size_t n, int ring_fd)
{
	struct conn *c = &h->conns[fd];
	struct shim_ring r;

	/*
	 * The tid is the process's word (the thread may be gone by now): a
	 * process can only mislabel its own events.  The pid is the kernel's.
	 */
	if (n != sizeof(*m) || ring_fd < 0 || c->state != CONN_ACCEPTED || m->tid <= 0 ||
	    m->size != h->opts.ring_size)
		return false;
	if (shim_ring__map(&r, ring_fd, m->size, c->pid,
			   outer_tid(c, m->tid)))
		return false;
	h->st.rings++;
	if (!h->ops.ring(h->ops.ctx, c->proc, &r))
		shim_ring__unmap(&r);
	return true;
}

/* the tid and errno are the process's word: they can only misreport its own thread */
static bool on_no_ring(struct shim_host *h, int fd, const struct shim_no_ring *m, ssize_t n)
{
	struct conn *c = &h->conns[fd];

	if (n != sizeof(*m) || c->state != CONN_ACCEPTED)
		return false;
	h->st.no_rings++;
	h->ops.no_ring(h->ops.ctx, c->pid, outer_tid(c, m->tid), m->err);
	return true;
}

/*
 * The process's words, printed on memtrack's terminal: of the length said,
 * printable ASCII only, or the connection is closed.
 */
static bool on_warn(struct shim_host *h, int fd, const struct shim_warn *m, ssize_t n)
{
	struct conn *c = &h->conns[fd];
	char text[SHIM_WARN_MAX + 1];
	uint32_t i;

	if (c->state != CONN_ACCEPTED || (size_t)n < offsetof(struct shim_warn, text) ||
	    !m->len || m->len > SHIM_WARN_MAX ||
	    (size_t)n != offsetof(struct shim_warn, text) + m->len)
		return false;
	for (i = 0; i < m->len; i++) {
		if (m->text[i] < 0x20 || m->text[i] > 0x7e)
			return false;
		text[i] = m->text[i];
	}
	text[i] = 0;
	h->st.warnings++;
	if (h->ops.warn)
		h->ops.warn(h->ops.ctx, c->pid, text);
	return true;
}

/* one message; false: close the connection */
static bool read_message(struct shim_host *h, int fd, bool *more)
{
	union {
		__u32 msg;
		struct shim_hello hello;
		struct shim_register reg;
		struct shim_no_ring no_ring;
		struct shim_warn warn;
		char bytes[256];
	} m;
	int ring_fd = -1, nfds;
	ssize_t n = recv_fds(fd, &m, sizeof(m), &ring_fd, 1, &nfds);
	bool ok;

	_Static_assert(sizeof(struct shim_warn) < sizeof(m.bytes), "a full buffer means cut");

	*more = n > 0;
	if (n < 0)
		return n == -EAGAIN;
	if (n == 0)
		return false;
	/* every message is shorter than the buffer: a full one was cut */
	if ((size_t)n < sizeof(m.msg) || (size_t)n == sizeof(m))
		ok = false;
	else if (m.msg == SHIM_HELLO)
		ok = ring_fd < 0 && on_hello(h, fd, &m.hello, n);
	else if (m.msg == SHIM_REGISTER)
		ok = on_register(h, fd, &m.reg, n, ring_fd);
	else if (m.msg == SHIM_NO_RING)
		ok = ring_fd < 0 && on_no_ring(h, fd, &m.no_ring, n);
	else if (m.msg == SHIM_WARN)
		ok = ring_fd < 0 && on_warn(h, fd, &m.warn, n);
	else
		ok = m.msg == SHIM_KICK && n == sizeof(m.msg);
	if (ring_fd >= 0)
		close(ring_fd);
	return ok;
}

bool shim_host__handle(struct shim_host *h, int fd, uint32_t events)
{
	bool more = true;

	if (fd == h->listen_fd) {
		accept_conns(h);
		return true;
	}
	if (fd < 0 || (size_t)fd >= h->conns_cap || h->conns[fd].state == CONN_NONE)
		return false;
	while (more) {
		if (!read_message(h, fd, &more)) {
			h->st.bad += more;
			if (more && h->conns[fd].state == CONN_ACCEPTED)
				lost(h, h->conns[fd].pid, "its shim broke the socket's protocol");
			close_conn(h, fd);
			return true;
		}
	}
	if (events & (EPOLLHUP | EPOLLERR))
		close_conn(h, fd);
	return true;
}

void shim_host__flush(struct shim_host *h)
{
	size_t fd;

	if (!h)
		return;
	h->epoll_fd = -1;	/* the poller's, closed with it */
	accept_conns(h);
	for (fd = 0; fd < h->conns_cap; fd++)
		if (h->conns[fd].state != CONN_NONE)
			shim_host__handle(h, fd, 0);
}

void shim_host__drop(struct shim_host *h, pid_t pid)
{
	size_t fd;

	for (fd = 0; fd < h->conns_cap; fd++)
		if (h->conns[fd].state != CONN_NONE && h->conns[fd].pid == pid)
			close_conn(h, fd);
}

void shim_host__stats(const struct shim_host *h, struct shim_host_stats *st)
{
	*st = h->st;
}

int shim_host__rules_fd(const struct shim_host *h)
{
	return h && h->nreply_fds >= 2 ? h->reply_fds[1] : -1;
}
