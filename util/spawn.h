/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SPAWN_H
#define MEMTRACK_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * The tracked command is forked early and held before exec until its pid
 * is in the tracked set, so that none of its allocations escape.
 */
struct spawn {
	pid_t pid;
	int go_fd;
	/* the preload shim for the command's environment, NULL for none */
	const char *preload;		/* its path, put first in LD_PRELOAD */
	const char *preload_var;	/* "MEMTRACK_SHIM=<name>" */
};

struct run_as {
	bool set;
	uid_t uid;
	gid_t gid;
	int nice;	/* the command's, whatever memtrack's own becomes */
};

/* the invoking user under sudo (SUDO_UID/SUDO_GID), when running as root */
void run_as__from_sudo(struct run_as *as);

/*
 * forks, and returns once the child has dropped privileges (or died trying):
 * from then on it allocates nothing until spawn__start() lets it exec argv
 */
int spawn__fork(struct spawn *s, const char *const argv[], const struct run_as *as);
int spawn__start(struct spawn *s);
/* the child exits without running the command */
void spawn__abort(struct spawn *s);

#endif
