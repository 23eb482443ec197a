/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_SYM_FRAME_H
#define MEMTRACK_SYM_FRAME_H

/*
 * What the symbolizer says of one address: the frames there (the functions
 * inlined at it, then its own).  Shared by the symbolizer (symbolize.h) and
 * its modules (sym-module.h), which include it, not each other.
 */

#include <stdbool.h>
#include <stdint.h>

#define SYM_UNKNOWN		"[unknown]"
/* frames of one address at most: the functions inlined there, then its own */
#define SYM_MAX_FRAMES		16

struct sym_frame {
	const char *module;	/* path of the mapped file, "[unknown]" when no mapping covers ip */
	const char *symbol;	/* function name as in the ELF (not demangled), "[unknown]" if none;
				 * an inlined function's linkage name (or name) from DWARF */
	uint64_t offset;	/* ip - symbol start; without a symbol, ip's offset in the
				 * module's file (what perf and pprof call it); without a
				 * module, ip; 0 for an inlined function */
	const char *file;	/* source file, NULL without debug info */
	uint32_t line;		/* 0 without debug info */
	bool inlined;		/* a function inlined at ip, not a frame of its own */
};

/* a build id's bytes at most (GNU's are 20) */
#define SYM_BUILD_ID_MAX	32

/* the mapping of the module an address was found in */
struct sym_map_info {
	const char *module;	/* its path, as sym_frame.module; NULL: no mapping */
	const char *build_id;	/* hex, NULL when the file has none */
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint64_t maps_gen;	/* the process's mappings it was found in: 0, older ones */
};

#endif
