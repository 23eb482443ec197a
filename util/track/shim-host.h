/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SHIM_HOST_H
#define MEMTRACK_SHIM_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/track/shim-ring.h"

/*
 * memtrack's end of the preload shim's socket (preload/shim-abi.h): an
 * abstract unix socket that every shim of the tracked tree connects to,
 * the read-only control page they share, and the eventfd their kicks
 * write.  All of it runs on the thread that polls it (the events poller):
 * no locks.
 *
 * Trust.  Anyone on the machine can connect to an abstract socket: the
 * peer's pid comes from the kernel (SO_PEERCRED) and must be a tracked
 * process when the connection is accepted, or it is closed there; a
 * process keeps a few connections, says hello on one at a time, and
 * the decide callback accepts it; a thread's ring must be a sealed memfd
 * of the size the control page says (its tid is the process's word).  A
 * connection that breaks the protocol is closed.  A tracked process the
 * host cannot serve (no descriptor left, a connection too many) is lost,
 * and said.
 */
struct shim_host;

struct shim_host_ops {
	/* the kernel's pid of a connecting peer: a process of the run (NULL: all are) */
	bool (*tracked)(void *ctx, pid_t pid);
	/* a tracked process the host could not serve: its shim records nothing */
	void (*lost)(void *ctx, pid_t pid, const char *why);
	/*
	 * A process's shim says hello: the handle its connection keeps to take
	 * its records, or NULL to refuse them.  The handle, not the pid, names
	 * the process to the calls below: its exit may have been seen already.
	 */
	void *(*decide)(void *ctx, pid_t pid, uint32_t flags);
	/* a ring of an accepted process; takes it (false: unmap it) */
	bool (*ring)(void *ctx, void *proc, struct shim_ring *r);
	/* a connection of an accepted process ended */
	void (*closed)(void *ctx, void *proc);
	/* a thread of an accepted process could not make its ring (err: its errno) */
	void (*no_ring)(void *ctx, pid_t pid, uint32_t tid, int err);
	/* a warning of an accepted process's shim: printable ASCII, checked */
	void (*warn)(void *ctx, pid_t pid, const char *text);
	void *ctx;
};

struct shim_host_opts {
	uint64_t ring_size;		/* each thread's, a power of two */
	uint32_t call_graph;		/* enum mt_call_graph */
	uint32_t flags;			/* SHIM_CTL_* */
};

/* creates the socket, the control page and the kick eventfd; 0 or -errno */
int shim_host__new(struct shim_host **out, const struct shim_host_opts *opts,
		   const struct shim_host_ops *ops);
void shim_host__delete(struct shim_host *h);
/* "MEMTRACK_SHIM=<name>", for the command's environment */
const char *shim_host__env(const struct shim_host *h);
/* adds the host's fds to an epoll set, with the fd as data */
int shim_host__watch(struct shim_host *h, int epoll_fd);
/* handles the events of one of its fds; false when fd is not the host's */
bool shim_host__handle(struct shim_host *h, int fd, uint32_t events);
/*
 * Once the poller has stopped: takes every message still queued (a ring
 * registered just before its thread's process exited, a connection not
 * accepted yet), so that no ring goes unread at the end of a run.
 */
void shim_host__flush(struct shim_host *h);
/* closes every connection of pid: its shim stops recording */
void shim_host__drop(struct shim_host *h, pid_t pid);
/* the poller goes to sleep (true) or wakes: shims kick only a sleeping poller */
void shim_host__set_asleep(struct shim_host *h, bool asleep);
/* connections and processes seen, refused, and protocol errors */
struct shim_host_stats {
	uint64_t hellos, accepted, refused, rings, no_rings, warnings, bad;
	uint64_t strangers;		/* connections of processes not tracked, closed at once */
	uint64_t lost;			/* tracked processes not served */
};
void shim_host__stats(const struct shim_host *h, struct shim_host_stats *st);
/* the memfd of the shims' shared CFI rules (shim-abi.h); -1: no table (h NULL, no dwarf) */
int shim_host__rules_fd(const struct shim_host *h);

#endif
