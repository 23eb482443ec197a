/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_DWARF_CACHE_H
#define MEMTRACK_DWARF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/symbol/dwarf-lines.h"

/*
 * The source frames of a module's addresses (dwarf_lines__find()'s
 * answers), kept from run to run in a file per build id.  Distributions
 * compress the DWARF of their debug files, and libdw inflates all of it at
 * open: 160 ms of CPU for libc6-dbg here, to answer the few hundred
 * addresses that every run asks again.
 *
 * The files are memtrack's own, in a directory only its user may write;
 * they are read as untrusted all the same: one that breaks a rule is
 * ignored whole, and written anew.  A file is keyed by the build id and a
 * keyed hash of the whole file its answers came from: a build id is the
 * word of whoever linked the file.
 */
struct dwarf_cache;

#define DWARF_CACHE_ENV		"MEMTRACK_CACHE_DIR"
#define DWARF_CACHE_ROOT_DIR	"/var/cache/memtrack"

/*
 * The directory of the cache files, created if need be: $MEMTRACK_CACHE_DIR
 * ("" turns the cache off), else for root /var/cache/memtrack.  Its fd, or
 * -1 with why (a directory another user could write to is not used).
 */
int dwarf_cache__open_dir(char *why, size_t len);

/*
 * The answers kept for build id id in dir and the file image[0, size) the
 * DWARF is read from, else none yet (a file of that build id but kept for
 * other contents is replaced); NULL without memory or the directory's key.
 */
struct dwarf_cache *dwarf_cache__open(int dir, const unsigned char *id, size_t len,
				      const void *image, size_t size);

/*
 * The frames kept for addr, innermost first: true with their number in *n
 * (at most max, 0 when no unit covers addr); false when addr is not kept.
 * The strings live as long as the cache.
 */
bool dwarf_cache__find(const struct dwarf_cache *c, uint64_t addr, struct src_frame *out,
		       int max, int *n);

/* keeps the n frames of addr (all there are), copied */
void dwarf_cache__add(struct dwarf_cache *c, uint64_t addr, const struct src_frame *src, int n);

/* whether open read the file for its hash (not taken by its identity, see dwarf-cache.c) */
bool dwarf_cache__hashed(const struct dwarf_cache *c);
/* how many addresses the file held when opened (0: none, or it was refused) */
size_t dwarf_cache__loaded(const struct dwarf_cache *c);

/* writes the file anew if addresses were added since it was read or written */
void dwarf_cache__save(struct dwarf_cache *c);
/* saves, then frees the cache */
void dwarf_cache__close(struct dwarf_cache *c);

#endif
