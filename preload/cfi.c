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
 * Nothing read is trusted: the stack through struct shim_span, and the
 * tables through a cursor that stays inside the module's readable
 * PT_LOAD segments and inside the record being read.  A table that breaks
 * a rule (a length past its segment, a pointer out of the module, an
 * encoding not handled) ends the walk.
 *
 * Modules come from dl_iterate_phdr, once, and again when a pc falls in
 * none of them and the loader's counts of objects added and removed have
 * moved.  dlclose() unmaps a module's tables: it waits until no thread is
 * reading tables, and keeps them out until the module is gone
 * (shim_cfi_close_begin/end).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

#if defined(__x86_64__)

#define DW_RBP		6		/* DWARF register numbers */
#define DW_RSP		7
#define DW_RA		16
#define MAX_EXTENTS	8		/* readable PT_LOADs kept per module */
#define CACHE_FIRST	256		/* rules: one page */
#define CACHE_MAX	32768		/* 512 KiB: the return addresses cc1plus's stacks hold */
#define MAX_STATE_STACK	8		/* DW_CFA_remember_state depth */

struct extent {
	uintptr_t lo, hi;
};

struct module {
	uintptr_t lo, hi;		/* its code */
	uintptr_t hdr;			/* .eh_frame_hdr, 0 without one */
	uintptr_t base;			/* where the loader put it: a pc's offset is from here */
	uint32_t key;			/* of its build id, for the shared rules; 0: none */
	unsigned int nr_ext;
	struct extent ext[MAX_EXTENTS];	/* what of it may be read */
};

struct module_table {
	struct module_table *retired;	/* an older table, unmapped once no reader is left */
	size_t bytes;
	unsigned long long adds, subs;	/* the loader's counts when it was read */
	unsigned int n, cap;
	struct module m[];
};

/* how to find the caller of a frame at pc */
struct rule {
	uint64_t pc;			/* 0: an empty slot */
	int32_t cfa_off;
	int16_t bp_off;			/* from the CFA, 0: rbp is not saved */
	int8_t ra_off;			/* from the CFA, 0: no rule, the stack ends here */
	uint8_t cfa_reg;		/* DW_RSP or DW_RBP */
};

/*
 * Who reads tables, and a dlclose() under way.  In a page of its own,
 * wiped in a forked child: a thread of the parent that was reading when
 * another forked would otherwise be counted in the child for ever.
 */
struct table_sync {
	uint32_t readers;
	uint32_t closing;
};

static struct table_sync *sync_page;
static struct module_table *modules;	/* published whole; replaced ones are retired */
static unsigned int generation;		/* of the libraries loaded: a cache of another is void */

static __thread struct rule *cache __attribute__((tls_model("initial-exec")));
static __thread unsigned int cache_cap, cache_misses, cache_generation
	__attribute__((tls_model("initial-exec")));

static struct table_sync *table_sync(void)
{
	struct table_sync *s = __atomic_load_n(&sync_page, __ATOMIC_ACQUIRE), *expected = NULL;

	if (s)
		return s;
	s = shim_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return NULL;
	if (madvise(s, 4096, MADV_WIPEONFORK)) {
		shim_munmap(s, 4096);
		return NULL;
	}
	if (!__atomic_compare_exchange_n(&sync_page, &expected, s, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		shim_munmap(s, 4096);
		return expected;
	}
	return s;
}

/* false: a dlclose() is under way, no table may be read */
static bool tables_enter(struct table_sync *s)
{
	__atomic_add_fetch(&s->readers, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&s->closing, __ATOMIC_SEQ_CST))
		return true;
	__atomic_sub_fetch(&s->readers, 1, __ATOMIC_RELEASE);
	return false;
}

static void tables_leave(struct table_sync *s)
{
	__atomic_sub_fetch(&s->readers, 1, __ATOMIC_RELEASE);
}

