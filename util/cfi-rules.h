/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_CFI_RULES_H
#define MEMTRACK_CFI_RULES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/*
 * The unwind rules of one module, from its CFI (.eh_frame, else
 * .debug_frame), in the forms the unwinder follows (unwind.h); each
 * address's rule is computed once and kept.
 */
struct cfi_slot;

struct cfi_rules {
	Dwarf_CFI *eh_cfi;	/* .eh_frame, then .debug_frame: read at the first find */
	Dwarf_CFI *dbg_cfi;
	bool read;
	struct cfi_slot *slots;	/* link-time address -> rule, open addressing */
	size_t cap, nr;
};

/*
 * The rule at a link-time address of the module whose file is elf and
 * whose DWARF is dwarf (NULL: none).  0, -ENOENT without CFI there,
 * -EOPNOTSUPP for a rule of another form, -ENOMEM.
 */
int cfi_rules__find(struct cfi_rules *c, Elf *elf, Dwarf *dwarf, uint64_t addr,
		    struct unwind_rule *out);
void cfi_rules__exit(struct cfi_rules *c);

#endif
