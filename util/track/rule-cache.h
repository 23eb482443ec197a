/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_RULE_CACHE_H
#define MEMTRACK_RULE_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The shims' shared CFI rules (preload/shim-abi.h) kept from run to run,
 * in the cache directory, a file per user the tree runs as
 * ("cfi-rules.<uid>"): a run starts with the rules the runs before it
 * computed (a cc1 computes 5,800 of them, 10 ms, a clang 9,200).
 *
 * Trust.  Every process of a tree may write the table, and a rule is the
 * word of whoever wrote it: the shims read it as hostile (a check derived
 * from its key, every stack word read inside the stack), so a wrong one
 * makes a wrong stack, never a fault.  A file is read only by the runs of
 * the user whose trees wrote it, and only if memtrack's own user owns it,
 * alone may write it, and it has the size and header a table file has.
 */
struct rule_cache {
	int dir;		/* the cache directory, -1: none */
	uid_t uid;
	int table;		/* the shared table's memfd, our own descriptor */
	pthread_t loader;
	bool loading;
	bool count;		/* the rules read are counted */
	bool had_file;		/* one was read */
	uint64_t loaded;	/* rules the file held, when counted */
	uint64_t stored;	/* rules the run's shims computed and stored (at finish) */
};

/*
 * Reads the file into the table (fd, dup'd) on a thread of its own: the
 * run need not wait.  count: the rules read are counted (-v).
 */
void rule_cache__start(struct rule_cache *c, int dir, uid_t uid, int table_fd, bool count);
/* until the file is read into the table */
void rule_cache__wait(struct rule_cache *c);
/*
 * Writes the table back if the run's shims computed rules (shim-abi.h's
 * count) and there was no file, or enough of them to be worth the write;
 * closes.
 */
void rule_cache__finish(struct rule_cache *c);
/* the rules read from the file, when counted (after finish: the loader is done) */
uint64_t rule_cache__loaded(const struct rule_cache *c);
/* the rules the run's shims computed (after finish) */
uint64_t rule_cache__stored(const struct rule_cache *c);

/* the rules in a shared table (its used slots), -1 when it cannot be read */
int64_t rule_table__count(int fd);

#endif
