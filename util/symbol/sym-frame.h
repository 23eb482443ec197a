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
	uint64_t offset;	/* ip - symbol start; without a symbol, ip's address in the
				 * module's link-time view (ip - load bias); without a module,
				 * ip; 0 for an inlined function */
	const char *file;	/* source file, NULL without debug info */
	uint32_t line;		/* 0 without debug info */
	bool inlined;		/* a function inlined at ip, not a frame of its own */
};

#endif
