// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinding by the CFI of .eh_frame, in the traced process, for
 * --call-graph dwarf: right in code built without frame pointers.
 *
 * Each module's .eh_frame_hdr gives the FDE of a pc by binary search; the
 * FDE's and its CIE's instructions, run up to the pc, give how to find
 * the caller: the CFA as rsp or rbp plus an offset, the return address and
 * the saved rbp at offsets from the CFA.  That rule is kept in a small
 * per-thread cache keyed by pc, so that a stack seen before costs a few
 * loads a frame.  What this does not follow (a CFA expression, as in PLT
 * stubs and signal frames; a module without .eh_frame_hdr) ends the stack.
 *
 * Modules come from dl_iterate_phdr, once, and again when a pc falls in
 * none of them (a library loaded since).  Every read of the stack is
 * bounded by the thread's stack mapping.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

#if defined(__x86_64__)

#define REG_RBP		6
#define REG_RSP		7
#define REG_RA		16
#define MAX_MODULES	1024
#define CACHE_SIZE	4096		/* rules per thread, direct mapped */
#define MAX_STATE_STACK	8		/* DW_CFA_remember_state depth */

struct module {
	uintptr_t lo, hi;		/* its code */
	const uint8_t *hdr;		/* .eh_frame_hdr, NULL without one */
};

struct module_table {
	unsigned int n;
	struct module m[MAX_MODULES];
};

/* how to find the caller of a frame at pc */
struct rule {
	uint64_t pc;			/* 0: an empty slot */
	int32_t cfa_off;
	int16_t ra_off;			/* from the CFA */
	int16_t bp_off;			/* from the CFA, 0: rbp is not saved */
	uint8_t cfa_reg;		/* REG_RSP or REG_RBP; 0: no rule */
};

static struct module_table *modules;	/* published whole; old tables are kept */
static unsigned int generation;		/* of the libraries loaded: a cache of another is void */

static __thread struct rule *cache __attribute__((tls_model("initial-exec")));
static __thread unsigned int cache_generation __attribute__((tls_model("initial-exec")));

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_table *t = arg;
	struct module m = { 0 };
	int i;

	(void)size;
	if (t->n == MAX_MODULES)
		return 1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_GNU_EH_FRAME)
			m.hdr = (const uint8_t *)lo;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!m.lo || lo < m.lo)
			m.lo = lo;
		if (lo + ph->p_memsz > m.hi)
			m.hi = lo + ph->p_memsz;
	}
	if (m.lo)
		t->m[t->n++] = m;
	return 0;
}

static void load_modules(void)
{
	struct module_table *t = shim_mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (t == MAP_FAILED)
		return;
	dl_iterate_phdr(add_module, t);
	/* readers may still hold the old table: it is not unmapped */
	__atomic_store_n(&modules, t, __ATOMIC_RELEASE);
}

static const struct module *module_of(uintptr_t pc, bool reload)
{
	struct module_table *t = __atomic_load_n(&modules, __ATOMIC_ACQUIRE);
	unsigned int i;

	for (i = 0; t && i < t->n; i++)
		if (pc >= t->m[i].lo && pc < t->m[i].hi)
			return &t->m[i];
	if (!reload)
		return NULL;
	load_modules();
	return module_of(pc, false);
}

static uint64_t uleb(const uint8_t **p)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = *(*p)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

static int64_t sleb(const uint8_t **p)
{
	int64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = *(*p)++;
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* a DW_EH_PE-encoded pointer; false for an encoding not handled */
static bool read_encoded(const uint8_t **p, uint8_t enc, uintptr_t data_base, uintptr_t *out)
{
	const uint8_t *start = *p;
	uintptr_t v;

	if (enc == 0xff)	/* DW_EH_PE_omit */
		return false;
	switch (enc & 0x0f) {
	case 0x00: v = *(const uint64_t *)*p; *p += 8; break;	/* absptr */
	case 0x01: v = uleb(p); break;
	case 0x02: v = *(const uint16_t *)*p; *p += 2; break;
	case 0x03: v = *(const uint32_t *)*p; *p += 4; break;
	case 0x04: v = *(const uint64_t *)*p; *p += 8; break;
	case 0x09: v = sleb(p); break;
	case 0x0a: v = (intptr_t)*(const int16_t *)*p; *p += 2; break;
	case 0x0b: v = (intptr_t)*(const int32_t *)*p; *p += 4; break;
	case 0x0c: v = *(const int64_t *)*p; *p += 8; break;
	default: return false;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += (uintptr_t)start; break;	/* pcrel */
	case 0x30: v += data_base; break;		/* datarel */
	default: return false;
	}
	*out = v;
	return true;
}

/* the FDE covering pc, by binary search of .eh_frame_hdr's table */
static const uint8_t *find_fde(const struct module *m, uintptr_t pc)
{
	const uint8_t *h = m->hdr, *p;
	const int32_t *table;
	uintptr_t eh_frame, count;
	size_t lo = 0, hi;

	if (!h || h[0] != 1 || h[3] != 0x3b)	/* datarel sdata4: what ld writes */
		return NULL;
	p = h + 4;
	if (!read_encoded(&p, h[1], (uintptr_t)h, &eh_frame) ||
	    !read_encoded(&p, h[2], (uintptr_t)h, &count) || !count)
		return NULL;
	table = (const int32_t *)p;
	hi = count;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if ((uintptr_t)h + table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)h + table[2 * lo] > pc)
		return NULL;
	return h + table[2 * lo + 1];
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_aug_data;
	const uint8_t *insns, *end;
};

