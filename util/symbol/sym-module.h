/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SYM_MODULE_H
#define MEMTRACK_SYM_MODULE_H

#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/symbol/cfi-rules.h"
#include "util/symbol/dwarf-lines.h"
#include "util/symbol/elf-syms.h"
#include "util/symbol/sym-frame.h"

/*
 * One mapped file of the symbolizer (symbolize.h describes when it is
 * opened and read): its ELF, and once loaded its PT_LOAD segments, symbols,
 * DWARF (its own or its separate debug file's) and unwind rules.
 */
struct debuginfo;
struct dwarf_cache;

/* what one line of /proc/<pid>/maps (or an mmap event) says of a file mapping */
struct sym_file_map {
	uint64_t start, end, pgoff;
	dev_t dev;
	uint64_t ino;
	const char *path;	/* a path, or "[vdso]" */
};

struct frames_slot;

struct load_seg {
	uint64_t offset;	/* p_offset */
	uint64_t filesz;
	uint64_t vaddr;
};

struct sym_module {
	struct sym_module *hnext;	/* the symbolizer's table */
	struct sym_module *next;
	dev_t dev;
	uint64_t ino;
	char *path;
	pthread_mutex_t lock;	/* everything below */
	Elf *elf;		/* file mapped when first seen; NULL if it could not be */
	void *image;		/* our copy of the vdso */
	bool pseudo;		/* [vdso] */
	bool prepared;		/* sym_module__prepare() ran */
	bool loaded;		/* sym_module__load() ran */
	bool warned;
	bool is_exec;		/* ET_EXEC: ip is the link-time address */
	char build_id[2 * SYM_BUILD_ID_MAX + 1];	/* hex; "" when it has none */
	struct load_seg *segs;
	size_t nr_segs;
	struct elf_symtab symtab;
	Elf *dbg_elf;		/* separate debug file */
	Elf *dwarf_elf;		/* the file with the DWARF, opened at the first need */
	bool dwarf_tried;
	Dwarf *dwarf;
	struct dwarf_lines lines;
	struct dwarf_cache *dcache;	/* answers of earlier runs, by build id */
	struct cfi_rules cfi;
	struct frames_slot *frames;	/* address -> its frames, computed once */
	size_t frames_cap, nr_frames;
};

/* a module for the file of a mapping of pid, opened now (see symbolize.h); NULL: no memory */
struct sym_module *sym_module__new(pid_t pid, const struct sym_file_map *r);
/* a module whose file could not be opened yet: try again through pid */
void sym_module__reopen(struct sym_module *mod, pid_t pid, const struct sym_file_map *r);
void sym_module__delete(struct sym_module *mod);

/* the file and its segments, all unwind rules need; false without them; under mod->lock */
bool sym_module__prepare(struct sym_module *mod);
/*
 * Symbols and where the DWARF is, at the first resolve in the module; the
 * DWARF itself is opened when an address is not in the module's cache file
 * in cache_dir (-1: none).  Under mod->lock.
 */
void sym_module__load(struct sym_module *mod, struct debuginfo *dbg, int cache_dir);
/* the module's DWARF, opened now if it was not; NULL without.  Under mod->lock, loaded */
Dwarf *sym_module__dwarf(struct sym_module *mod);
/* the link-time address of ip, at file offset foff; under mod->lock, loaded */
uint64_t sym_module__vaddr(const struct sym_module *mod, uint64_t ip, uint64_t foff);
/*
 * The frames of the code at link-time address addr, innermost first (see
 * symbolizer__resolve_frames()); offsets are from vaddr.  Under mod->lock,
 * loaded.  Returns how many, 1 to max.
 */
int sym_module__frames(struct sym_module *mod, uint64_t vaddr, uint64_t addr,
		       struct sym_frame *out, int max);

#endif
