/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UPROBE_MULTI_H
#define MEMTRACK_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * One uprobe_multi link (kernel >= 6.6) attaching a loaded program to cnt
 * offsets of one file, with a cookie each (cookies may be NULL), as entry
 * or return probes.  Debian's libbpf 1.1 has no API for it: this is the raw
 * BPF_LINK_CREATE.  The program must have been loaded with expected attach
 * type UPROBE_MULTI_ATTACH_TYPE.  With a pid (not 0), the probes trap in
 * that process only: the kernel puts the breakpoints into no other
 * process's memory (a child it forks inherits them, but not the program).
 * Returns the link fd, or -errno.
 */
#define UPROBE_MULTI_ATTACH_TYPE	48	/* BPF_TRACE_UPROBE_MULTI */

int uprobe_multi__link(int prog_fd, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, unsigned int cnt, bool retprobe, pid_t pid);

#endif