void shim_cfi_close_begin(void)
{
	struct table_sync *s = table_sync();

	if (!s)
		return;
	__atomic_add_fetch(&s->closing, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&s->readers, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void free_tables(struct module_table *t)
{
	while (t) {
		struct module_table *older = t->retired;

		shim_munmap(t, t->bytes);
		t = older;
	}
}

/* the library is gone: so are its pcs' rules, and the tables that listed it */
void shim_cfi_close_end(void)
{
	struct table_sync *s = table_sync();
	struct module_table *t = __atomic_exchange_n(&modules, NULL, __ATOMIC_ACQ_REL);

	__atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
	if (!s)
		return;
	/* no reader can hold a table: they wait for closing to end */
	free_tables(t);
	__atomic_sub_fetch(&s->closing, 1, __ATOMIC_RELEASE);
}

static bool add_overflows(uintptr_t a, uintptr_t b, uintptr_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

/* a + off, false when it leaves the address space (the builtin sums exactly) */
static bool add_offset(uintptr_t a, int64_t off, uintptr_t *out)
{
	return !__builtin_add_overflow(a, off, out);
}

static void add_extent(struct module *m, uintptr_t lo, uintptr_t hi)
{
	unsigned int i;

	/* segments the loader mapped back to back read as one */
	for (i = 0; i < m->nr_ext; i++) {
		if (m->ext[i].hi == lo) {
			m->ext[i].hi = hi;
			return;
		}
		if (m->ext[i].lo == hi) {
			m->ext[i].lo = lo;
			return;
		}
	}
	if (m->nr_ext < MAX_EXTENTS)
		m->ext[m->nr_ext++] = (struct extent){ lo, hi };
}

static uint32_t build_id_key(const struct dl_phdr_info *info, const struct module *m);

static bool read_module(const struct dl_phdr_info *info, struct module *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi;

		if (add_overflows(info->dlpi_addr, ph->p_vaddr, &lo) ||
		    add_overflows(lo, ph->p_memsz, &hi))
			continue;
		if (ph->p_type == PT_GNU_EH_FRAME)
			m->hdr = lo;
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_flags & PF_R)
			add_extent(m, lo, hi);
		if (!(ph->p_flags & PF_X))
			continue;
		if (!m->lo || lo < m->lo)
			m->lo = lo;
		if (hi > m->hi)
			m->hi = hi;
	}
	m->key = build_id_key(info, m);
	return m->lo;
}

struct loader_counts {
	unsigned long long adds, subs;
};

static bool counts_of(const struct dl_phdr_info *info, size_t size, struct loader_counts *c)
{
	if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return false;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return true;
}

static int count_modules(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_table *t = arg;
	struct loader_counts c;

	if (!t->n && counts_of(info, size, &c)) {
		t->adds = c.adds;
		t->subs = c.subs;
	}
	t->n++;
	return 0;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_table *t = arg;

	(void)size;
	if (t->n == t->cap)
		return 1;
	if (read_module(info, &t->m[t->n]))
		t->n++;
	return 0;
}

static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (!counts_of(info, size, arg))
		*(struct loader_counts *)arg = (struct loader_counts){ ~0ULL, ~0ULL };
	return 1;
}

/* the loader has added or removed an object since t was read */
static bool modules_moved(const struct module_table *t)
{
	struct loader_counts c = { ~0ULL, ~0ULL };

	if (!t)
		return true;
	dl_iterate_phdr(first_counts, &c);
	return c.adds != t->adds || c.subs != t->subs || c.adds == ~0ULL;
}

