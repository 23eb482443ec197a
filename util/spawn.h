/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SPAWN_H
#define MEMTRACK_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The tracked command is forked early and held before exec until its pid
 * is in the tracked set, so that none of its allocations escape.
 */
struct spawn {
	pid_t pid;	/* 0 until spawn__wait_ready() where a helper forks it */
	int go_fd;
	int exec_fd;	/* EOF once the command is exec'd, else its errno */
	int ready_fd;	/* EOF once it has dropped privileges */
	int report_fd;	/* the helper's word: the pid, whether in the cgroup */
	pid_t helper;
	/*
	 * A cgroup2 directory for the command to start in (CLONE_INTO_CGROUP),
	 * -1 for none; in_cgroup says whether it did.  Moving a process there
	 * later costs an RCU grace period (11 ms here), starting there nothing.
	 */
	int cgroup_fd;
	bool in_cgroup;
	/* the preload shim for the command's environment, NULL for none */
	const char *preload;		/* its path, put first in LD_PRELOAD */
	const char *preload_var;	/* "MEMTRACK_SHIM=<name>" */
};

struct run_as {
	bool set;
	uid_t uid;
	gid_t gid;
	gid_t *groups;	/* the user's, looked up once: children make no NSS lookup */
	int ngroups;
	char *name, *home;	/* the user's, for USER, LOGNAME and HOME; NULL: unknown */
	int nice;	/* the command's, whatever memtrack's own becomes */
};

/* the invoking user under sudo (SUDO_UID/SUDO_GID, and the user's groups), when running as root */
void run_as__from_sudo(struct run_as *as);

/* becomes the user for good: supplementary groups, gid, uid; 0 or -1 (errno) */
int run_as__drop(const struct run_as *as);

/*
 * fn, as the invoking user when as->set (in a child process that becomes
 * the user, so that the kernel checks the user's rights), else here.  fn
 * returns an fd, or -errno with why filled in (strerror if it did not).
 * Returns what fn returned, an fd being passed back over a socket.  The
 * child makes no NSS lookup (run_as__from_sudo() did): a caller may have
 * threads.
 */
typedef int run_as_fn(void *arg, char *why, size_t why_len);
int run_as__call(const struct run_as *as, run_as_fn *fn, void *arg, char *why,
		 size_t why_len);

/*
 * forks, and returns at once: the child drops privileges and waits while
 * memtrack gets ready (the BPF programs' load), then allocates nothing
 * until spawn__start() lets it exec argv
 */
int spawn__fork(struct spawn *s, const char *const argv[], const struct run_as *as);
/* the child's pid known, and the child ready (or dead); 0 or -errno */
int spawn__wait_ready(struct spawn *s);
int spawn__start(struct spawn *s);
/* after spawn__start(): 0 once the command runs, or why its exec failed */
int spawn__exec_error(struct spawn *s);
/* the child exits without running the command */
void spawn__abort(struct spawn *s);

#endif