static bool parse_cie(const uint8_t *p, struct cie *c)
{
	uint32_t len = *(const uint32_t *)p;
	const uint8_t *end = p + 4 + len;
	const char *aug;
	uint8_t version;

	if (len == 0xffffffff || *(const uint32_t *)(p + 4) != 0)
		return false;	/* 64-bit DWARF, or not a CIE */
	p += 8;
	version = *p++;
	aug = (const char *)p;
	p += strlen(aug) + 1;
	c->code_align = uleb(&p);
	c->data_align = sleb(&p);
	c->ra_reg = version == 1 ? *p++ : uleb(&p);
	c->fde_enc = 0;
	c->has_aug_data = aug[0] == 'z';
	if (c->has_aug_data) {
		uint64_t n = uleb(&p);
		const uint8_t *data_end = p + n;
		uintptr_t ignored;

		for (aug++; *aug; aug++) {
			if (*aug == 'R') {
				c->fde_enc = *p++;
			} else if (*aug == 'L') {
				p++;
			} else if (*aug == 'P') {
				uint8_t enc = *p++;

				if (!read_encoded(&p, enc & 0x7f, 0, &ignored))
					return false;
			} else {
				return false;	/* 'S': a signal frame, not followed */
			}
		}
		p = data_end;
	}
	c->insns = p;
	c->end = end;
	return c->ra_reg == REG_RA;
}

struct cfa_state {
	uint8_t cfa_reg;
	int64_t cfa_off;
	int64_t ra_off, bp_off;
	bool ra_set;
};

/*
 * Runs instructions from p to end, the location starting at loc, up to
 * (not past) pc.  False for what is not followed.
 */
static bool run_cfa(const uint8_t *p, const uint8_t *end, const struct cie *c,
		    uintptr_t loc, uintptr_t pc, struct cfa_state *st,
		    const struct cfa_state *initial)
{
	struct cfa_state saved[MAX_STATE_STACK];
	unsigned int depth = 0;

	while (p < end) {
		uint8_t op = *p++, low = op & 0x3f;
		uint64_t reg;
		int64_t off;

		switch (op >> 6) {
		case 1:		/* advance_loc */
			loc += low * c->code_align;
			if (loc > pc)
				return true;
			continue;
		case 2:		/* offset */
			off = (int64_t)uleb(&p) * c->data_align;
			if (low == REG_RA)
				st->ra_off = off, st->ra_set = true;
			else if (low == REG_RBP)
				st->bp_off = off;
			continue;
		case 3:		/* restore */
			if (low == REG_RBP)
				st->bp_off = initial ? initial->bp_off : 0;
			continue;
		}
		switch (op) {
		case 0x00:	/* nop */
			break;
		case 0x02: loc += *p++ * c->code_align; if (loc > pc) return true; break;
		case 0x03: loc += *(const uint16_t *)p * c->code_align; p += 2;
			if (loc > pc) return true;
			break;
		case 0x04: loc += *(const uint32_t *)p * c->code_align; p += 4;
			if (loc > pc) return true;
			break;
		case 0x05:	/* offset_extended */
			reg = uleb(&p);
			off = (int64_t)uleb(&p) * c->data_align;
			if (reg == REG_RA)
				st->ra_off = off, st->ra_set = true;
			else if (reg == REG_RBP)
				st->bp_off = off;
			break;
		case 0x06: case 0x07: case 0x08:	/* restore_ext, undefined, same_value */
			reg = uleb(&p);
			if (reg == REG_RBP)
				st->bp_off = 0;
			if (reg == REG_RA && op == 0x07)
				return false;	/* no caller: the outermost frame */
			break;
		case 0x09:	/* register */
			reg = uleb(&p);
			uleb(&p);
			if (reg == REG_RA || reg == REG_RBP)
				return false;
			break;
		case 0x0a:	/* remember_state */
			if (depth == MAX_STATE_STACK)
				return false;
			saved[depth++] = *st;
			break;
		case 0x0b:	/* restore_state */
			if (!depth)
				return false;
			*st = saved[--depth];
			break;
		case 0x0c:	/* def_cfa */
			st->cfa_reg = uleb(&p);
			st->cfa_off = uleb(&p);
			break;
		case 0x0d: st->cfa_reg = uleb(&p); break;	/* def_cfa_register */
		case 0x0e: st->cfa_off = uleb(&p); break;	/* def_cfa_offset */
		case 0x11:	/* offset_extended_sf */
			reg = uleb(&p);
			off = sleb(&p) * c->data_align;
			if (reg == REG_RA)
				st->ra_off = off, st->ra_set = true;
			else if (reg == REG_RBP)
				st->bp_off = off;
			break;
		case 0x12:	/* def_cfa_sf */
			st->cfa_reg = uleb(&p);
			st->cfa_off = sleb(&p) * c->data_align;
			break;
		case 0x13: st->cfa_off = sleb(&p) * c->data_align; break;
		case 0x2e: uleb(&p); break;	/* GNU_args_size */
		default:
			return false;	/* expressions, val_offset ...: not followed */
		}
	}
	return true;
}

