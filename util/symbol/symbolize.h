/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resolver stage: user-space instruction pointers of a process (pid is
 * a tgid) turned into module + symbol + offset, and file:line from DWARF.
 *
 * Mappings.  symbolizer__snapshot() reads /proc/<pid>/maps and keeps the
 * executable file mappings of pid (and [vdso]); a fork shares the parent's
 * set; symbolizer__exec() replaces it but keeps the previous image's set as a
 * fallback for stacks taken before the exec.  An ip that no mapping of a
 * live pid covers makes the resolver read /proc/<pid>/maps again (libraries
 * that ld.so or dlopen() mapped after the exec snapshot; a pid never
 * snapshotted), at most once per millisecond per pid; what it reads is
 * merged with what it had, so a dlclose()d library still resolves stacks
 * taken before the dlclose().  symbolizer__add_mapping() adds a mapping
 * known from elsewhere (an mmap event), for processes too short-lived to
 * be read.  A pid reused before the stacks of its previous process are
 * resolved gets them resolved against the new process's mappings.
 *
 * Modules.  One per distinct file, keyed by the device and inode that
 * /proc/<pid>/maps shows.  The file is opened when a snapshot first sees it,
 * through /proc/<pid>/map_files/<start>-<end> (root: robust against deleted
 * or replaced files and other mount namespaces), else /proc/<pid>/root/<path>
 * or <path> if its inode still matches.  It is mapped by libelf and the fd
 * closed: no fd is held per module, and resolving works after the process
 * has exited and its file was deleted.  Opening at snapshot time costs an
 * open() and an mmap() per new file on the snapshotting thread; waiting for
 * the first resolve would lose every process that exits before its stacks
 * are resolved, which is the usual order in the pipeline.  The symbol table
 * and DWARF are read at the first resolve in the module, on the resolver
 * thread.  Symbols come from .symtab, else from the .symtab of the separate
 * debug file (found by build id, .gnu_debuglink or debuginfod: debuginfo.h),
 * else .dynsym; lines and inlined calls from the file's DWARF, else the debug
 * file's.  Modules live until
 * symbolizer__delete(); the mapping of a file pins its inode, so its
 * (device, inode) cannot be reused by another file meanwhile.
 *
 * Memory.  Per module: the file mapped (page cache, resident as touched),
 * 24 bytes per function symbol, 48 per DWARF unit range, and what libdw
 * keeps: decompressed debug sections (about 14 MB for libc6-dbg's libc) and
 * the line table of every unit looked up (in the order of 50 bytes a row).
 *
 * Exited processes.  symbolizer__exit() keeps the pid's mappings, since its
 * stacks are usually resolved after it is gone, but only for the last
 * SYMBOLIZER_KEEP_EXITED exited pids (symbolizer__set_keep_exited()); older
 * ones are dropped.  Modules are not dropped.
 *
 * Symbols are the names in the ELF (or DWARF, for inlined functions), not
 * demangled, without their version suffix ("@@GLIBC_2.34").
 *
 * Threads: every function may be called from any thread; a mutex guards the
 * pid and module tables, and each module has a lock of its own, so reading
 * a large symbol table or DWARF blocks neither snapshot() nor fork().
 */
#ifndef MEMTRACK_SYMBOLIZE_H
#define MEMTRACK_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/symbol/sym-frame.h"

#define SYMBOLIZER_KEEP_EXITED	4096

struct symbolizer;

/* a mapping learnt from elsewhere than /proc (an mmap event) */
struct sym_mapping {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint32_t dev_major, dev_minor;	/* as /proc/<pid>/maps shows them; from a
					 * kernel dev_t: dev >> 20, dev & 0xfffff */
	uint64_t ino;
	const char *path;
};

struct symbolizer *symbolizer__new(void);
void symbolizer__delete(struct symbolizer *s);

/*
 * Reads /proc/<pid>/maps now and remembers pid's executable file mappings,
 * replacing what it had for pid.  Opens the files it has not seen (see above),
 * parses nothing.  -ESRCH when pid is gone or has no mappings left (a zombie):
 * then what it had for pid is kept.
 */
int symbolizer__snapshot(struct symbolizer *s, pid_t pid);
struct proc_exec_maps;
/* snapshot() of mappings read already (proc_exec_maps__read()) */
int symbolizer__snapshot_maps(struct symbolizer *s, pid_t pid, const struct proc_exec_maps *maps);
/* snapshot() after an exec: the previous image stays as a fallback */
int symbolizer__exec(struct symbolizer *s, pid_t pid);
/* child starts with parent's mappings, shared; -ESRCH if parent is unknown */
int symbolizer__fork(struct symbolizer *s, pid_t parent, pid_t child);
/* pid is gone: its mappings are kept for the last SYMBOLIZER_KEEP_EXITED exits */
void symbolizer__exit(struct symbolizer *s, pid_t pid);
void symbolizer__set_keep_exited(struct symbolizer *s, unsigned int n);
/*
 * Where separate debug files are looked for (debuginfo.h): a colon-separated
 * list of directories, NULL or "" for none; by default MEMTRACK_DEBUG_DIRS,
 * else /usr/lib/debug.  Call it before the first resolve (it is not locked).
 */
int symbolizer__set_debug_dir(struct symbolizer *s, const char *dirs);
/*
 * The directory of DWARF cache files (dwarf-cache.h), an fd the symbolizer
 * now owns; -1: none (the default).  Before the first resolve.
 */
void symbolizer__set_cache_dir(struct symbolizer *s, int dir);
/* writes what each module's DWARF cache learned (symbolizer__delete() does too) */
void symbolizer__save_caches(struct symbolizer *s);
/* adds one executable mapping to pid's set (overlapping ones are replaced) */
int symbolizer__add_mapping(struct symbolizer *s, pid_t pid,
			    const struct sym_mapping *m);

/*
 * Resolves ip of pid, taken to be a return address: the symbol and the line
 * are those of ip - 1, the call instruction, so that a call ending a function
 * or the line of the call, not the next one, is reported; offset is still
 * ip - symbol start.  Fills out in every case ("[unknown]" parts when nothing
 * is known) and returns 0; -EINVAL without s or out.  Strings stay valid
 * until symbolizer__delete().
 */
int symbolizer__resolve(struct symbolizer *s, pid_t pid, uint64_t ip,
			struct sym_frame *out);
/* the same for an ip that is the instruction itself: the first frame (a uprobe's pc) */
int symbolizer__resolve_pc(struct symbolizer *s, pid_t pid, uint64_t ip,
			   struct sym_frame *out);
/*
 * Every frame of ip (a return address with ret_addr), innermost first: one
 * per function inlined at ip (inlined set, with its file:line), then the
 * function of ip, whose file:line is that of the outermost inlined call,
 * and whose frame is what symbolizer__resolve() gives.  Returns how many,
 * 1 to max (max >= 1; -EINVAL otherwise); the innermost ones are kept when
 * there are more.  info (may be NULL) gets the mapping ip was found in.
 */
int symbolizer__resolve_frames(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
			       struct sym_frame *out, int max, struct sym_map_info *info);
/*
 * The generation of pid's mappings, never the same for two sets, 0 when
 * none is known: an address resolved in mappings of one generation
 * (sym_map_info.maps_gen) resolves the same while the generation lasts.
 */
uint64_t symbolizer__maps_gen(struct symbolizer *s, pid_t pid);

struct unwind_rule;

/*
 * How to find the caller's registers at ip of pid (a return address with
 * ret_addr), from the module's .eh_frame or .debug_frame; computed once per
 * address.  0, -ENOENT without mapping or CFI, -EOPNOTSUPP for a rule of a
 * form the unwinder does not follow.
 */
int symbolizer__unwind_rule(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
			    struct unwind_rule *out);

struct symbolizer_stats {
	uint64_t modules;	/* distinct files seen */
	uint64_t loaded;	/* of which symbols/DWARF were read */
	uint64_t symbols;	/* in all loaded modules */
	uint64_t cu_ranges;	/* address ranges of DWARF units */
	uint64_t dwarf_opened;	/* modules whose DWARF was read */
	uint64_t dwarf_cached;	/* modules with a cache file, */
	uint64_t cache_addrs;	/* of which addresses it held */
	uint64_t pids;		/* pids with mappings, exited ones included */
	uint64_t map_sets;	/* distinct mapping sets (fork shares them) */
	uint64_t refreshes;	/* re-reads of /proc/<pid>/maps on a miss */
	uint64_t debug_build_id;	/* separate debug files found by build id, */
	uint64_t debug_debuglink;	/* by .gnu_debuglink, */
	uint64_t debug_debuginfod;	/* from debuginfod */
	uint64_t debuginfod_ns;		/* time spent asking debuginfod */
};

void symbolizer__stats(struct symbolizer *s, struct symbolizer_stats *st);

#endif
