// SPDX-License-Identifier: GPL-2.0
/*
 * The functions the shim interposes: the C allocator family and C++'s
 * operator new and delete.  Each records one event per call of the
 * program's, with the fields and rules of the BPF path: no event for a
 * failed call or for free(NULL); a call made from inside another allocator
 * call (operator new calling malloc, a realloc calling malloc) is not a
 * call of the program's and passes through.  An allocation's time is taken
 * after the call returns, a free's before it is made (and a realloc's
 * before: it frees), so that a free always comes before the allocation
 * that reuses its address.
 *
 * jemalloc's, mimalloc's and tcmalloc's own entry points are not exported
 * here (a program that probes for mallocx would think jemalloc loaded):
 * memtrack traces processes that use them with BPF, or probes those entry
 * points alone in a process that loads them late.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/memtrack.h"
#include "shim.h"

/*
 * The entries behind the exported names (PASS_THROUGH, at the end) keep a
 * frame (the shim is built with frame pointers): their callers' frames
 * are read from it.  On x86-64 they also realign the stack: code of the
 * program's own that calls malloc with the stack misaligned runs bare, and
 * must not fault in what the shim calls.
 */
#if defined(__x86_64__)
#define ENTRY	__attribute__((visibility("hidden"), force_align_arg_pointer))
#else
#define ENTRY	__attribute__((visibility("hidden")))
#endif

enum next_fn {
	/* C: a library before the shim defining one of these shadows it */
	F_MALLOC, F_FREE, F_CALLOC, F_REALLOC, F_REALLOCARRAY, F_ALIGNED_ALLOC,
	F_MEMALIGN, F_POSIX_MEMALIGN, F_VALLOC, F_PVALLOC,
	F_C_FAMILY,
	/* C++ */
	F_NEW = F_C_FAMILY, F_NEW_ARRAY, F_NEW_NOTHROW, F_NEW_ARRAY_NOTHROW,
	F_NEW_ALIGNED, F_NEW_ARRAY_ALIGNED, F_NEW_ALIGNED_NOTHROW, F_NEW_ARRAY_ALIGNED_NOTHROW,
	F_DELETE, F_DELETE_ARRAY, F_DELETE_SIZED, F_DELETE_ARRAY_SIZED,
	F_DELETE_NOTHROW, F_DELETE_ARRAY_NOTHROW, F_DELETE_ALIGNED, F_DELETE_ARRAY_ALIGNED,
	F_DELETE_SIZED_ALIGNED, F_DELETE_ARRAY_SIZED_ALIGNED,
	F_DELETE_ALIGNED_NOTHROW, F_DELETE_ARRAY_ALIGNED_NOTHROW,
	F_DLCLOSE,
	F_MAX,
};

SHIM_HIDDEN struct shim_next_sym shim_next[F_MAX] = {
	[F_MALLOC] = { "malloc" },
	[F_FREE] = { "free" },
	[F_CALLOC] = { "calloc" },
	[F_REALLOC] = { "realloc" },
	[F_REALLOCARRAY] = { "reallocarray" },
	[F_ALIGNED_ALLOC] = { "aligned_alloc" },
	[F_MEMALIGN] = { "memalign" },
	[F_POSIX_MEMALIGN] = { "posix_memalign" },
	[F_VALLOC] = { "valloc" },
	[F_PVALLOC] = { "pvalloc" },
	[F_NEW] = { "_Znwm" },
	[F_NEW_ARRAY] = { "_Znam" },
	[F_NEW_NOTHROW] = { "_ZnwmRKSt9nothrow_t" },
	[F_NEW_ARRAY_NOTHROW] = { "_ZnamRKSt9nothrow_t" },
	[F_NEW_ALIGNED] = { "_ZnwmSt11align_val_t" },
	[F_NEW_ARRAY_ALIGNED] = { "_ZnamSt11align_val_t" },
	[F_NEW_ALIGNED_NOTHROW] = { "_ZnwmSt11align_val_tRKSt9nothrow_t" },
	[F_NEW_ARRAY_ALIGNED_NOTHROW] = { "_ZnamSt11align_val_tRKSt9nothrow_t" },
	[F_DELETE] = { "_ZdlPv" },
	[F_DELETE_ARRAY] = { "_ZdaPv" },
	[F_DELETE_SIZED] = { "_ZdlPvm" },
	[F_DELETE_ARRAY_SIZED] = { "_ZdaPvm" },
	[F_DELETE_NOTHROW] = { "_ZdlPvRKSt9nothrow_t" },
	[F_DELETE_ARRAY_NOTHROW] = { "_ZdaPvRKSt9nothrow_t" },
	[F_DELETE_ALIGNED] = { "_ZdlPvSt11align_val_t" },
	[F_DELETE_ARRAY_ALIGNED] = { "_ZdaPvSt11align_val_t" },
	[F_DELETE_SIZED_ALIGNED] = { "_ZdlPvmSt11align_val_t" },
	[F_DELETE_ARRAY_SIZED_ALIGNED] = { "_ZdaPvmSt11align_val_t" },
	[F_DELETE_ALIGNED_NOTHROW] = { "_ZdlPvSt11align_val_tRKSt9nothrow_t" },
	[F_DELETE_ARRAY_ALIGNED_NOTHROW] = { "_ZdaPvSt11align_val_tRKSt9nothrow_t" },
	[F_DLCLOSE] = { "dlclose" },
};

