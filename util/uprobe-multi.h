/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UPROBE_MULTI_H
#define MEMTRACK_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One uprobe_multi link (kernel >= 6.6) attaching a loaded program to cnt
 * offsets of one file, with a cookie each (cookies may be NULL), as entry
 * or return probes.  Debian's libbpf 1.1 has no API for it: this is the raw
 * BPF_LINK_CREATE.  The program must have been loaded with expected attach
 * type UPROBE_MULTI_ATTACH_TYPE.  Returns the link fd, or -errno.
 */
#define UPROBE_MULTI_ATTACH_TYPE	48	/* BPF_TRACE_UPROBE_MULTI */

int uprobe_multi__link(int prog_fd, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, unsigned int cnt, bool retprobe);

#endif
