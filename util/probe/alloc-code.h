/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ALLOC_CODE_H
#define MEMTRACK_ALLOC_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/probe/allocators.h"

/*
 * What the allocator functions of one ELF file do, read from its code and
 * its dynamic relocations once per file: which of them only wrap the C
 * allocator family (operator new calling malloc, libbsd's reallocarray
 * calling realloc), which allocate by themselves (a bump allocator, jemalloc),
 * and which of the allocator names the file takes from other objects.
 *
 * A function wraps the C family when its code calls or jumps to one of the
 * functions the preload shim interposes through the dynamic linker (a PLT
 * entry, or a GOT slot with -fno-plt), or to another allocator function of
 * the same file that does: such a call reaches the shim, which records it,
 * so the wrapper itself need not be seen.  The calls are found by looking
 * at every byte of the function as the start of a call or jump (e8, e9,
 * 0f 8x, eb, 7x, ff 15, ff 25) and testing its target against the few
 * addresses that matter: no instruction decoder, and no call missed; a
 * false positive needs a 32-bit displacement that hits one of those
 * addresses by chance.  A function that allocates by itself and calls
 * malloc too (a pool that refills from malloc) is taken for a wrapper:
 * what it hands out without calling malloc would be missed, as an
 * interposing tracer (heaptrack) misses it.  Elsewhere than x86-64 the code
 * is not read: every function counts as allocating by itself.
 */

/* alloc_fn.flags */
#define ALLOC_FN_WRAPS_LIBC	(1U << 0)	/* reaches the shim's functions: the shim sees its calls */
#define ALLOC_FN_WRAPS_PROBED	(1U << 1)	/* calls another allocator function (any file's) */
#define ALLOC_FN_ALIAS		(1U << 2)	/* not interposed, at the address of one that is */

#define ALLOC_FN_RETS_MAX	8

struct alloc_fn {
	uint64_t offset;	/* in the file, where a uprobe goes; 0: not defined here */
	uint64_t vaddr;
	uint64_t size;		/* its symbol's, 0 if unknown */
	unsigned int flags;
	/*
	 * Its return instructions (file offsets), for the functions whose
	 * return address must stay as it is (a sanitizer runtime's, one an
	 * exception may leave): -1 when not looked for, or when some way out
	 * of it is not a return of its own (a jump out, an indirect jump).
	 */
	int nrets;
	uint64_t rets[ALLOC_FN_RETS_MAX];
};

struct alloc_code {
	struct alloc_fn fns[128];	/* by alloc_symbols' index */
	struct alloc_set defined;	/* the allocator functions the file defines */
	struct alloc_set imports;	/* those it takes from other objects (undefined in .dynsym) */
	bool interp;			/* an executable with an ELF interpreter (PT_INTERP) */
	bool sanitizer;			/* needs a sanitizer runtime that must come first (DT_NEEDED) */
	bool sanitizer_runtime;		/* is one (DT_SONAME): it unwinds from its own functions */
	bool code_read;			/* the flags above come from the code (x86-64) */
};

/*
 * The return instructions of the function at vaddr (size bytes of code),
 * decoded from its first byte to its last: how many, their addresses in
 * rets[]; -1 when some way out of it is not a return of its own.
 */
int alloc_code__returns(const uint8_t *code, uint64_t vaddr, uint64_t size, uint64_t *rets,
			int max);

/*
 * Whether the function at vaddr (size bytes of code, decoded) calls or
 * jumps through a register or memory: to code that the calls found by
 * alloc_code__calls() do not show.
 */
bool alloc_code__calls_through_pointer(const uint8_t *code, uint64_t vaddr, uint64_t size);

/*
 * reads path, if it is a regular file (-EINVAL: it is not); the number of
 * allocator functions it defines, or -errno
 */
int alloc_code__read(const char *path, struct alloc_code *ac);
/* the same, of the file open at fd, which it closes; fd < 0: its open's -errno, returned */
int alloc_code__read_fd(int fd, struct alloc_code *ac);
/* the same, every symbol read, never looked up by its GNU hash: what the lookup must match */
int alloc_code__read_scanning(const char *path, struct alloc_code *ac);
/* a sanitizer runtime's file name (libasan, libhwasan, libtsan, clang_rt.*) */
bool alloc_code__is_sanitizer(const char *lib);
/* the symbols and the image alone, no code decoded: no flag but ALLOC_FN_ALIAS is set */
int alloc_code__read_names(const char *path, struct alloc_code *ac);

/* an address a call of interest goes to */
struct alloc_target {
	uint64_t addr;
	int sym;		/* alloc_symbols' index */
	bool slot;		/* a GOT slot (call or jmp *slot(%rip)), else code */
	bool dynamic;		/* bound by the dynamic linker (a PLT entry or a GOT slot) */
};

/*
 * Sets hit[i] for each target the code at vaddr (len bytes) may call or
 * jump to; what alloc_code__read() does for each allocator function.
 */
void alloc_code__calls(const uint8_t *code, uint64_t vaddr, uint64_t len,
		       const struct alloc_target *t, unsigned int nt, bool *hit);

#endif