/* a new table; the old one is retired, not unmapped: another reader may hold it */
static void load_modules(struct module_table *old)
{
	struct module_table probe = { 0 }, *t;
	size_t bytes;

	dl_iterate_phdr(count_modules, &probe);
	/* room for a few loaded meanwhile */
	bytes = offsetof(struct module_table, m) + (probe.n + 8) * sizeof(struct module);
	bytes = (bytes + 4095) & ~(size_t)4095;
	t = shim_mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return;
	t->bytes = bytes;
	t->cap = (bytes - offsetof(struct module_table, m)) / sizeof(struct module);
	t->adds = probe.adds;
	t->subs = probe.subs;
	dl_iterate_phdr(add_module, t);
	if (__atomic_compare_exchange_n(&modules, &old, t, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		t->retired = old;
		return;
	}
	shim_munmap(t, bytes);	/* another thread published first */
}

static const struct module *find_module(const struct module_table *t, uintptr_t pc)
{
	unsigned int i;

	for (i = 0; t && i < t->n; i++)
		if (pc >= t->m[i].lo && pc < t->m[i].hi)
			return &t->m[i];
	return NULL;
}

static const struct module *module_of(uintptr_t pc)
{
	struct module_table *t = __atomic_load_n(&modules, __ATOMIC_ACQUIRE);
	const struct module *m = find_module(t, pc);

	if (m || !modules_moved(t))
		return m;
	load_modules(t);
	return find_module(__atomic_load_n(&modules, __ATOMIC_ACQUIRE), pc);
}

/* a reader of a module's tables: [p, end) may be read */
struct cursor {
	uintptr_t p, end;
};

/* a cursor at a, up to the end of the readable segment holding it */
static bool cursor_at(const struct module *m, uintptr_t a, struct cursor *c)
{
	unsigned int i;

	for (i = 0; i < m->nr_ext; i++) {
		if (a >= m->ext[i].lo && a < m->ext[i].hi) {
			*c = (struct cursor){ a, m->ext[i].hi };
			return true;
		}
	}
	return false;
}

static bool cur_read(struct cursor *c, void *out, size_t n)
{
	if (c->end - c->p < n)
		return false;
	memcpy(out, (const void *)c->p, n);
	c->p += n;
	return true;
}

static bool cur_skip(struct cursor *c, uint64_t n)
{
	if (c->end - c->p < n)
		return false;
	c->p += n;
	return true;
}

static bool cur_u8(struct cursor *c, uint8_t *v)
{
	return cur_read(c, v, 1);
}

static bool cur_uleb(struct cursor *c, uint64_t *v)
{
	unsigned int shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (!cur_u8(c, &b))
			return false;
		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return true;
}

static bool cur_sleb(struct cursor *c, int64_t *v)
{
	unsigned int shift = 0;
	uint64_t u = 0;
	uint8_t b;

	do {
		if (!cur_u8(c, &b))
			return false;
		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		u |= ~0ULL << shift;
	*v = (int64_t)u;
	return true;
}

/* a DW_EH_PE-encoded pointer; false for an encoding not handled */
static bool cur_encoded(struct cursor *c, uint8_t enc, uintptr_t data_base, uintptr_t *out)
{
	uintptr_t start = c->p, v;
	union { uint16_t u16; uint32_t u32; uint64_t u64; int16_t s16; int32_t s32; } x;
	int64_t s;
	bool ok;

	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c:	/* absptr, udata8, sdata8 */
		ok = cur_read(c, &x.u64, 8), v = x.u64;
		break;
	case 0x01: ok = cur_uleb(c, &x.u64), v = x.u64; break;
	case 0x02: ok = cur_read(c, &x.u16, 2), v = x.u16; break;
	case 0x03: ok = cur_read(c, &x.u32, 4), v = x.u32; break;
	case 0x09: ok = cur_sleb(c, &s), v = s; break;
	case 0x0a: ok = cur_read(c, &x.s16, 2), v = (intptr_t)x.s16; break;
	case 0x0b: ok = cur_read(c, &x.s32, 4), v = (intptr_t)x.s32; break;
	default: return false;
	}
	if (!ok)
		return false;
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += start; break;		/* pcrel */
	case 0x30: v += data_base; break;	/* datarel */
	default: return false;
	}
	*out = v;
	return true;
}

