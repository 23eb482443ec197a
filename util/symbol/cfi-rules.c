// SPDX-License-Identifier: GPL-2.0
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/symbol/cfi-rules.h"

struct cfi_slot {
	uint64_t addr;		/* + 1: 0 is an empty slot */
	int err;		/* 0, or why there is no rule at addr */
	struct unwind_rule rule;
};

/* a register's rule as libdw gives it, in the few forms compilers emit */
static int register_rule(Dwarf_Frame *frame, int regno, uint8_t *how, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return -EINVAL;
	*off = 0;
	if (!nops) {
		*how = ops ? UNW_UNDEFINED : UNW_SAME;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -EOPNOTSUPP;
	*how = UNW_AT_CFA;
	if (nops > 1 && ops[nops - 1].atom == DW_OP_stack_value) {
		*how = UNW_VAL_CFA;
		nops--;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (int64_t)ops[1].number;
	else if (nops != 1)
		return -EOPNOTSUPP;
	return 0;
}

static int cfi_rule(Dwarf_CFI *cfi, uint64_t addr, struct unwind_rule *out)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int err = -EOPNOTSUPP;
	unsigned int reg;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame))
		return -ENOENT;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		goto out;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		out->cfa_off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		out->cfa_off = (int64_t)ops[0].number;
	} else {
		goto out;
	}
	if (reg != UNW_REG_RSP && reg != UNW_REG_RBP)
		goto out;
	out->cfa_reg = reg;
	err = register_rule(frame, UNW_REG_RA, &out->ra_how, &out->ra_off);
	if (!err)
		err = register_rule(frame, UNW_REG_RBP, &out->rbp_how, &out->rbp_off);
out:
	free(frame);
	return err;
}

/* the rule from .eh_frame, else from .debug_frame, each read once */
static int find_rule(struct cfi_rules *c, Elf *elf, Dwarf *(*dwarf_of)(void *arg), void *arg,
		     uint64_t addr, struct unwind_rule *out)
{
	int err;

	if (!c->eh_read) {
		c->eh_read = true;
		c->eh_cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	}
	err = cfi_rule(c->eh_cfi, addr, out);
	if (err != -ENOENT || !dwarf_of)
		return err;
	if (!c->dbg_read) {
		Dwarf *dwarf = dwarf_of(arg);

		c->dbg_read = true;
		c->dbg_cfi = dwarf ? dwarf_getcfi(dwarf) : NULL;	/* owned by dwarf */
	}
	return cfi_rule(c->dbg_cfi, addr, out);
}

static int rules_grow(struct cfi_rules *c)
{
	size_t cap = c->cap ? 2 * c->cap : 256, i, j;
	struct cfi_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < c->cap; i++) {
		if (!c->slots[i].addr)
			continue;
		for (j = (c->slots[i].addr * 0x9e3779b97f4a7c15ULL) >> 20 & (cap - 1);
		     slots[j].addr; j = (j + 1) & (cap - 1))
			;
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

int cfi_rules__find(struct cfi_rules *c, Elf *elf, Dwarf *(*dwarf_of)(void *arg), void *arg,
		    uint64_t addr, struct unwind_rule *out)
{
	struct cfi_slot *slot;
	size_t i;
	int err;

	if ((c->nr + 1) * 2 > c->cap && rules_grow(c))
		return -ENOMEM;
	for (i = ((addr + 1) * 0x9e3779b97f4a7c15ULL) >> 20 & (c->cap - 1);
	     c->slots[i].addr; i = (i + 1) & (c->cap - 1)) {
		slot = &c->slots[i];
		if (slot->addr == addr + 1) {
			if (!slot->err)
				*out = slot->rule;
			return slot->err;
		}
	}
	err = find_rule(c, elf, dwarf_of, arg, addr, &c->slots[i].rule);
	/* the table did not move: find_rule() adds no slot */
	slot = &c->slots[i];
	slot->addr = addr + 1;
	slot->err = err;
	c->nr++;
	if (!err)
		*out = slot->rule;
	return err;
}

void cfi_rules__exit(struct cfi_rules *c)
{
	if (c->eh_cfi)
		dwarf_cfi_end(c->eh_cfi);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