static bool resolved;

static void resolve(void)
{
	shim_lookup_next(shim_next, F_MAX, (const void *)resolve);
	__atomic_store_n(&resolved, true, __ATOMIC_RELEASE);
}

/*
 * The next definition of f.  One not loaded at start (libstdc++ dlopen'd
 * by a plugin) is looked up again when first needed.
 */
static void *next_fn(enum next_fn f)
{
	if (unlikely(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)))
		resolve();
	if (unlikely(!shim_next[f].addr)) {
		resolve();
		if (!shim_next[f].addr) {
			shim_warn("no definition to forward to: ", shim_next[f].name);
			abort();
		}
	}
	return shim_next[f].addr;
}

uint32_t shim_hello_flags(void)
{
	const char *pymalloc;
	uint32_t flags = 0;
	int f;

	if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE))
		resolve();
	for (f = 0; f < F_C_FAMILY; f++)
		if (shim_next[f].shadowed)
			flags |= SHIM_SHADOWED;
	if (!shim_next[F_MALLOC].addr || !shim_next[F_FREE].addr)
		flags |= SHIM_NO_NEXT;
	/* a Python of this process allocates its small objects with malloc: report's hint */
	pymalloc = getenv("PYTHONMALLOC");
	if (pymalloc && (!strcmp(pymalloc, "malloc") || !strcmp(pymalloc, "malloc_debug")))
		flags |= SHIM_PYMALLOC_OFF;
	return flags;
}

/* the thread, when this call is the program's to record */
static inline struct shim_thread *enter(void)
{
	return shim_thread();
}

/* a call made inside this one passes through unrecorded (new calling malloc ...) */
#define NESTED(t, call)		\
	({			\
		(t)->depth++;	\
		__auto_type __r = (call); \
		(t)->depth--;	\
		__r;		\
	})
#define NESTED_VOID(t, call)	\
	do {			\
		(t)->depth++;	\
		call;		\
		(t)->depth--;	\
	} while (0)

typedef void *alloc1_fn(size_t);
typedef void *alloc2_fn(size_t, size_t);
typedef void free_fn(void *);

/* one size argument, a pointer or NULL back: malloc, valloc, operator new ... */
static inline void *alloc_size(enum next_fn f, uint32_t kind, size_t size,
			       const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	uint32_t stack;
	void *p;

	if (!t)
		return ((alloc1_fn *)next_fn(f))(size);
	p = NESTED(t, ((alloc1_fn *)next_fn(f))(size));
	if (p) {
		stack = shim_stack_id(t, c);
		shim_record_alloc(t, kind, p, size, stack);
	}
	return p;
}

