// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "util/probe/allocators.h"
#include "util/util.h"

#define MALLOC		MT_SHAPE_MALLOC
#define CALLOC		MT_SHAPE_CALLOC
#define REALLOC		MT_SHAPE_REALLOC
#define REALLOCARRAY	MT_SHAPE_REALLOCARRAY
#define FREE		MT_SHAPE_FREE
#define FREE_WRAPPER	MT_SHAPE_FREE_WRAPPER
#define ALIGNED_A0	MT_SHAPE_ALIGNED_SIZE_A0
#define ALIGNED_A1	MT_SHAPE_ALIGNED_SIZE_A1
#define POSIX_MEMALIGN	MT_SHAPE_POSIX_MEMALIGN
#define I		ALLOC_SYM_INTERPOSED
#define T		ALLOC_SYM_THROWS

/*
 * Aliases (one address, several names) are probed once, under the first
 * name listed here.  Frees that may call another probed free are wrappers:
 * their event is made at return, so the inner free counts as nested.
 */
const struct alloc_symbol alloc_symbols[] = {
	/* C: glibc, and whoever overrides it (jemalloc, mimalloc, tcmalloc) */
	{ "malloc", MALLOC, I },
	{ "free", FREE, I },
	{ "calloc", CALLOC, I },
	{ "realloc", REALLOC, I },
	{ "reallocarray", REALLOCARRAY, I },
	{ "aligned_alloc", ALIGNED_A1, I },
	{ "memalign", ALIGNED_A1, I },
	{ "posix_memalign", POSIX_MEMALIGN, I },
	{ "valloc", ALIGNED_A0, I },
	{ "pvalloc", ALIGNED_A0, I },

	/* C++: operator new and delete, plain, nothrow, aligned, sized */
	{ "_Znwm", MALLOC, I | T },
	{ "_Znam", MALLOC, I | T },
	{ "_ZnwmRKSt9nothrow_t", MALLOC, I },
	{ "_ZnamRKSt9nothrow_t", MALLOC, I },
	{ "_ZnwmSt11align_val_t", ALIGNED_A0, I | T },
	{ "_ZnamSt11align_val_t", ALIGNED_A0, I | T },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", ALIGNED_A0, I },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", ALIGNED_A0, I },
	{ "_ZdlPv", FREE_WRAPPER, I },
	{ "_ZdaPv", FREE_WRAPPER, I },
	{ "_ZdlPvm", FREE_WRAPPER, I },
	{ "_ZdaPvm", FREE_WRAPPER, I },
	{ "_ZdlPvRKSt9nothrow_t", FREE_WRAPPER, I },
	{ "_ZdaPvRKSt9nothrow_t", FREE_WRAPPER, I },
	{ "_ZdlPvSt11align_val_t", FREE_WRAPPER, I },
	{ "_ZdaPvSt11align_val_t", FREE_WRAPPER, I },
	{ "_ZdlPvmSt11align_val_t", FREE_WRAPPER, I },
	{ "_ZdaPvmSt11align_val_t", FREE_WRAPPER, I },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", FREE_WRAPPER, I },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", FREE_WRAPPER, I },

	/* jemalloc's non-standard API, and its je_ prefixed builds */
	{ "mallocx", MALLOC, 0 },
	{ "rallocx", REALLOC, 0 },
	{ "dallocx", FREE_WRAPPER, 0 },
	{ "sdallocx", FREE_WRAPPER, 0 },
	{ "je_malloc", MALLOC, 0 },
	{ "je_free", FREE, 0 },
	{ "je_calloc", CALLOC, 0 },
	{ "je_realloc", REALLOC, 0 },
	{ "je_aligned_alloc", ALIGNED_A1, 0 },
	{ "je_memalign", ALIGNED_A1, 0 },
	{ "je_posix_memalign", POSIX_MEMALIGN, 0 },
	{ "je_valloc", ALIGNED_A0, 0 },
	{ "je_mallocx", MALLOC, 0 },
	{ "je_rallocx", REALLOC, 0 },
	{ "je_dallocx", FREE_WRAPPER, 0 },
	{ "je_sdallocx", FREE_WRAPPER, 0 },

	/* mimalloc */
	{ "mi_malloc", MALLOC, 0 },
	{ "mi_free", FREE, 0 },
	{ "mi_zalloc", MALLOC, 0 },
	{ "mi_calloc", CALLOC, 0 },
	{ "mi_mallocn", CALLOC, 0 },
	{ "mi_realloc", REALLOC, 0 },
	{ "mi_reallocf", REALLOC, 0 },
	{ "mi_reallocn", REALLOCARRAY, 0 },
	{ "mi_malloc_aligned", ALIGNED_A0, 0 },
	{ "mi_zalloc_aligned", ALIGNED_A0, 0 },
	{ "mi_calloc_aligned", CALLOC, 0 },
	{ "mi_realloc_aligned", REALLOC, 0 },
	{ "mi_aligned_alloc", ALIGNED_A1, 0 },
	{ "mi_memalign", ALIGNED_A1, 0 },
	{ "mi_posix_memalign", POSIX_MEMALIGN, 0 },
	{ "mi_valloc", ALIGNED_A0, 0 },
	{ "mi_pvalloc", ALIGNED_A0, 0 },
	{ "mi_free_size", FREE_WRAPPER, 0 },
	{ "mi_free_aligned", FREE_WRAPPER, 0 },
	{ "mi_free_size_aligned", FREE_WRAPPER, 0 },
	{ "mi_new", MALLOC, T },
	{ "mi_new_nothrow", MALLOC, 0 },
	{ "mi_new_n", CALLOC, T },
	{ "mi_new_aligned", ALIGNED_A0, T },
	{ "mi_new_aligned_nothrow", ALIGNED_A0, 0 },
	{ "mi_new_realloc", REALLOC, T },
	{ "mi_new_reallocn", REALLOCARRAY, T },

	/* tcmalloc (gperftools) */
	{ "tc_malloc", MALLOC, 0 },
	{ "tc_free", FREE, 0 },
	{ "tc_cfree", FREE, 0 },
	{ "tc_calloc", CALLOC, 0 },
	{ "tc_realloc", REALLOC, 0 },
	{ "tc_memalign", ALIGNED_A1, 0 },
	{ "tc_posix_memalign", POSIX_MEMALIGN, 0 },
	{ "tc_valloc", ALIGNED_A0, 0 },
	{ "tc_pvalloc", ALIGNED_A0, 0 },
	{ "tc_malloc_skip_new_handler", MALLOC, 0 },
	{ "tc_free_sized", FREE_WRAPPER, 0 },
	{ "tc_new", MALLOC, T },
	{ "tc_newarray", MALLOC, T },
	{ "tc_new_nothrow", MALLOC, 0 },
	{ "tc_newarray_nothrow", MALLOC, 0 },
	{ "tc_new_aligned", ALIGNED_A0, T },
	{ "tc_newarray_aligned", ALIGNED_A0, T },
	{ "tc_new_aligned_nothrow", ALIGNED_A0, 0 },
	{ "tc_newarray_aligned_nothrow", ALIGNED_A0, 0 },
	{ "tc_delete", FREE_WRAPPER, 0 },
	{ "tc_deletearray", FREE_WRAPPER, 0 },
	{ "tc_delete_nothrow", FREE_WRAPPER, 0 },
	{ "tc_deletearray_nothrow", FREE_WRAPPER, 0 },
	{ "tc_delete_sized", FREE_WRAPPER, 0 },
	{ "tc_deletearray_sized", FREE_WRAPPER, 0 },
	{ "tc_delete_aligned", FREE_WRAPPER, 0 },
	{ "tc_deletearray_aligned", FREE_WRAPPER, 0 },
	{ "tc_delete_sized_aligned", FREE_WRAPPER, 0 },
	{ "tc_deletearray_sized_aligned", FREE_WRAPPER, 0 },
	{ "tc_delete_aligned_nothrow", FREE_WRAPPER, 0 },
	{ "tc_deletearray_aligned_nothrow", FREE_WRAPPER, 0 },
};

