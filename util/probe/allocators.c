// SPDX-License-Identifier: GPL-2.0
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

/*
 * Aliases (one address, several names) are probed once, under the first
 * name listed here.  Frees that may call another probed free are wrappers:
 * their event is made at return, so the inner free counts as nested.
 */
const struct alloc_symbol alloc_symbols[] = {
	/* C: glibc, and whoever overrides it (jemalloc, mimalloc, tcmalloc) */
	{ "malloc", MALLOC },
	{ "free", FREE },
	{ "calloc", CALLOC },
	{ "realloc", REALLOC },
	{ "reallocarray", REALLOCARRAY },
	{ "aligned_alloc", ALIGNED_A1 },
	{ "memalign", ALIGNED_A1 },
	{ "posix_memalign", POSIX_MEMALIGN },
	{ "valloc", ALIGNED_A0 },
	{ "pvalloc", ALIGNED_A0 },

	/* C++: operator new and delete, plain, nothrow, aligned, sized */
	{ "_Znwm", MALLOC },
	{ "_Znam", MALLOC },
	{ "_ZnwmRKSt9nothrow_t", MALLOC },
	{ "_ZnamRKSt9nothrow_t", MALLOC },
	{ "_ZnwmSt11align_val_t", ALIGNED_A0 },
	{ "_ZnamSt11align_val_t", ALIGNED_A0 },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", ALIGNED_A0 },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", ALIGNED_A0 },
	{ "_ZdlPv", FREE_WRAPPER },
	{ "_ZdaPv", FREE_WRAPPER },
	{ "_ZdlPvm", FREE_WRAPPER },
	{ "_ZdaPvm", FREE_WRAPPER },
	{ "_ZdlPvRKSt9nothrow_t", FREE_WRAPPER },
	{ "_ZdaPvRKSt9nothrow_t", FREE_WRAPPER },
	{ "_ZdlPvSt11align_val_t", FREE_WRAPPER },
	{ "_ZdaPvSt11align_val_t", FREE_WRAPPER },
	{ "_ZdlPvmSt11align_val_t", FREE_WRAPPER },
	{ "_ZdaPvmSt11align_val_t", FREE_WRAPPER },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", FREE_WRAPPER },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", FREE_WRAPPER },

	/* jemalloc's non-standard API, and its je_ prefixed builds */
	{ "mallocx", MALLOC },
	{ "rallocx", REALLOC },
	{ "dallocx", FREE_WRAPPER },
	{ "sdallocx", FREE_WRAPPER },
	{ "je_malloc", MALLOC },
	{ "je_free", FREE },
	{ "je_calloc", CALLOC },
	{ "je_realloc", REALLOC },
	{ "je_aligned_alloc", ALIGNED_A1 },
	{ "je_memalign", ALIGNED_A1 },
	{ "je_posix_memalign", POSIX_MEMALIGN },
	{ "je_valloc", ALIGNED_A0 },
	{ "je_mallocx", MALLOC },
	{ "je_rallocx", REALLOC },
	{ "je_dallocx", FREE_WRAPPER },
	{ "je_sdallocx", FREE_WRAPPER },

	/* mimalloc */
	{ "mi_malloc", MALLOC },
	{ "mi_free", FREE },
	{ "mi_zalloc", MALLOC },
	{ "mi_calloc", CALLOC },
	{ "mi_mallocn", CALLOC },
	{ "mi_realloc", REALLOC },
	{ "mi_reallocf", REALLOC },
	{ "mi_reallocn", REALLOCARRAY },
	{ "mi_malloc_aligned", ALIGNED_A0 },
	{ "mi_zalloc_aligned", ALIGNED_A0 },
	{ "mi_calloc_aligned", CALLOC },
	{ "mi_realloc_aligned", REALLOC },
	{ "mi_aligned_alloc", ALIGNED_A1 },
	{ "mi_memalign", ALIGNED_A1 },
	{ "mi_posix_memalign", POSIX_MEMALIGN },
	{ "mi_valloc", ALIGNED_A0 },
	{ "mi_pvalloc", ALIGNED_A0 },
	{ "mi_free_size", FREE_WRAPPER },
	{ "mi_free_aligned", FREE_WRAPPER },
	{ "mi_free_size_aligned", FREE_WRAPPER },
	{ "mi_new", MALLOC },
	{ "mi_new_nothrow", MALLOC },
	{ "mi_new_n", CALLOC },
	{ "mi_new_aligned", ALIGNED_A0 },
	{ "mi_new_aligned_nothrow", ALIGNED_A0 },
	{ "mi_new_realloc", REALLOC },
	{ "mi_new_reallocn", REALLOCARRAY },

	/* tcmalloc (gperftools) */
	{ "tc_malloc", MALLOC },
	{ "tc_free", FREE },
	{ "tc_cfree", FREE },
	{ "tc_calloc", CALLOC },
	{ "tc_realloc", REALLOC },
	{ "tc_memalign", ALIGNED_A1 },
	{ "tc_posix_memalign", POSIX_MEMALIGN },
	{ "tc_valloc", ALIGNED_A0 },
	{ "tc_pvalloc", ALIGNED_A0 },
	{ "tc_malloc_skip_new_handler", MALLOC },
	{ "tc_free_sized", FREE_WRAPPER },
	{ "tc_new", MALLOC },
	{ "tc_newarray", MALLOC },
	{ "tc_new_nothrow", MALLOC },
	{ "tc_newarray_nothrow", MALLOC },
	{ "tc_new_aligned", ALIGNED_A0 },
	{ "tc_newarray_aligned", ALIGNED_A0 },
	{ "tc_new_aligned_nothrow", ALIGNED_A0 },
	{ "tc_newarray_aligned_nothrow", ALIGNED_A0 },
	{ "tc_delete", FREE_WRAPPER },
	{ "tc_deletearray", FREE_WRAPPER },
	{ "tc_delete_nothrow", FREE_WRAPPER },
	{ "tc_deletearray_nothrow", FREE_WRAPPER },
	{ "tc_delete_sized", FREE_WRAPPER },
	{ "tc_deletearray_sized", FREE_WRAPPER },
	{ "tc_delete_aligned", FREE_WRAPPER },
	{ "tc_deletearray_aligned", FREE_WRAPPER },
	{ "tc_delete_sized_aligned", FREE_WRAPPER },
	{ "tc_deletearray_sized_aligned", FREE_WRAPPER },
	{ "tc_delete_aligned_nothrow", FREE_WRAPPER },
	{ "tc_deletearray_aligned_nothrow", FREE_WRAPPER },
};

const size_t nr_alloc_symbols = ARRAY_SIZE(alloc_symbols);
