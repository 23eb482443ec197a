// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "util/symbol/unwind.h"

struct unwind_regs {
	uint64_t ip, sp, bp;
	bool bp_known;
};

struct stack_copy {
	uint64_t base;		/* the user address of data[0] */
	const uint8_t *data;
	uint32_t size;
};

static bool read_word(const struct stack_copy *st, uint64_t addr, uint64_t *out)
{
	if (addr < st->base || addr - st->base > st->size ||
	    st->size - (addr - st->base) < sizeof(*out))
		return false;
	memcpy(out, st->data + (addr - st->base), sizeof(*out));
	return true;
}

/* the caller's value of a register saved by rule (how, off); false when lost */
static bool recover(const struct stack_copy *st, uint8_t how, int64_t off,
		    uint64_t cfa, uint64_t same, bool same_known, uint64_t *out)
{
	switch (how) {
	case UNW_SAME:
		*out = same;
		return same_known;
	case UNW_AT_CFA:
		return read_word(st, cfa + off, out);
	case UNW_VAL_CFA:
		*out = cfa + off;
		return true;
	default:
		return false;
	}
}

/* one frame up: regs become the caller's; false at the outermost frame */
static bool step(const struct stack_copy *st, const struct unwind_rule *r,
		 struct unwind_regs *regs)
{
	uint64_t cfa, ra, bp = 0;
	bool bp_known;

	if (r->cfa_reg == UNW_REG_RSP)
		cfa = regs->sp + r->cfa_off;
	else if (r->cfa_reg == UNW_REG_RBP && regs->bp_known)
		cfa = regs->bp + r->cfa_off;
	else
		return false;
	if (!recover(st, r->ra_how, r->ra_off, cfa, 0, false, &ra) || !ra)
		return false;
	bp_known = recover(st, r->rbp_how, r->rbp_off, cfa, regs->bp, regs->bp_known, &bp);
	/* a stack grows down: a caller's frame is above, or the CFI was wrong */
	if (cfa <= regs->sp)
		return false;
	regs->ip = ra;
	regs->sp = cfa;
	regs->bp = bp;
	regs->bp_known = bp_known;
	return true;
}

/* the CFA of a frame whose caller is unknown by its rule: the outermost */
static uint64_t outermost_cfa(const struct unwind_rule *r, const struct unwind_regs *regs)
{
	if (r->ra_how != UNW_UNDEFINED)
		return 0;
	if (r->cfa_reg == UNW_REG_RSP)
		return regs->sp + r->cfa_off;
	return r->cfa_reg == UNW_REG_RBP && regs->bp_known ? regs->bp + r->cfa_off : 0;
}

unsigned int unwind_raw_stack(const struct mt_raw_stack *rec, const uint8_t *data,
			      unwind_rule_fn *rule_of, void *ctx, __u64 *ips,
			      unsigned int max, uint64_t *outer_cfa)
{
	const struct stack_copy st = { .base = rec->sp, .data = data, .size = rec->size };
	struct unwind_regs regs = { .ip = rec->ip, .sp = rec->sp, .bp = rec->bp,
				    .bp_known = true };
	/* the probe sits before the allocator's first push: its CFA is sp + 8 */
	struct unwind_rule rule = { .cfa_reg = UNW_REG_RSP, .cfa_off = 8,
				    .ra_how = UNW_AT_CFA, .ra_off = -8,
				    .rbp_how = UNW_SAME };
	unsigned int n = 0;
	bool ret_addr = false;

	*outer_cfa = 0;
	while (n < max) {
		if (rule_of(ctx, rec->pid, regs.ip, ret_addr, &rule) && ret_addr)
			break;
		*outer_cfa = outermost_cfa(&rule, &regs);
		if (!step(&st, &rule, &regs))
			break;
		ips[n++] = regs.ip;
		ret_addr = true;
	}
	return n;
}