/* (align, size) or (size, align) -> AlignedAlloc of size */
static inline void *alloc_aligned(enum next_fn f, size_t a0, size_t a1, size_t size,
				  const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((alloc2_fn *)next_fn(f))(a0, a1);
	p = NESTED(t, ((alloc2_fn *)next_fn(f))(a0, a1));
	if (p)
		shim_record_alloc(t, MT_ALIGNED_ALLOC, p, size, shim_stack_id(t, c));
	return p;
}

static inline void free_ptr(enum next_fn f, void *p)
{
	struct shim_thread *t = p ? enter() : NULL;

	if (!t) {
		((free_fn *)next_fn(f))(p);
		return;
	}
	shim_record_free(t, p);
	NESTED_VOID(t, ((free_fn *)next_fn(f))(p));
}

/*
 * The entries of the C functions the shim interposes have names of their
 * own here (whoever reads the tree for realloc, which util/util.c calls,
 * finds the C library's, not the shim's) and memtrack_entry_<name> in the
 * symbol table (asm labels), where PASS_THROUGH jumps.
 */
ENTRY void *shim_malloc(size_t size) __asm__("memtrack_entry_malloc");
ENTRY void shim_free(void *p) __asm__("memtrack_entry_free");
ENTRY void *shim_calloc(size_t n, size_t size) __asm__("memtrack_entry_calloc");
ENTRY void *shim_realloc(void *old, size_t size) __asm__("memtrack_entry_realloc");
ENTRY void *shim_reallocarray(void *old, size_t n, size_t size) __asm__("memtrack_entry_reallocarray");
ENTRY void *shim_aligned_alloc(size_t align, size_t size) __asm__("memtrack_entry_aligned_alloc");
ENTRY void *shim_memalign(size_t align, size_t size) __asm__("memtrack_entry_memalign");
ENTRY void *shim_valloc(size_t size) __asm__("memtrack_entry_valloc");
ENTRY void *shim_pvalloc(size_t size) __asm__("memtrack_entry_pvalloc");
ENTRY int shim_posix_memalign(void **out, size_t align, size_t size) __asm__("memtrack_entry_posix_memalign");
ENTRY int shim_dlclose(void *handle) __asm__("memtrack_entry_dlclose");

ENTRY void *shim_malloc(size_t size)
{
	struct shim_caller c = SHIM_CALLER();

	return alloc_size(F_MALLOC, MT_MALLOC, size, &c);
}

ENTRY void shim_free(void *p)
{
	free_ptr(F_FREE, p);
}

ENTRY void *shim_calloc(size_t n, size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((alloc2_fn *)next_fn(F_CALLOC))(n, size);
	p = NESTED(t, ((alloc2_fn *)next_fn(F_CALLOC))(n, size));
	if (p)
		shim_record_alloc(t, MT_CALLOC, p, n * size, shim_stack_id(t, &c));
	return p;
}

typedef void *realloc_fn(void *, size_t);
typedef void *reallocarray_fn(void *, size_t, size_t);

ENTRY void *shim_realloc(void *old, size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	struct shim_pending pend;
	void *p;

	if (!t)
		return ((realloc_fn *)next_fn(F_REALLOC))(old, size);
	shim_realloc_begin(t, &pend, old, shim_stack_id(t, &c));
	p = NESTED(t, ((realloc_fn *)next_fn(F_REALLOC))(old, size));
	shim_realloc_end(&pend, p, size);
	return p;
}

ENTRY void *shim_reallocarray(void *old, size_t n, size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	struct shim_pending pend;
	void *p;

	if (!t)
		return ((reallocarray_fn *)next_fn(F_REALLOCARRAY))(old, n, size);
	shim_realloc_begin(t, &pend, old, shim_stack_id(t, &c));
	p = NESTED(t, ((reallocarray_fn *)next_fn(F_REALLOCARRAY))(old, n, size));
	shim_realloc_end(&pend, p, n * size);
	return p;
}

ENTRY void *shim_aligned_alloc(size_t align, size_t size)
{
	struct shim_caller c = SHIM_CALLER();

	return alloc_aligned(F_ALIGNED_ALLOC, align, size, size, &c);
}

