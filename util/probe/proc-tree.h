/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PROC_TREE_H
#define MEMTRACK_PROC_TREE_H

#include <stddef.h>
#include <sys/types.h>

#include "util/probe/proc-table.h"

/*
 * The processes running now under some roots, read from /proc: the roots
 * and all their descendants, each once, but for the subtree of except (a
 * descendant that is not to be counted in).  Returns the count (*pids is
 * malloc'ed), or -errno.
 */
int proc_tree__collect(const pid_t *roots, size_t nroots, pid_t except, pid_t **pids);

/* fills what /proc tells of pid (ppid, comm, exe) into p */
int proc_tree__describe(pid_t pid, struct process *p);

/* pid's command line, its arguments joined by spaces (at most 4 KiB of
 * it), malloc'ed; NULL when it has none (a kernel thread, a zombie) or is gone */
char *proc_tree__cmdline(pid_t pid);

#endif
