/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_DWARF_LINES_H
#define MEMTRACK_DWARF_LINES_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Source lines and inlined calls of one module's DWARF, by link-time
 * address.  Strings point into the Dwarf's data and live as long as it.
 */
struct dwarf_cu_range;

struct dwarf_lines {
	Dwarf *dwarf;			/* the caller's */
	struct dwarf_cu_range *cus;	/* sorted */
	size_t nr_cus;
};

/* one source-level frame at an address */
struct src_frame {
	const char *function;	/* an inlined function: its linkage name, else its
				 * name; NULL for the function the code is in */
	const char *file;	/* NULL when unknown */
	uint32_t line;		/* 0 when unknown */
};

/* reads the address ranges of the units of dwarf (not the units); 0 or -ENOMEM */
int dwarf_lines__init(struct dwarf_lines *dl, Dwarf *dwarf);
void dwarf_lines__exit(struct dwarf_lines *dl);

/*
 * The source frames at addr, innermost first: one per function inlined
 * there, each with the line in it, then the function that holds the code
 * with the line where the outermost inlined call was made (the line at
 * addr when nothing is inlined).  Returns how many (at most max), 0 when
 * no unit covers addr.
 */
int dwarf_lines__find(const struct dwarf_lines *dl, uint64_t addr,
		      struct src_frame *out, int max);

#endif