/* a note's name or descriptor: its bytes, then padding to 4 */
static bool cur_note_part(struct cursor *c, uint32_t len, uintptr_t *at)
{
	*at = c->p;
	return cur_skip(c, ((uint64_t)len + 3) & ~3ULL);
}

/* a hash of the GNU build id in the module's notes, never 0; 0 without one */
static uint32_t build_id_key(const struct dl_phdr_info *info, const struct module *m)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi, name, desc;
		struct cursor c;
		uint32_t h[3];

		if (ph->p_type != PT_NOTE || add_overflows(info->dlpi_addr, ph->p_vaddr, &lo) ||
		    add_overflows(lo, ph->p_memsz, &hi) || !cursor_at(m, lo, &c))
			continue;
		if (hi < c.end)
			c.end = hi;
		while (cur_read(&c, h, sizeof(h)) && cur_note_part(&c, h[0], &name) &&
		       cur_note_part(&c, h[1], &desc)) {
			uint32_t key = 2166136261U, k;

			if (h[2] != NT_GNU_BUILD_ID || h[0] != 4 || memcmp((const void *)name, "GNU", 4) ||
			    !h[1])
				continue;
			for (k = 0; k < h[1]; k++)
				key = (key ^ ((const uint8_t *)desc)[k]) * 16777619U;
			return key ? key : 1;
		}
	}
	return 0;
}

/* the FDE covering pc, by binary search of .eh_frame_hdr's table */
static bool find_fde(const struct module *m, uintptr_t pc, uintptr_t *fde)
{
	struct cursor c;
	uint8_t h[4];
	uintptr_t eh_frame, count, table;
	size_t lo = 0, hi;
	int32_t e[2];

	if (!m->hdr || !cursor_at(m, m->hdr, &c) || !cur_read(&c, h, 4))
		return false;
	if (h[0] != 1 || h[3] != 0x3b || h[1] == 0xff || h[2] == 0xff)	/* datarel sdata4: ld's */
		return false;
	if (!cur_encoded(&c, h[1], m->hdr, &eh_frame) || !cur_encoded(&c, h[2], m->hdr, &count) ||
	    !count || count > (c.end - c.p) / 8)
		return false;
	table = c.p;
	hi = count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(e, (const void *)(table + 8 * mid), 8);
		if (m->hdr + (intptr_t)e[0] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	memcpy(e, (const void *)(table + 8 * lo), 8);
	if (m->hdr + (intptr_t)e[0] > pc)
		return false;
	return add_offset(m->hdr, e[1], fde);
}

/* a CIE or FDE at a: a cursor over its body, after the length */
static bool record_at(const struct module *m, uintptr_t a, struct cursor *body)
{
	uint32_t len;

	if (!cursor_at(m, a, body) || !cur_read(body, &len, 4))
		return false;
	/* 0 ends .eh_frame; ~0 is 64-bit DWARF, not written for .eh_frame */
	if (!len || len == 0xffffffff || body->end - body->p < len)
		return false;
	body->end = body->p + len;
	return true;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	bool has_aug_data;
	struct cursor insns;
};

static bool parse_cie(const struct module *m, uintptr_t a, struct cie *cie)
{
	struct cursor c;
	uint32_t id;
	uint8_t version, b;
	uint64_t ra_reg, n;
	char aug[8];
	unsigned int i = 0;

	if (!record_at(m, a, &c) || !cur_read(&c, &id, 4) || id || !cur_u8(&c, &version))
		return false;
	do {
		if (!cur_u8(&c, &b) || i == sizeof(aug))
			return false;	/* no augmentation string this long is known */
		aug[i++] = b;
	} while (b);
	if (!cur_uleb(&c, &cie->code_align) || !cur_sleb(&c, &cie->data_align))
		return false;
	if (version == 1) {
		if (!cur_u8(&c, &b))
			return false;
		ra_reg = b;
	} else if (!cur_uleb(&c, &ra_reg)) {
		return false;
	}
	cie->fde_enc = 0;
	cie->has_aug_data = aug[0] == 'z';
	if (cie->has_aug_data) {
		struct cursor data;
		uintptr_t ignored;

		if (!cur_uleb(&c, &n) || c.end - c.p < n)
			return false;
		data = (struct cursor){ c.p, c.p + n };
		for (i = 1; aug[i]; i++) {
			if (aug[i] == 'R') {
				if (!cur_u8(&data, &cie->fde_enc))
					return false;
			} else if (aug[i] == 'L') {
				if (!cur_u8(&data, &b))
					return false;
			} else if (aug[i] == 'P') {
				if (!cur_u8(&data, &b) || !cur_encoded(&data, b & 0x7f, 0, &ignored))
					return false;
			} else {
				return false;	/* 'S': a signal frame, not followed */
			}
		}
		c.p += n;
	} else if (aug[0]) {
		return false;
	}
	cie->insns = c;
	return ra_reg == DW_RA;
}

struct cfa_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	int64_t ra_off, bp_off;
	bool ra_set;
};