ENTRY void *shim_memalign(size_t align, size_t size)
{
	struct shim_caller c = SHIM_CALLER();

	return alloc_aligned(F_MEMALIGN, align, size, size, &c);
}

ENTRY void *shim_valloc(size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((alloc1_fn *)next_fn(F_VALLOC))(size);
	p = NESTED(t, ((alloc1_fn *)next_fn(F_VALLOC))(size));
	if (p)
		shim_record_alloc(t, MT_ALIGNED_ALLOC, p, size, shim_stack_id(t, &c));
	return p;
}

ENTRY void *shim_pvalloc(size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((alloc1_fn *)next_fn(F_PVALLOC))(size);
	p = NESTED(t, ((alloc1_fn *)next_fn(F_PVALLOC))(size));
	if (p)
		shim_record_alloc(t, MT_ALIGNED_ALLOC, p, size, shim_stack_id(t, &c));
	return p;
}

typedef int posix_memalign_fn(void **, size_t, size_t);

ENTRY int shim_posix_memalign(void **out, size_t align, size_t size)
{
	struct shim_caller c = SHIM_CALLER();
	struct shim_thread *t = enter();
	int err;

	if (!t)
		return ((posix_memalign_fn *)next_fn(F_POSIX_MEMALIGN))(out, align, size);
	err = NESTED(t, ((posix_memalign_fn *)next_fn(F_POSIX_MEMALIGN))(out, align, size));
	if (!err && *out)
		shim_record_alloc(t, MT_ALIGNED_ALLOC, *out, size, shim_stack_id(t, &c));
	return err;
}

/* C++: std::nothrow_t and std::align_val_t as the ABI passes them */
typedef struct { char c; } nothrow_t;
typedef size_t align_val_t;

typedef void *new_nothrow_fn(size_t, const nothrow_t *);
typedef void *new_aligned_fn(size_t, align_val_t);
typedef void *new_aligned_nothrow_fn(size_t, align_val_t, const nothrow_t *);

static const nothrow_t nothrow;

/*
 * The throwing operator new is called as the nothrow one: no exception may
 * leave a call of ours with the thread's depth raised (the shim has no
 * unwinding cleanups).  When that fails, the throwing one is called outside
 * it, to throw what the program expects (or get memory after all, then
 * counted by the malloc inside it).
 */
static inline void *new_throwing(enum next_fn f, enum next_fn f_nothrow, size_t size,
				 const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((alloc1_fn *)next_fn(f))(size);
	p = NESTED(t, ((new_nothrow_fn *)next_fn(f_nothrow))(size, &nothrow));
	if (!p)
		return ((alloc1_fn *)next_fn(f))(size);
	shim_record_alloc(t, MT_MALLOC, p, size, shim_stack_id(t, c));
	return p;
}

ENTRY void *_Znwm(size_t size) __asm__("memtrack_entry__Znwm");
ENTRY void *_Znwm(size_t size)
{
	struct shim_caller c = SHIM_CALLER();

	return new_throwing(F_NEW, F_NEW_NOTHROW, size, &c);
}

ENTRY void *_Znam(size_t size) __asm__("memtrack_entry__Znam");
ENTRY void *_Znam(size_t size)
{
	struct shim_caller c = SHIM_CALLER();

	return new_throwing(F_NEW_ARRAY, F_NEW_ARRAY_NOTHROW, size, &c);
}

static inline void *new_nothrow(enum next_fn f, size_t size, const nothrow_t *nt,
				const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((new_nothrow_fn *)next_fn(f))(size, nt);
	p = NESTED(t, ((new_nothrow_fn *)next_fn(f))(size, nt));
	if (p)
		shim_record_alloc(t, MT_MALLOC, p, size, shim_stack_id(t, c));
	return p;
}

ENTRY void *_ZnwmRKSt9nothrow_t(size_t size, const nothrow_t *nt) __asm__("memtrack_entry__ZnwmRKSt9nothrow_t");
ENTRY void *_ZnwmRKSt9nothrow_t(size_t size, const nothrow_t *nt)
{
	struct shim_caller c = SHIM_CALLER();

	return new_nothrow(F_NEW_NOTHROW, size, nt, &c);
}

