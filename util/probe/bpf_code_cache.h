/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_CODE_CACHE_H
#define MEMTRACK_BPF_CODE_CACHE_H

#include <stdint.h>

#include "util/probe/alloc-code.h"

/*
 * What alloc_code__read() found in a file that defines allocator functions,
 * kept for the rest of the boot: libc's takes 0.7-1 ms of every run's start
 * to read and decode, on its way.
 *
 * Trust.  The probes go at the offsets kept: an offset that someone else
 * chose would put a breakpoint inside an instruction of every tracked
 * program.  So, as the kernel's offsets (bpf_offsets_cache.h), only root
 * keeps them, in /run/memtrack/alloc-code, a directory of tmpfs only root
 * may write, one file per file read, only root may write it, and it is read
 * whole and checked: the key (the file's device, inode, size and times of
 * change, and memtrack's own executable's), its size, every index and count.
 * Anything else is read from the file again, and the entry replaced.
 */
struct alloc_code_key {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
	uint64_t self_dev, self_ino;	/* memtrack's executable: its code reads the file */
	int64_t self_ctime_sec, self_ctime_nsec;
};

/* the key of the file open at fd, as this memtrack reads it; 0 or -errno */
int alloc_code_cache__key(int fd, struct alloc_code_key *k);
/* what is kept in dir under k (the number of functions, > 0), or -ENOENT */
int alloc_code_cache__load(int dir, const struct alloc_code_key *k, struct alloc_code *ac);
/* keeps ac (found functions) under k; nothing is said if it fails */
void alloc_code_cache__save(int dir, const struct alloc_code_key *k, const struct alloc_code *ac,
			    int found);
/* /run/memtrack/alloc-code, made if need be, when it is root's alone; -1 otherwise */
int alloc_code_cache__open_dir(void);

/* alloc_code__read(), kept from run to run as above for a file that defines some */
int alloc_code__read_cached(const char *path, struct alloc_code *ac);

#endif