const size_t nr_alloc_symbols = ARRAY_SIZE(alloc_symbols);

/*
 * The names by hash: every symbol of every library a process maps is
 * looked up here (libLLVM's 45,000, nearly all "_Z..." like operator new's
 * names): its scan took 6.4 ms as a walk of the list a name, 3.6 ms now.  The hash reads a name's
 * length and its first and last eight bytes, so a long mangled name costs
 * what a short one does; a length no allocator has is out at once.
 */
#define NAME_SLOTS	512	/* a power of two, over twice the names */
#define NAME_MAX_LEN	63

static int16_t name_slots[NAME_SLOTS];	/* index + 1; 0: empty */
static uint64_t name_lengths;		/* bit n: an allocator's name has n bytes */
static pthread_once_t names_indexed = PTHREAD_ONCE_INIT;

/*
 * A bit per hash of an allocator name's first three bytes: "_ZN", which
 * begins nearly every name of a C++ library, is out before its length is
 * read (alloc_code__read() of libLLVM-14: 1.53 -> 0.85 ms).
 */
#define PREFIX_BITS	4096
static uint64_t prefixes[PREFIX_BITS / 64];

/* the bit of name's first three bytes; PREFIX_BITS for a shorter name */
static uint32_t prefix_bit(const char *name)
{
	uint32_t key;

	if (!name[0] || !name[1] || !name[2])
		return PREFIX_BITS;
	key = (uint8_t)name[0] | (uint8_t)name[1] << 8 | (uint32_t)(uint8_t)name[2] << 16;
	return (key * 0x9e3779b1U) >> (32 - 12);
}