static bool compute_rule(uintptr_t pc, struct rule *r)
{
	const struct module *m = module_of(pc, true);
	const uint8_t *fde, *p, *cie_p;
	struct cfa_state st = { 0 }, initial;
	uintptr_t start, range;
	struct cie c;

	if (!m || !(fde = find_fde(m, pc)))
		return false;
	if (*(const uint32_t *)fde == 0xffffffff)
		return false;
	p = fde + 4;
	cie_p = p - *(const int32_t *)p;
	if (!parse_cie(cie_p, &c))
		return false;
	p += 4;
	if (!read_encoded(&p, c.fde_enc, 0, &start) ||
	    !read_encoded(&p, c.fde_enc & 0x0f, 0, &range) || pc < start || pc >= start + range)
		return false;
	if (c.has_aug_data)
		p += uleb(&p);
	if (!run_cfa(c.insns, c.end, &c, 0, UINTPTR_MAX, &st, NULL))
		return false;
	initial = st;
	if (!run_cfa(p, fde + 4 + *(const uint32_t *)fde, &c, start, pc, &st, &initial))
		return false;
	if ((st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) || !st.ra_set)
		return false;
	r->pc = pc;
	r->cfa_reg = st.cfa_reg;
	r->cfa_off = st.cfa_off;
	r->ra_off = st.ra_off;
	r->bp_off = st.bp_off;
	return true;
}

static const struct rule *rule_of(uintptr_t pc)
{
	struct rule *r;

	if (!cache) {
		cache = shim_mmap(NULL, CACHE_SIZE * sizeof(*cache), PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (cache == MAP_FAILED) {
			cache = NULL;
			return NULL;
		}
	}
	if (cache_generation != __atomic_load_n(&generation, __ATOMIC_ACQUIRE)) {
		memset(cache, 0, CACHE_SIZE * sizeof(*cache));
		cache_generation = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
	}
	r = &cache[(pc ^ (pc >> 12)) & (CACHE_SIZE - 1)];
	if (r->pc == pc)
		return r->cfa_reg ? r : NULL;
	if (!compute_rule(pc, r)) {
		r->pc = pc;
		r->cfa_reg = 0;	/* known to end a stack */
		return NULL;
	}
	return r;
}

static bool in_stack(uintptr_t a, uintptr_t lo, uintptr_t hi)
{
	return a >= lo && a + 8 <= hi && !(a & 7);
}

uint32_t shim_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi,
		       uint64_t *ips, uint32_t max)
{
	uint32_t nr = 0;

	while (nr < max && ip) {
		const struct rule *r;
		uintptr_t cfa;

		ips[nr++] = ip;
		/* ip is a return address: its call is the instruction before */
		r = rule_of(ip - 1);
		if (!r)
			break;
		cfa = (r->cfa_reg == REG_RSP ? sp : bp) + r->cfa_off;
		if (cfa <= sp || !in_stack(cfa + r->ra_off, sp, stack_hi))
			break;
		if (r->bp_off) {
			if (!in_stack(cfa + r->bp_off, sp, stack_hi))
				break;
			bp = *(const uintptr_t *)(cfa + r->bp_off);
		}
		ip = *(const uintptr_t *)(cfa + r->ra_off);
		sp = cfa;
	}
	return nr;
}

/* a library went: its pcs may get other code, and its tables are gone */
void shim_cfi_forget(void)
{
	__atomic_store_n(&modules, NULL, __ATOMIC_RELEASE);
	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
}

#else

uint32_t shim_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi,
		       uint64_t *ips, uint32_t max)
{
	(void)ip, (void)sp, (void)bp, (void)stack_hi, (void)ips, (void)max;
	return 0;
}

void shim_cfi_forget(void)
{
}

#endif
