/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UNWIND_H
#define MEMTRACK_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"

/* DWARF register numbers of x86-64 that the unwinder follows */
#define UNW_REG_RBP	6
#define UNW_REG_RSP	7
#define UNW_REG_RA	16

enum unwind_how {
	UNW_SAME,	/* the caller's value is this frame's */
	UNW_UNDEFINED,	/* lost; for the return address: the outermost frame */
	UNW_AT_CFA,	/* saved at CFA + off */
	UNW_VAL_CFA,	/* is CFA + off */
};

/* how to find the caller's registers at one instruction, from the CFI */
struct unwind_rule {
	uint8_t cfa_reg;	/* UNW_REG_RSP or UNW_REG_RBP */
	uint8_t ra_how, rbp_how;	/* enum unwind_how */
	int64_t cfa_off;	/* CFA = cfa_reg + cfa_off */
	int64_t ra_off, rbp_off;
};

/*
 * The rule at ip of process pid; with ret_addr, ip is a return address and
 * the rule is the call's (ip - 1).  0, or -errno when there is none (no
 * mapping, no CFI, or a rule beyond the unwind_rule forms).
 */
typedef int unwind_rule_fn(void *ctx, int32_t pid, uint64_t ip, bool ret_addr,
			   struct unwind_rule *rule);

/*
 * Unwinds a raw stack copy taken at an allocator's first instructions: the
 * return addresses, innermost first (the allocator's caller), as frame
 * pointer stacks have them.  data holds rec->size bytes read from rec->sp.
 * Returns how many ips it wrote, at most max.  *outer_cfa gets the CFA of
 * the outermost frame when the unwinding got there (its return address is
 * undefined: _start, a thread's start), else 0: the copy needs to reach no
 * further up than that.
 */
unsigned int unwind_raw_stack(const struct mt_raw_stack *rec, const uint8_t *data,
			      unwind_rule_fn *rule_of, void *ctx, __u64 *ips,
			      unsigned int max, uint64_t *outer_cfa);

#endif