static uint32_t name_hash(const char *name, size_t len)
{
	uint64_t head = 0, tail = 0;

	memcpy(&head, name, len < 8 ? len : 8);
	if (len > 8)
		memcpy(&tail, name + len - 8, 8);
	return ((head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^ len) >> 40;
}

static void index_names(void)
{
	uint32_t h;
	size_t i, len;

	for (i = 0; i < nr_alloc_symbols; i++) {
		len = strlen(alloc_symbols[i].name);
		name_lengths |= 1ULL << len;
		h = prefix_bit(alloc_symbols[i].name);
		if (h < PREFIX_BITS)
			prefixes[h / 64] |= 1ULL << (h % 64);
		for (h = name_hash(alloc_symbols[i].name, len) & (NAME_SLOTS - 1); name_slots[h];
		     h = (h + 1) & (NAME_SLOTS - 1))
			;
		name_slots[h] = i + 1;
	}
}

int alloc_symbol__find(const char *name)
{
	size_t len;
	uint32_t h;

	pthread_once(&names_indexed, index_names);
	h = prefix_bit(name);
	if (h == PREFIX_BITS || !(prefixes[h / 64] & (1ULL << (h % 64))))
		return -1;
	len = strnlen(name, NAME_MAX_LEN + 1);
	if (len > NAME_MAX_LEN || !(name_lengths & (1ULL << len)))
		return -1;
	/* names are indexed in order: a name listed twice is found at its first place */
	for (h = name_hash(name, len) & (NAME_SLOTS - 1); name_slots[h];
	     h = (h + 1) & (NAME_SLOTS - 1))
		if (!strcmp(alloc_symbols[name_slots[h] - 1].name, name))
			return name_slots[h] - 1;
	return -1;
}

_Static_assert(ARRAY_SIZE(alloc_symbols) <= ALLOC_SET_WORDS * 64, "alloc_set too small");
_Static_assert(ARRAY_SIZE(alloc_symbols) * 2 <= NAME_SLOTS, "name_slots too small");
_Static_assert(NAME_MAX_LEN < 64, "name_lengths has a bit per length");
