/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_LINK_CLOSER_H
#define MEMTRACK_LINK_CLOSER_H

/*
 * Closes fds on a thread of its own: releasing a uprobe link takes the
 * kernel milliseconds (it waits for the probes' users to be gone), which
 * the events poller, whose thread frees a process's links, must not wait.
 */
struct link_closer;

struct link_closer *link_closer__new(void);
/* from now on the links are released by the guardian (pressure.h), not here */
void link_closer__use_guardian(struct link_closer *c, int guardian_fd);
/* fd < 0 is ignored; an fd that cannot be queued is closed at once */
void link_closer__close(struct link_closer *c, int fd);
/*
 * Stops the thread once it has closed the fd it is closing; the fds still
 * queued are the caller's (*left, free() it).  Returns how many.
 */
size_t link_closer__stop(struct link_closer *c, int **left);
/* closes what is queued, and stops the thread */
void link_closer__delete(struct link_closer *c);

#endif
