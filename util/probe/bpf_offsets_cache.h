/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_OFFSETS_CACHE_H
#define MEMTRACK_BPF_OFFSETS_CACHE_H

#include <linux/types.h>

#include "bpf/memtrack.h"

/*
 * The kernel's offsets (bpf_kernel_offsets.h) kept for the rest of the
 * boot they were read in: reading them from the kernel's BTF is 1.6 ms of
 * every run's start, on its way.
 *
 * Trust.  The probes read kernel memory at these offsets and put what they
 * read into events: an offset that someone else chose would make root's
 * probes read what it points at.  So only root keeps them, in a directory
 * of tmpfs only root may write (/run/memtrack, gone at the next boot), in a
 * file only root may write, with the size, boot id, BTF size and field
 * list of the run that reads it; anything else is read from the BTF again.
 */
struct offsets_key {
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id, NUL-padded */
	__u64 btf_size;		/* of /sys/kernel/btf/vmlinux */
	__u32 layout;		/* kernel_offsets__layout(): the fields memtrack reads */
	__u32 pad;
};

/* this boot's key; 0 or -errno */
int offsets_cache__key(struct offsets_key *k);
/* the offsets kept in dir under k; 0, or -ENOENT when there are none to trust */
int offsets_cache__load(int dir, const struct offsets_key *k, struct mt_kernel_offsets *ko);
/* keeps them (a new file renamed over the old); nothing is said if it fails */
void offsets_cache__save(int dir, const struct offsets_key *k,
			 const struct mt_kernel_offsets *ko);
/* /run/memtrack, made if need be, when it is root's alone; -1 otherwise (or not root) */
int offsets_cache__open_dir(void);

/* kernel_offsets__read(), kept from run to run as above */
int kernel_offsets__read_cached(struct mt_kernel_offsets *ko);

#endif
