/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ALLOCATORS_H
#define MEMTRACK_ALLOCATORS_H

#include <stddef.h>

#include "bpf/memtrack.h"

/*
 * Every allocator entry point memtrack probes, by symbol name, in any ELF
 * that defines it: libc, libstdc++'s operator new/delete, jemalloc (plain
 * and je_ prefixed), mimalloc, tcmalloc, and static binaries holding them.
 */
struct alloc_symbol {
	const char *name;
	enum mt_shape shape;
};

extern const struct alloc_symbol alloc_symbols[];
extern const size_t nr_alloc_symbols;

/* whether the probe needs a return probe (all but leaf frees) */
static inline int alloc_shape__has_return(enum mt_shape shape)
{
	return shape != MT_SHAPE_FREE;
}

#endif