static void set_offset(struct cfa_state *st, uint64_t reg, int64_t off)
{
	if (reg == DW_RA)
		st->ra_off = off, st->ra_set = true;
	else if (reg == DW_RBP)
		st->bp_off = off;
}

/*
 * Runs the instructions of c, the location starting at loc, up to (not
 * past) pc.  False for what is not followed, and for a table cut short.
 */
static bool run_cfa(struct cursor c, const struct cie *cie, uintptr_t loc, uintptr_t pc,
		    struct cfa_state *st, const struct cfa_state *initial)
{
	struct cfa_state saved[MAX_STATE_STACK];
	unsigned int depth = 0;

	while (c.p < c.end) {
		uint8_t op, low, u8;
		uint16_t u16;
		uint32_t u32;
		uint64_t reg, u, delta = 0;
		int64_t s;
		bool advance = false;

		if (!cur_u8(&c, &op))
			return false;
		low = op & 0x3f;
		switch (op >> 6) {
		case 1:		/* advance_loc */
			delta = low, advance = true;
			break;
		case 2:		/* offset */
			if (!cur_uleb(&c, &u))
				return false;
			set_offset(st, low, (int64_t)u * cie->data_align);
			continue;
		case 3:		/* restore */
			if (low == DW_RBP)
				st->bp_off = initial ? initial->bp_off : 0;
			continue;
		}
		if (!advance) {
			switch (op) {
			case 0x00:	/* nop */
				break;
			case 0x02:
				if (!cur_u8(&c, &u8))
					return false;
				delta = u8, advance = true;
				break;
			case 0x03:
				if (!cur_read(&c, &u16, 2))
					return false;
				delta = u16, advance = true;
				break;
			case 0x04:
				if (!cur_read(&c, &u32, 4))
					return false;
				delta = u32, advance = true;
				break;
			case 0x05:	/* offset_extended */
				if (!cur_uleb(&c, &reg) || !cur_uleb(&c, &u))
					return false;
				set_offset(st, reg, (int64_t)u * cie->data_align);
				break;
			case 0x06: case 0x07: case 0x08:	/* restore_ext, undefined, same_value */
				if (!cur_uleb(&c, &reg))
					return false;
				if (reg == DW_RBP)
					st->bp_off = 0;
				if (reg == DW_RA && op == 0x07)
					return false;	/* no caller: the outermost frame */
				break;
			case 0x09:	/* register */
				if (!cur_uleb(&c, &reg) || !cur_uleb(&c, &u))
					return false;
				if (reg == DW_RA || reg == DW_RBP)
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
				if (!cur_uleb(&c, &st->cfa_reg) || !cur_uleb(&c, &u))
					return false;
				st->cfa_off = u;
				break;
			case 0x0d:	/* def_cfa_register */
				if (!cur_uleb(&c, &st->cfa_reg))
					return false;
				break;
			case 0x0e:	/* def_cfa_offset */
				if (!cur_uleb(&c, &u))
					return false;
				st->cfa_off = u;
				break;
			case 0x11:	/* offset_extended_sf */
				if (!cur_uleb(&c, &reg) || !cur_sleb(&c, &s))
					return false;
				set_offset(st, reg, s * cie->data_align);
				break;
			case 0x12:	/* def_cfa_sf */
				if (!cur_uleb(&c, &st->cfa_reg) || !cur_sleb(&c, &s))
					return false;
				st->cfa_off = s * cie->data_align;
				break;
			case 0x13:	/* def_cfa_offset_sf */
				if (!cur_sleb(&c, &s))
					return false;
				st->cfa_off = s * cie->data_align;
				break;
			case 0x2e:	/* GNU_args_size */
				if (!cur_uleb(&c, &u))
					return false;
				break;
			default:
				return false;	/* expressions, val_offset ...: not followed */
			}
		}
		if (advance) {
			loc += delta * cie->code_align;
			if (loc > pc)
				return true;
		}
	}
	return true;
}