ENTRY void *_ZnamRKSt9nothrow_t(size_t size, const nothrow_t *nt) __asm__("memtrack_entry__ZnamRKSt9nothrow_t");
ENTRY void *_ZnamRKSt9nothrow_t(size_t size, const nothrow_t *nt)
{
	struct shim_caller c = SHIM_CALLER();

	return new_nothrow(F_NEW_ARRAY_NOTHROW, size, nt, &c);
}

/* the same for the aligned one */
static inline void *new_aligned_throwing(enum next_fn f, enum next_fn f_nothrow, size_t size,
					 align_val_t align, const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((new_aligned_fn *)next_fn(f))(size, align);
	p = NESTED(t, ((new_aligned_nothrow_fn *)next_fn(f_nothrow))(size, align, &nothrow));
	if (!p)
		return ((new_aligned_fn *)next_fn(f))(size, align);
	shim_record_alloc(t, MT_ALIGNED_ALLOC, p, size, shim_stack_id(t, c));
	return p;
}

ENTRY void *_ZnwmSt11align_val_t(size_t size, align_val_t align) __asm__("memtrack_entry__ZnwmSt11align_val_t");
ENTRY void *_ZnwmSt11align_val_t(size_t size, align_val_t align)
{
	struct shim_caller c = SHIM_CALLER();

	return new_aligned_throwing(F_NEW_ALIGNED, F_NEW_ALIGNED_NOTHROW, size, align, &c);
}

ENTRY void *_ZnamSt11align_val_t(size_t size, align_val_t align) __asm__("memtrack_entry__ZnamSt11align_val_t");
ENTRY void *_ZnamSt11align_val_t(size_t size, align_val_t align)
{
	struct shim_caller c = SHIM_CALLER();

	return new_aligned_throwing(F_NEW_ARRAY_ALIGNED, F_NEW_ARRAY_ALIGNED_NOTHROW, size, align,
				    &c);
}

static inline void *new_aligned_nothrow(enum next_fn f, size_t size, align_val_t align,
					const nothrow_t *nt, const struct shim_caller *c)
{
	struct shim_thread *t = enter();
	void *p;

	if (!t)
		return ((new_aligned_nothrow_fn *)next_fn(f))(size, align, nt);
	p = NESTED(t, ((new_aligned_nothrow_fn *)next_fn(f))(size, align, nt));
	if (p)
		shim_record_alloc(t, MT_ALIGNED_ALLOC, p, size, shim_stack_id(t, c));
	return p;
}

ENTRY void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, align_val_t align,
						const nothrow_t *nt) __asm__("memtrack_entry__ZnwmSt11align_val_tRKSt9nothrow_t");
ENTRY void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, align_val_t align,
						const nothrow_t *nt)
{
	struct shim_caller c = SHIM_CALLER();

	return new_aligned_nothrow(F_NEW_ALIGNED_NOTHROW, size, align, nt, &c);
}

ENTRY void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, align_val_t align,
						const nothrow_t *nt) __asm__("memtrack_entry__ZnamSt11align_val_tRKSt9nothrow_t");
ENTRY void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, align_val_t align,
						const nothrow_t *nt)
{
	struct shim_caller c = SHIM_CALLER();

	return new_aligned_nothrow(F_NEW_ARRAY_ALIGNED_NOTHROW, size, align, nt, &c);
}

/* operator delete: every variant is one Free; its extra arguments pass through */
typedef void delete2_fn(void *, size_t);
typedef void delete3_fn(void *, size_t, size_t);
typedef void delete_nothrow_fn(void *, const nothrow_t *);
typedef void delete_aligned_nothrow_fn(void *, align_val_t, const nothrow_t *);

#define DELETE_BODY(call)						\
	struct shim_thread *t = p ? enter() : NULL;			\
									\
	if (!t) {							\
		call;							\
		return;							\
	}								\
	shim_record_free(t, p);						\
	NESTED_VOID(t, call)

ENTRY void _ZdlPv(void *p) __asm__("memtrack_entry__ZdlPv");
ENTRY void _ZdlPv(void *p)
{
	DELETE_BODY(((free_fn *)next_fn(F_DELETE))(p));
}

