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
	unsigned int flags;	/* ALLOC_SYM_* */
};

/* the preload shim interposes it: a program's call reaches the shim first */
#define ALLOC_SYM_INTERPOSED	(1U << 0)
/* an exception may leave it (a throwing operator new): no return probe on it */
#define ALLOC_SYM_THROWS	(1U << 1)

/* a set of alloc_symbols' indexes */
#define ALLOC_SET_WORDS		2
struct alloc_set {
	unsigned long long w[ALLOC_SET_WORDS];
};

static inline void alloc_set__add(struct alloc_set *s, unsigned int i)
{
	s->w[i / 64] |= 1ULL << (i % 64);
}

static inline int alloc_set__has(const struct alloc_set *s, unsigned int i)
{
	return (s->w[i / 64] >> (i % 64)) & 1;
}

static inline int alloc_set__meets(const struct alloc_set *a, const struct alloc_set *b)
{
	unsigned int i;

	for (i = 0; i < ALLOC_SET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return 1;
	return 0;
}

/* alloc_symbols' index of name, -1 if none */
int alloc_symbol__find(const char *name);

extern const struct alloc_symbol alloc_symbols[];
extern const size_t nr_alloc_symbols;

/* whether the probe needs a return probe (all but leaf frees) */
static inline int alloc_shape__has_return(enum mt_shape shape)
{
	return shape != MT_SHAPE_FREE;
}

#endif