static bool fits(int64_t v, int64_t lo, int64_t hi)
{
	return v >= lo && v <= hi;
}

/* the rule of pc, from the tables of m: false when they do not give one */
static bool rule_from(const struct module *m, uintptr_t pc, struct rule *r)
{
	struct cfa_state st = { 0 }, initial;
	uintptr_t fde, cie_at, start, range;
	struct cursor c;
	struct cie cie;
	uint32_t cie_off;
	uint64_t n;

	if (!find_fde(m, pc, &fde) || !record_at(m, fde, &c))
		return false;
	/* the CIE pointer counts back from where it is */
	if (!cur_read(&c, &cie_off, 4) || !cie_off || add_offset(c.p - 4, -(int64_t)cie_off, &cie_at) == false)
		return false;
	if (!parse_cie(m, cie_at, &cie))
		return false;
	if (!cur_encoded(&c, cie.fde_enc, 0, &start) ||
	    !cur_encoded(&c, cie.fde_enc & 0x0f, 0, &range) || pc < start || pc - start >= range)
		return false;
	if (cie.has_aug_data && (!cur_uleb(&c, &n) || !cur_skip(&c, n)))
		return false;
	if (!run_cfa(cie.insns, &cie, 0, UINTPTR_MAX, &st, NULL))
		return false;
	initial = st;
	if (!run_cfa(c, &cie, start, pc, &st, &initial))
		return false;
	if ((st.cfa_reg != DW_RSP && st.cfa_reg != DW_RBP) || !st.ra_set)
		return false;
	/* a frame's slots are words: other offsets, or ones this rule cannot hold, end it */
	if (!fits(st.cfa_off, INT32_MIN, INT32_MAX) || !fits(st.ra_off, INT8_MIN, INT8_MAX) ||
	    !st.ra_off || (st.ra_off & 7) || !fits(st.bp_off, INT16_MIN, INT16_MAX) ||
	    (st.bp_off & 7))
		return false;
	r->cfa_reg = st.cfa_reg;
	r->cfa_off = st.cfa_off;
	r->ra_off = st.ra_off;
	r->bp_off = st.bp_off;
	return true;
}

/*
 * A rule in a slot of the shared table (shim-abi.h): the CFA's offset in 24
 * bits, the return address's and rbp's offsets in eighths (they are words),
 * the CFA's register, and in the top 20 bits a check derived from the key.
 */
#define RULE_CHECK_SHIFT	44

static uint64_t rule_check(uint64_t key)
{
	return (key * 0xc2b2ae3d27d4eb4fULL) >> RULE_CHECK_SHIFT << RULE_CHECK_SHIFT;
}

static uint64_t field(int64_t v, unsigned int bits, unsigned int shift)
{
	return ((uint64_t)v & ((1ULL << bits) - 1)) << shift;
}