ENTRY void _ZdaPv(void *p) __asm__("memtrack_entry__ZdaPv");
ENTRY void _ZdaPv(void *p)
{
	DELETE_BODY(((free_fn *)next_fn(F_DELETE_ARRAY))(p));
}

ENTRY void _ZdlPvm(void *p, size_t size) __asm__("memtrack_entry__ZdlPvm");
ENTRY void _ZdlPvm(void *p, size_t size)
{
	DELETE_BODY(((delete2_fn *)next_fn(F_DELETE_SIZED))(p, size));
}

ENTRY void _ZdaPvm(void *p, size_t size) __asm__("memtrack_entry__ZdaPvm");
ENTRY void _ZdaPvm(void *p, size_t size)
{
	DELETE_BODY(((delete2_fn *)next_fn(F_DELETE_ARRAY_SIZED))(p, size));
}

ENTRY void _ZdlPvRKSt9nothrow_t(void *p, const nothrow_t *nt) __asm__("memtrack_entry__ZdlPvRKSt9nothrow_t");
ENTRY void _ZdlPvRKSt9nothrow_t(void *p, const nothrow_t *nt)
{
	DELETE_BODY(((delete_nothrow_fn *)next_fn(F_DELETE_NOTHROW))(p, nt));
}

ENTRY void _ZdaPvRKSt9nothrow_t(void *p, const nothrow_t *nt) __asm__("memtrack_entry__ZdaPvRKSt9nothrow_t");
ENTRY void _ZdaPvRKSt9nothrow_t(void *p, const nothrow_t *nt)
{
	DELETE_BODY(((delete_nothrow_fn *)next_fn(F_DELETE_ARRAY_NOTHROW))(p, nt));
}

ENTRY void _ZdlPvSt11align_val_t(void *p, align_val_t align) __asm__("memtrack_entry__ZdlPvSt11align_val_t");
ENTRY void _ZdlPvSt11align_val_t(void *p, align_val_t align)
{
	DELETE_BODY(((delete2_fn *)next_fn(F_DELETE_ALIGNED))(p, align));
}

ENTRY void _ZdaPvSt11align_val_t(void *p, align_val_t align) __asm__("memtrack_entry__ZdaPvSt11align_val_t");
ENTRY void _ZdaPvSt11align_val_t(void *p, align_val_t align)
{
	DELETE_BODY(((delete2_fn *)next_fn(F_DELETE_ARRAY_ALIGNED))(p, align));
}

ENTRY void _ZdlPvmSt11align_val_t(void *p, size_t size, align_val_t align) __asm__("memtrack_entry__ZdlPvmSt11align_val_t");
ENTRY void _ZdlPvmSt11align_val_t(void *p, size_t size, align_val_t align)
{
	DELETE_BODY(((delete3_fn *)next_fn(F_DELETE_SIZED_ALIGNED))(p, size, align));
}

ENTRY void _ZdaPvmSt11align_val_t(void *p, size_t size, align_val_t align) __asm__("memtrack_entry__ZdaPvmSt11align_val_t");
ENTRY void _ZdaPvmSt11align_val_t(void *p, size_t size, align_val_t align)
{
	DELETE_BODY(((delete3_fn *)next_fn(F_DELETE_ARRAY_SIZED_ALIGNED))(p, size, align));
}

ENTRY void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, align_val_t align,
						const nothrow_t *nt) __asm__("memtrack_entry__ZdlPvSt11align_val_tRKSt9nothrow_t");
ENTRY void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, align_val_t align,
						const nothrow_t *nt)
{
	DELETE_BODY(((delete_aligned_nothrow_fn *)next_fn(F_DELETE_ALIGNED_NOTHROW))(p, align, nt));
}

ENTRY void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, align_val_t align,
						const nothrow_t *nt) __asm__("memtrack_entry__ZdaPvSt11align_val_tRKSt9nothrow_t");
