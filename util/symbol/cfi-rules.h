/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_CFI_RULES_H
#define MEMTRACK_CFI_RULES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/symbol/unwind.h"

/*
 * The unwind rules of one module, from its CFI (.eh_frame, else
 * .debug_frame), in the forms the unwinder follows (unwind.h); each
 * address's rule is computed once and kept.
 */
struct cfi_slot;

struct cfi_rules {
	Dwarf_CFI *eh_cfi;	/* .eh_frame, read at the first find */
	Dwarf_CFI *dbg_cfi;	/* .debug_frame, read at the first miss in .eh_frame */
	bool eh_read, dbg_read;
	struct cfi_slot *slots;	/* link-time address -> rule, open addressing */
	size_t cap, nr;
};

/*
 * The rule at a link-time address of the module whose file is elf.  Its
 * DWARF (for .debug_frame) is asked of dwarf_of(arg) only when .eh_frame
 * has no rule there: reading a module's debug information (decompressing
 * a separate debug file) takes far longer than its .eh_frame, and the
 * unwinder waits for it.  0, -ENOENT without CFI there, -EOPNOTSUPP for a
 * rule of another form, -ENOMEM.
 */
int cfi_rules__find(struct cfi_rules *c, Elf *elf, Dwarf *(*dwarf_of)(void *arg), void *arg,
		    uint64_t addr, struct unwind_rule *out);
void cfi_rules__exit(struct cfi_rules *c);

#endif