static int64_t signed_field(uint64_t val, unsigned int bits, unsigned int shift)
{
	return (int64_t)(val << (64 - bits - shift)) >> (64 - bits);
}

static bool rule_pack(const struct rule *r, uint64_t key, uint64_t *val)
{
	if (!fits(r->cfa_off, -(1 << 23), (1 << 23) - 1))
		return false;
	*val = field(r->cfa_off, 24, 0) | field(r->ra_off / 8, 5, 24) |
	       field(r->bp_off / 8, 13, 29) | (uint64_t)(r->cfa_reg == DW_RBP) << 42 |
	       rule_check(key);
	return true;
}

static bool rule_unpack(uint64_t val, uint64_t key, struct rule *r)
{
	if ((val >> RULE_CHECK_SHIFT << RULE_CHECK_SHIFT) != rule_check(key))
		return false;
	r->cfa_off = signed_field(val, 24, 0);
	r->ra_off = signed_field(val, 5, 24) * 8;
	r->bp_off = signed_field(val, 13, 29) * 8;
	r->cfa_reg = (val >> 42) & 1 ? DW_RBP : DW_RSP;
	return true;
}

/*
 * pc's two slots in the run's shared rules (a pair in one cache line) and
 * its key there; NULL when not shared.  Two ways, not one: the rules of a
 * tree's programs, kept from run to run, evicted each other (a clang after
 * a gcc computed 494 of its rules again, the gcc 713, on a table of 25,608).
 */
static struct shim_rule_slot *shared_slots(const struct module *m, uintptr_t pc, uint64_t *key)
{
	struct shim_rule_slot *rules = shim_cfi_rules();
	uintptr_t off = pc - m->base;

	if (!rules || !m->key || pc < m->base || off > UINT32_MAX)
		return NULL;
	*key = (uint64_t)m->key << 32 | off;
	return &rules[((*key * 0x9e3779b97f4a7c15ULL) >> (64 - SHIM_RULES_ORDER)) & ~1UL];
}

static bool slot_rule(const struct shim_rule_slot *slot, uint64_t key, struct rule *r)
{
	return __atomic_load_n(&slot->key, __ATOMIC_ACQUIRE) == key &&
	       rule_unpack(__atomic_load_n(&slot->val, __ATOMIC_RELAXED), key, r);
}

/* where a new rule goes: a slot of the pair that is empty or its key's, else one by the key */
static struct shim_rule_slot *slot_for(struct shim_rule_slot *pair, uint64_t key)
{
	unsigned int i;

	for (i = 0; i < 2; i++) {
		uint64_t k = __atomic_load_n(&pair[i].key, __ATOMIC_RELAXED);

		if (!k || k == key)
			return &pair[i];
	}
	return &pair[(key >> 7) & 1];
}

/* pc's rule as another process (or thread) of the run computed it, or from the tables */
static void module_rule(const struct module *m, uintptr_t pc, struct rule *r)
{
	struct shim_rule_slot *pair, *slot;
	uint64_t key = 0, val;

	pair = shared_slots(m, pc, &key);
	if (pair && (slot_rule(&pair[0], key, r) || slot_rule(&pair[1], key, r)))
		return;
	if (!rule_from(m, pc, r))
		*r = (struct rule){ 0 };
	if (pair && rule_pack(r, key, &val)) {
		struct shim_rules_tail *tail = (void *)(shim_cfi_rules() + (1UL << SHIM_RULES_ORDER));

		slot = slot_for(pair, key);
		__atomic_store_n(&slot->val, val, __ATOMIC_RELAXED);
		__atomic_store_n(&slot->key, key, __ATOMIC_RELEASE);
		__atomic_fetch_add(&tail->stored, 1, __ATOMIC_RELAXED);
	}
}

/*
 * False: the tables are not to be read now (a dlclose), and nothing is to
 * be kept.  Out of line: the walk's loop keeps its registers.
 */