ENTRY void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, align_val_t align,
						const nothrow_t *nt)
{
	DELETE_BODY(((delete_aligned_nothrow_fn *)next_fn(F_DELETE_ARRAY_ALIGNED_NOTHROW))(p, align, nt));
}

typedef int dlclose_fn(void *);

/*
 * An unloaded library's code and unwind tables are gone: no unwinder may
 * be reading them when they go, and it forgets them after.
 */
ENTRY int shim_dlclose(void *handle)
{
	int ret;

	shim_cfi_close_begin();
	ret = ((dlclose_fn *)next_fn(F_DLCLOSE))(handle);
	shim_cfi_close_end();
	return ret;
}

__attribute__((constructor)) static void shim_start(void)
{
	/* a process that allocates nothing still joins: memtrack learns it took the shim */
	shim_thread();
}

/*
 * What the program calls: with the process inert (memtrack gone, or BPF
 * tracing it behind the shim), a jump to the next definition, which
 * leaves no frame of the shim's on the stack, so that BPF's probes there
 * see the program's caller; else a jump to the shim's entry.  The process
 * page's epoch says inert (shim.c); a fork child's page is zero.
 */
#if defined(__x86_64__)
#define PASS_THROUGH(sym, index)						\
	__asm__(".text\n"							\
		".globl " #sym "\n"						\
		".type " #sym ", @function\n"					\
		#sym ":\n"							\
		"	.cfi_startproc\n"					\
		"	movq shim_epoch(%rip), %rax\n"				\
		"	testq %rax, %rax\n"					\
		"	jz 1f\n"						\
		"	cmpq $-1, (%rax)\n"					\
		"	jne 1f\n"						\
		"	movq shim_next+" #index "*24+8(%rip), %r11\n"		\
		"	testq %r11, %r11\n"					\
		"	jz 1f\n"						\
		"	jmp *%r11\n"						\
		"1:	jmp memtrack_entry_" #sym "\n"				\
		"	.cfi_endproc\n"					\
		".size " #sym ", .-" #sym "\n")
_Static_assert(sizeof(struct shim_next_sym) == 24 &&
	       __builtin_offsetof(struct shim_next_sym, addr) == 8, "PASS_THROUGH's layout");
#else
#define PASS_THROUGH(sym, index)						\
	__asm__(".globl " #sym "\n.set " #sym ", memtrack_entry_" #sym "\n")
#endif

_Static_assert(F_MALLOC == 0, "PASS_THROUGH's index");
_Static_assert(F_FREE == 1, "PASS_THROUGH's index");
_Static_assert(F_CALLOC == 2, "PASS_THROUGH's index");
_Static_assert(F_REALLOC == 3, "PASS_THROUGH's index");
_Static_assert(F_REALLOCARRAY == 4, "PASS_THROUGH's index");
_Static_assert(F_ALIGNED_ALLOC == 5, "PASS_THROUGH's index");
_Static_assert(F_MEMALIGN == 6, "PASS_THROUGH's index");
_Static_assert(F_POSIX_MEMALIGN == 7, "PASS_THROUGH's index");
_Static_assert(F_VALLOC == 8, "PASS_THROUGH's index");
_Static_assert(F_PVALLOC == 9, "PASS_THROUGH's index");
_Static_assert(F_NEW == 10, "PASS_THROUGH's index");
_Static_assert(F_NEW_ARRAY == 11, "PASS_THROUGH's index");
_Static_assert(F_NEW_NOTHROW == 12, "PASS_THROUGH's index");
_Static_assert(F_NEW_ARRAY_NOTHROW == 13, "PASS_THROUGH's index");
_Static_assert(F_NEW_ALIGNED == 14, "PASS_THROUGH's index");
_Static_assert(F_NEW_ARRAY_ALIGNED == 15, "PASS_THROUGH's index");
_Static_assert(F_NEW_ALIGNED_NOTHROW == 16, "PASS_THROUGH's index");
_Static_assert(F_NEW_ARRAY_ALIGNED_NOTHROW == 17, "PASS_THROUGH's index");
_Static_assert(F_DELETE == 18, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY == 19, "PASS_THROUGH's index");
_Static_assert(F_DELETE_SIZED == 20, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY_SIZED == 21, "PASS_THROUGH's index");
_Static_assert(F_DELETE_NOTHROW == 22, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY_NOTHROW == 23, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ALIGNED == 24, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY_ALIGNED == 25, "PASS_THROUGH's index");
_Static_assert(F_DELETE_SIZED_ALIGNED == 26, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY_SIZED_ALIGNED == 27, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ALIGNED_NOTHROW == 28, "PASS_THROUGH's index");
_Static_assert(F_DELETE_ARRAY_ALIGNED_NOTHROW == 29, "PASS_THROUGH's index");
_Static_assert(F_DLCLOSE == 30, "PASS_THROUGH's index");

PASS_THROUGH(malloc, 0);	/* F_MALLOC */
PASS_THROUGH(free, 1);	/* F_FREE */
PASS_THROUGH(calloc, 2);	/* F_CALLOC */
PASS_THROUGH(realloc, 3);	/* F_REALLOC */
PASS_THROUGH(reallocarray, 4);	/* F_REALLOCARRAY */
PASS_THROUGH(aligned_alloc, 5);	/* F_ALIGNED_ALLOC */
PASS_THROUGH(memalign, 6);	/* F_MEMALIGN */
PASS_THROUGH(posix_memalign, 7);	/* F_POSIX_MEMALIGN */
PASS_THROUGH(valloc, 8);	/* F_VALLOC */
PASS_THROUGH(pvalloc, 9);	/* F_PVALLOC */
PASS_THROUGH(_Znwm, 10);	/* F_NEW */
PASS_THROUGH(_Znam, 11);	/* F_NEW_ARRAY */
PASS_THROUGH(_ZnwmRKSt9nothrow_t, 12);	/* F_NEW_NOTHROW */
PASS_THROUGH(_ZnamRKSt9nothrow_t, 13);	/* F_NEW_ARRAY_NOTHROW */
PASS_THROUGH(_ZnwmSt11align_val_t, 14);	/* F_NEW_ALIGNED */
PASS_THROUGH(_ZnamSt11align_val_t, 15);	/* F_NEW_ARRAY_ALIGNED */
PASS_THROUGH(_ZnwmSt11align_val_tRKSt9nothrow_t, 16);	/* F_NEW_ALIGNED_NOTHROW */
PASS_THROUGH(_ZnamSt11align_val_tRKSt9nothrow_t, 17);	/* F_NEW_ARRAY_ALIGNED_NOTHROW */
PASS_THROUGH(_ZdlPv, 18);	/* F_DELETE */
PASS_THROUGH(_ZdaPv, 19);	/* F_DELETE_ARRAY */
PASS_THROUGH(_ZdlPvm, 20);	/* F_DELETE_SIZED */
PASS_THROUGH(_ZdaPvm, 21);	/* F_DELETE_ARRAY_SIZED */
PASS_THROUGH(_ZdlPvRKSt9nothrow_t, 22);	/* F_DELETE_NOTHROW */
PASS_THROUGH(_ZdaPvRKSt9nothrow_t, 23);	/* F_DELETE_ARRAY_NOTHROW */
PASS_THROUGH(_ZdlPvSt11align_val_t, 24);	/* F_DELETE_ALIGNED */
PASS_THROUGH(_ZdaPvSt11align_val_t, 25);	/* F_DELETE_ARRAY_ALIGNED */
PASS_THROUGH(_ZdlPvmSt11align_val_t, 26);	/* F_DELETE_SIZED_ALIGNED */
PASS_THROUGH(_ZdaPvmSt11align_val_t, 27);	/* F_DELETE_ARRAY_SIZED_ALIGNED */
PASS_THROUGH(_ZdlPvSt11align_val_tRKSt9nothrow_t, 28);	/* F_DELETE_ALIGNED_NOTHROW */
PASS_THROUGH(_ZdaPvSt11align_val_tRKSt9nothrow_t, 29);	/* F_DELETE_ARRAY_ALIGNED_NOTHROW */
PASS_THROUGH(dlclose, 30);	/* F_DLCLOSE */