static __attribute__((noinline, cold)) bool compute_rule(uintptr_t pc, struct rule *r)
{
	struct table_sync *s;
	const struct module *m;
	int saved_errno = errno;	/* the loader's, the tables' mappings: not the program's */

	r->ra_off = 0;
	s = table_sync();
	if (!s || !tables_enter(s)) {
		errno = saved_errno;
		return false;
	}
	m = module_of(pc);
	if (m)
		module_rule(m, pc, r);
	tables_leave(s);
	errno = saved_errno;
	return true;
}

/*
 * The thread's cache: a page at first, twice the size when it missed as
 * many times as it has slots (a thread whose code is large), up to a cap.
 */
static __attribute__((noinline, cold)) bool cache_remap(unsigned int gen)
{
	unsigned int cap = cache_cap;
	int saved_errno = errno;
	struct rule *c;

	if (!cache)
		cap = CACHE_FIRST;
	else if (cache_misses >= cap && cap < CACHE_MAX)
		cap *= 2;
	c = shim_mmap(NULL, cap * sizeof(*c), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c != MAP_FAILED && cache)
		shim_munmap(cache, cache_cap * sizeof(*cache));
	errno = saved_errno;
	if (c == MAP_FAILED)
		return cache && cache_generation == gen;
	cache = c;
	cache_cap = cap;
	cache_misses = 0;
	cache_generation = gen;
	return true;
}

static bool cache_ready(void)
{
	unsigned int gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);

	if (likely(cache && cache_generation == gen &&
		   (cache_misses < cache_cap || cache_cap == CACHE_MAX)))
		return true;
	return cache_remap(gen);
}

/* the rule of pc, from the cache or computed into it */
static const struct rule *rule_of(struct rule *rules, unsigned int mask, uintptr_t pc)
{
	struct rule *r = &rules[(pc ^ (pc >> 12)) & mask], fresh;

	/* an empty slot has no rule: it is pc 0's, which has none either */
	if (r->pc != pc) {
		if (!compute_rule(pc, &fresh))
			return NULL;
		fresh.pc = pc;
		*r = fresh;
		cache_misses++;
	}
	return r->ra_off ? r : NULL;
}

uint32_t shim_cfi_walk(const struct shim_span *stack, const struct shim_caller *c,
		       uint64_t *ips, uint32_t max)
{
	/* copies the stores to ips cannot alias: not loaded again each frame */
	const struct shim_span s = *stack;
	uintptr_t ip = c->ip, sp = c->sp, bp = c->bp, cfa, a;
	struct rule *rules;
	unsigned int mask;
	uint32_t nr = 0;

	/* without a cache, the caller alone: a rule computed per frame is too dear */
	if (!cache_ready())
		max = 1;
	rules = cache;
	mask = cache_cap - 1;
	while (nr < max && ip) {
		const struct rule *r;

		ips[nr++] = ip;
		/* ip is a return address: its call is the instruction before */
		r = nr < max ? rule_of(rules, mask, ip - 1) : NULL;
		if (!r)
			break;
		if (!add_offset(r->cfa_reg == DW_RSP ? sp : bp, r->cfa_off, &cfa) || cfa <= sp)
			break;
		if (!add_offset(cfa, r->ra_off, &a) || !shim_span_word(&s, a, &ip))
			break;
		if (r->bp_off && (!add_offset(cfa, r->bp_off, &a) || !shim_span_word(&s, a, &bp)))
			break;
		sp = cfa;
	}
	return nr;
}

#else

uint32_t shim_cfi_walk(const struct shim_span *stack, const struct shim_caller *c,
		       uint64_t *ips, uint32_t max)
{
	(void)stack, (void)c, (void)ips, (void)max;
	return 0;
}

void shim_cfi_close_begin(void)
{
}

void shim_cfi_close_end(void)
{
}

#endif
