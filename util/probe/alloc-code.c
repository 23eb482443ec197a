// SPDX-License-Identifier: GPL-2.0
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/probe/alloc-code.h"
#include "util/probe/disasm.h"
#include "util/symbol/elf-syms.h"
#include "util/util.h"

#define MAX_TARGETS	512

struct targets {
	struct alloc_target t[MAX_TARGETS];
	unsigned int n;
};

static void targets__add(struct targets *ts, uint64_t addr, int sym, bool slot, bool dynamic)
{
	if (ts->n < MAX_TARGETS)
		ts->t[ts->n++] = (struct alloc_target){ addr, sym, slot, dynamic };
}

static int32_t rel32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void mark(uint64_t addr, bool slot, const struct alloc_target *t, unsigned int nt,
		 bool *hit)
{
	unsigned int i;

	for (i = 0; i < nt; i++)
		if (t[i].addr == addr && t[i].slot == slot)
			hit[i] = true;
}

void alloc_code__calls(const uint8_t *code, uint64_t vaddr, uint64_t len,
		       const struct alloc_target *t, unsigned int nt, bool *hit)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		const uint8_t *p = code + i;
		uint64_t left = len - i, next;

		/* call rel32, jmp rel32 */
		if ((p[0] == 0xe8 || p[0] == 0xe9) && left >= 5) {
			next = vaddr + i + 5;
			mark(next + rel32(p + 1), false, t, nt, hit);
		}
		/* jcc rel32 */
		if (p[0] == 0x0f && (p[1] & 0xf0) == 0x80 && left >= 6) {
			next = vaddr + i + 6;
			mark(next + rel32(p + 2), false, t, nt, hit);
		}
		/* jmp rel8, jcc rel8: a tail call to a neighbour */
		if ((p[0] == 0xeb || (p[0] & 0xf0) == 0x70) && left >= 2) {
			next = vaddr + i + 2;
			mark(next + (int8_t)p[1], false, t, nt, hit);
		}
		/* call *disp32(%rip), jmp *disp32(%rip): through a GOT slot (-fno-plt) */
		if (p[0] == 0xff && (p[1] == 0x15 || p[1] == 0x25) && left >= 6) {
			next = vaddr + i + 6;
			mark(next + rel32(p + 2), true, t, nt, hit);
		}
	}
}

/* the bytes of an executable section at vaddr, and how many follow there */
static const uint8_t *code_at(Elf *elf, uint64_t vaddr, uint64_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
		    vaddr >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < vaddr - sh.sh_addr)
			return NULL;
		*len = d->d_size - (vaddr - sh.sh_addr);
		return (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

static uint64_t file_offset(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	return sym->st_value - sh.sh_addr + sh.sh_offset;
}

/* symbol i of a table, when it is a function with an allocator's name: its index there */
static int alloc_symbol_at(Elf *elf, Elf_Data *data, size_t strtab, size_t i, GElf_Sym *sym)
{
	const char *name;

	if (!gelf_getsym(data, i, sym) || GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return -1;
	name = elf_strptr(elf, strtab, sym->st_name);
	return name && *name ? alloc_symbol__find(name) : -1;
}

/* an allocator function found in a symbol table: 1 when it is defined there, and new */
static int note_symbol(Elf *elf, const GElf_Shdr *sh, const GElf_Sym *sym, int k,
		       struct alloc_code *ac)
{
	struct alloc_fn *fn = &ac->fns[k];

	if (sym->st_shndx == SHN_UNDEF) {
		if (sh->sh_type == SHT_DYNSYM)
			alloc_set__add(&ac->imports, k);
		return 0;
	}
	if (fn->offset || !sym->st_value)
		return 0;
	fn->offset = file_offset(elf, sym);
	fn->vaddr = sym->st_value;
	fn->size = sym->st_size;
	if (!fn->offset)
		return 0;
	alloc_set__add(&ac->defined, k);
	return 1;
}

/* symbols from..to of a table, each looked at */
static int scan_symbols(Elf *elf, Elf_Data *data, const GElf_Shdr *sh, size_t from, size_t to,
			struct alloc_code *ac)
{
	size_t i;
	int found = 0, k;

	for (i = from; i < to; i++) {
		GElf_Sym sym;

		k = alloc_symbol_at(elf, data, sh->sh_link, i, &sym);
		if (k >= 0)
			found += note_symbol(elf, sh, &sym, k, ac);
	}
	return found;
}

/*
 * A .dynsym's GNU hash table (DT_GNU_HASH), checked against the table it
 * indexes: the symbols from symoffset on are in its chains, those before
 * it (the undefined ones) are not.
 */
struct gnu_hash {
	uint32_t nbuckets, symoffset, bloom_size, bloom_shift;
	const uint64_t *bloom;
	const uint32_t *buckets, *chain;
	size_t nsyms;
};

static bool gnu_hash__read(Elf *elf, size_t dynsym_index, size_t nsyms, struct gnu_hash *gh)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	uint32_t hdr[4];
	size_t need;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH &&
		    sh.sh_link == dynsym_index && (d = elf_getdata(scn, NULL)))
			break;
	if (!scn || !d || !d->d_buf || d->d_size < sizeof(hdr) || (uintptr_t)d->d_buf % 8)
		return false;
	memcpy(hdr, d->d_buf, sizeof(hdr));
	*gh = (struct gnu_hash){ .nbuckets = hdr[0], .symoffset = hdr[1], .bloom_size = hdr[2],
				 .bloom_shift = hdr[3], .nsyms = nsyms };
	/* sizes in 64-bit arithmetic: a hostile header cannot wrap them */
	need = sizeof(hdr) + (uint64_t)gh->bloom_size * 8 + (uint64_t)gh->nbuckets * 4;
	if (!gh->nbuckets || !gh->bloom_size || (gh->bloom_size & (gh->bloom_size - 1)) ||
	    gh->symoffset > nsyms || need > d->d_size ||
	    (d->d_size - need) / 4 < nsyms - gh->symoffset)
		return false;
	gh->bloom = (const uint64_t *)((const char *)d->d_buf + sizeof(hdr));
	gh->buckets = (const uint32_t *)(gh->bloom + gh->bloom_size);
	gh->chain = gh->buckets + gh->nbuckets;
	return true;
}

static uint32_t gnu_hash_of(const char *name)
{
	uint32_t h = 5381;

	while (*name)
		h = h * 33 + (unsigned char)*name++;
	return h;
}

/* the hashed symbols named as allocator k is, each noted */
static int look_up_symbol(Elf *elf, Elf_Data *data, const GElf_Shdr *sh,
			  const struct gnu_hash *gh, int k, struct alloc_code *ac)
{
	uint32_t h = gnu_hash_of(alloc_symbols[k].name), bit1 = h % 64,
		 bit2 = (h >> (gh->bloom_shift % 32)) % 64;
	uint64_t word = gh->bloom[(h / 64) & (gh->bloom_size - 1)];
	size_t i;
	int found = 0;

	if (!((word >> bit1) & (word >> bit2) & 1))
		return 0;
	i = gh->buckets[h % gh->nbuckets];
	if (i < gh->symoffset)
		return 0;
	for (; i < gh->nsyms; i++) {
		uint32_t hv = gh->chain[i - gh->symoffset];
		GElf_Sym sym;

		if ((hv | 1) == (h | 1) && alloc_symbol_at(elf, data, sh->sh_link, i, &sym) == k)
			found += note_symbol(elf, sh, &sym, k, ac);
		if (hv & 1)
			break;
	}
	return found;
}

/*
 * The defined allocator functions of a symbol table; the undefined ones of
 * .dynsym.  A .dynsym with a GNU hash table is looked up by name, the part
 * before its hashed symbols scanned: libLLVM's 40,000 names read one by
 * one took 1.9 ms of a clang's hello.
 */
static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, bool by_hash,
			struct alloc_code *ac)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct gnu_hash gh;
	size_t count, k;
	int found;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	if (!by_hash || sh->sh_type != SHT_DYNSYM ||
	    !gnu_hash__read(elf, elf_ndxscn(scn), count, &gh))
		return scan_symbols(elf, data, sh, 0, count, ac);
	found = scan_symbols(elf, data, sh, 0, gh.symoffset, ac);
	for (k = 0; k < nr_alloc_symbols; k++)
		/* a name listed twice is found at its first place, as a scan finds it */
		if (alloc_symbol__find(alloc_symbols[k].name) == (int)k)
			found += look_up_symbol(elf, data, sh, &gh, k, ac);
	return found;
}

/* the name of a relocation's symbol in the dynamic symbol table */
static int reloc_symbol(Elf *elf, Elf_Data *dynsym, size_t strtab, uint64_t info)
{
	const char *name;
	GElf_Sym sym;

	if (!dynsym || !gelf_getsym(dynsym, GELF_R_SYM(info), &sym))
		return -1;
	name = elf_strptr(elf, strtab, sym.st_name);
	return name && *name ? alloc_symbol__find(name) : -1;
}

/* GOT slots of allocator names, bound by the dynamic linker */
static void find_slots(Elf *elf, struct targets *ts)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	Elf_Data *dynsym = NULL;
	size_t strtab = 0;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	if (!dyn || !gelf_getshdr(dyn, &sh))
		return;
	dynsym = elf_getdata(dyn, NULL);
	strtab = sh.sh_link;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; d && i < n; i++) {
			GElf_Rela r;
			int k;

			if (!gelf_getrela(d, i, &r) ||
			    (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT &&
			     GELF_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT))
				continue;
			k = reloc_symbol(elf, dynsym, strtab, r.r_info);
			if (k >= 0)
				targets__add(ts, r.r_offset, k, true, true);
		}
	}
}

/*
 * The PLT entries that jump through those slots: an entry starts at its
 * jmp *disp32(%rip), or at the endbr64 and bnd prefix before it (.plt,
 * .plt.sec, .plt.got; 16- or 8-byte entries).
 */
static uint64_t plt_entry_start(const uint8_t *code, uint64_t i)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (i >= 1 && code[i - 1] == 0xf2)
		i--;
	if (i >= sizeof(endbr64) && !memcmp(code + i - sizeof(endbr64), endbr64, sizeof(endbr64)))
		i -= sizeof(endbr64);
	return i;
}

static void find_plt_entries(Elf *elf, struct targets *ts, unsigned int nslots)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		const uint8_t *code;
		Elf_Data *d;
		uint64_t i;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".plt", 4))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		code = d->d_buf;
		for (i = 0; i + 6 <= d->d_size; i++) {
			uint64_t slot;
			unsigned int j;

			if (code[i] != 0xff || code[i + 1] != 0x25)
				continue;
			slot = sh.sh_addr + i + 6 + rel32(code + i + 2);
			for (j = 0; j < nslots; j++)
				if (ts->t[j].addr == slot)
					targets__add(ts, sh.sh_addr + plt_entry_start(code, i),
						     ts->t[j].sym, false, true);
		}
	}
}

/*
 * Which functions reach the C family, and which any allocator function:
 * each function's calls, then the wrapping passed on along the direct
 * calls between them until nothing changes.
 */
static void classify(Elf *elf, struct alloc_code *ac, struct targets *ts)
{
	bool hit[MAX_TARGETS];
	uint64_t edges[128][2];	/* bitmaps of the functions each one calls directly */
	bool changed = true;
	unsigned int i, j;

	memset(edges, 0, sizeof(edges));
	for (i = 0; i < nr_alloc_symbols; i++) {
		struct alloc_fn *fn = &ac->fns[i];
		const uint8_t *code;
		uint64_t len;

		if (!fn->offset || !fn->size || !(code = code_at(elf, fn->vaddr, &len)))
			continue;
		memset(hit, 0, ts->n * sizeof(*hit));
		alloc_code__calls(code, fn->vaddr, len < fn->size ? len : fn->size, ts->t, ts->n,
				  hit);
		for (j = 0; j < ts->n; j++) {
			const struct alloc_target *t = &ts->t[j];

			if (!hit[j] || (!t->dynamic && (unsigned int)t->sym == i))
				continue;
			fn->flags |= ALLOC_FN_WRAPS_PROBED;
			if (!t->dynamic)
				edges[i][t->sym / 64] |= 1ULL << (t->sym % 64);
			else if (alloc_symbols[t->sym].flags & ALLOC_SYM_INTERPOSED)
				fn->flags |= ALLOC_FN_WRAPS_LIBC;
		}
	}
	while (changed) {
		changed = false;
		for (i = 0; i < nr_alloc_symbols; i++) {
			if (ac->fns[i].flags & ALLOC_FN_WRAPS_LIBC)
				continue;
			for (j = 0; j < nr_alloc_symbols; j++) {
				if (!((edges[i][j / 64] >> (j % 64)) & 1) ||
				    !(ac->fns[j].flags & ALLOC_FN_WRAPS_LIBC))
					continue;
				ac->fns[i].flags |= ALLOC_FN_WRAPS_LIBC;
				changed = true;
				break;
			}
		}
	}
}

/* a name the shim does not interpose, for a function that has one it does */
static void find_aliases(struct alloc_code *ac)
{
	unsigned int i, j;

	for (i = 0; i < nr_alloc_symbols; i++) {
		if (!ac->fns[i].offset || (alloc_symbols[i].flags & ALLOC_SYM_INTERPOSED))
			continue;
		for (j = 0; j < nr_alloc_symbols; j++)
			if ((alloc_symbols[j].flags & ALLOC_SYM_INTERPOSED) &&
			    ac->fns[j].offset == ac->fns[i].offset)
				ac->fns[i].flags |= ALLOC_FN_ALIAS;
	}
}

typedef bool (*insn_visitor)(const struct disasm_api *cs, csh h, const cs_insn *insn,
			     void *ctx);

/*
 * The instructions of code (at vaddr, size bytes) decoded in turn, each
 * given to visit until it returns true.  The bytes left undecoded (0: to
 * the end), or -1 when the decoder cannot start.
 */
static long decode_each(const uint8_t *code, uint64_t vaddr, uint64_t size,
			insn_visitor visit, void *ctx)
{
	const struct disasm_api *cs = disasm__get();
	uint64_t addr = vaddr;
	size_t left = size;
	bool done = false;
	cs_insn *insn;
	csh h;

	if (!cs || cs->open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -1;
	cs->option(h, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs->insn_alloc(h);
	while (insn && !done && left && cs->disasm_iter(h, &code, &left, &addr, insn))
		done = visit(cs, h, insn, ctx);
	if (insn)
		cs->insn_free(insn, 1);
	cs->close(&h);
	return left;
}

static bool is_call_through_pointer(const struct disasm_api *cs, csh h, const cs_insn *insn,
				    void *ctx)
{
	const cs_x86 *x = &insn->detail->x86;

	return *(bool *)ctx = (cs->insn_group(h, insn, CS_GRP_CALL) ||
			       cs->insn_group(h, insn, CS_GRP_JUMP)) &&
			      x->op_count == 1 && x->operands[0].type != X86_OP_IMM;
}

bool alloc_code__calls_through_pointer(const uint8_t *code, uint64_t vaddr, uint64_t size)
{
	bool found = false;

	decode_each(code, vaddr, size, is_call_through_pointer, &found);
	return found;
}

/*
 * A free that calls through a pointer may be a forwarder's (a library that
 * defines free and calls the next one, found with dlsym): it counts as
 * calling another probed free, so that the inner call is nested in it.
 */
static void find_forwarding_frees(Elf *elf, struct alloc_code *ac)
{
	unsigned int i;

	for (i = 0; i < nr_alloc_symbols; i++) {
		struct alloc_fn *fn = &ac->fns[i];
		const uint8_t *code;
		uint64_t len;

		if (alloc_symbols[i].shape != MT_SHAPE_FREE || !fn->offset || !fn->size ||
		    (fn->flags & ALLOC_FN_WRAPS_PROBED) || !(code = code_at(elf, fn->vaddr, &len)) ||
		    len < fn->size)
			continue;
		if (alloc_code__calls_through_pointer(code, fn->vaddr, fn->size))
			fn->flags |= ALLOC_FN_WRAPS_PROBED;
	}
}

static void read_code(Elf *elf, struct alloc_code *ac)
{
	struct targets *ts = calloc(1, sizeof(*ts));
	unsigned int i;

	if (!ts)
		return;		/* nothing known to wrap: all allocate by themselves */
	find_slots(elf, ts);
	find_plt_entries(elf, ts, ts->n);
	for (i = 0; i < nr_alloc_symbols; i++)
		if (ac->fns[i].offset)
			targets__add(ts, ac->fns[i].vaddr, i, false, false);
	classify(elf, ac, ts);
	find_forwarding_frees(elf, ac);
	free(ts);
}

struct returns {
	uint64_t vaddr, size, *rets;
	int n, max;
	bool out;	/* a way out that is not a return of its own, or more than max */
};

static bool note_return(const struct disasm_api *cs, csh h, const cs_insn *insn, void *ctx)
{
	const cs_x86 *x = &insn->detail->x86;
	struct returns *r = ctx;

	if (cs->insn_group(h, insn, CS_GRP_RET)) {
		r->out = r->n == r->max;
		if (!r->out)
			r->rets[r->n++] = insn->address;
	} else if (cs->insn_group(h, insn, CS_GRP_JUMP)) {
		/* a tail call, a cold part, a jump table */
		r->out = x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
			 (uint64_t)x->operands[0].imm < r->vaddr ||
			 (uint64_t)x->operands[0].imm >= r->vaddr + r->size;
	}
	return r->out;
}

int alloc_code__returns(const uint8_t *code, uint64_t vaddr, uint64_t size, uint64_t *rets,
			int max)
{
	struct returns r = { .vaddr = vaddr, .size = size, .rets = rets, .max = max };
	long left = decode_each(code, vaddr, size, note_return, &r);

	return r.out || left || !r.n ? -1 : r.n;
}

/*
 * The return instructions of the functions that need them: a sanitizer
 * runtime's (its malloc records the stack it was called from, return
 * address included), and those an exception may leave that call no other
 * allocator function (tcmalloc's operator new).
 */
static void find_returns(Elf *elf, struct alloc_code *ac)
{
	unsigned int i;
	int j;

	for (i = 0; i < nr_alloc_symbols; i++) {
		struct alloc_fn *fn = &ac->fns[i];
		const uint8_t *code;
		uint64_t len;

		fn->nrets = -1;
		if (!fn->offset || !fn->size || !alloc_shape__has_return(alloc_symbols[i].shape) ||
		    !(ac->sanitizer_runtime || ((alloc_symbols[i].flags & ALLOC_SYM_THROWS) &&
						!(fn->flags & ALLOC_FN_WRAPS_PROBED))) ||
		    !(code = code_at(elf, fn->vaddr, &len)) || len < fn->size)
			continue;
		fn->nrets = alloc_code__returns(code, fn->vaddr, fn->size, fn->rets,
						ALLOC_FN_RETS_MAX);
		for (j = 0; j < fn->nrets; j++)
			fn->rets[j] = fn->rets[j] - fn->vaddr + fn->offset;
	}
}

bool alloc_code__is_sanitizer(const char *lib)
{
	return strstr(lib, "libasan") || strstr(lib, "libhwasan") || strstr(lib, "libtsan") ||
	       strstr(lib, "clang_rt.");
}

static int note_sanitizer(GElf_Sxword tag, const char *lib, void *arg)
{
	struct alloc_code *ac = arg;

	if ((tag == DT_NEEDED || tag == DT_SONAME) && alloc_code__is_sanitizer(lib))
		*(tag == DT_NEEDED ? &ac->sanitizer : &ac->sanitizer_runtime) = true;
	return 0;
}

/* the program headers and dynamic section: PT_INTERP, and a sanitizer in DT_NEEDED */
static void read_image(Elf *elf, struct alloc_code *ac)
{
	size_t n, i;

	if (!elf_getphdrnum(elf, &n))
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
				ac->interp = true;
		}
	elf__each_dyn_string(elf, note_sanitizer, ac);
}

/* nothing defined, no return looked for */
static void clear(struct alloc_code *ac)
{
	unsigned int i;

	memset(ac, 0, sizeof(*ac));
	for (i = 0; i < nr_alloc_symbols; i++)
		ac->fns[i].nrets = -1;
}

/* what the file open at fd defines and does (fd is closed); fd < 0: its open's -errno */
static int read_fd(int fd, bool by_hash, bool decode, struct alloc_code *ac)
{
	Elf_Scn *scn = NULL;
	int found = 0;
	GElf_Ehdr eh;
	Elf *elf;

	clear(ac);
	if (fd < 0)
		return fd;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -EINVAL;
	}
	elf = elf__from_fd(fd);
	if (!elf)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			found += read_symbols(elf, scn, &sh, by_hash, ac);
	}
	read_image(elf, ac);
	if (decode && found && gelf_getehdr(elf, &eh) && eh.e_machine == EM_X86_64) {
		read_code(elf, ac);
		find_returns(elf, ac);
		ac->code_read = true;
	}
	find_aliases(ac);
	elf_end(elf);
	return found;
}

/* a regular file alone: root opening a device a tracked process mapped would run its driver */
static int read_file(const char *path, bool by_hash, bool decode, struct alloc_code *ac)
{
	return read_fd(open_regular(path), by_hash, decode, ac);
}

int alloc_code__read(const char *path, struct alloc_code *ac)
{
	return read_file(path, true, true, ac);
}

int alloc_code__read_fd(int fd, struct alloc_code *ac)
{
	return read_fd(fd, true, true, ac);
}

int alloc_code__read_scanning(const char *path, struct alloc_code *ac)
{
	return read_file(path, false, true, ac);
}

int alloc_code__read_names(const char *path, struct alloc_code *ac)
{
	return read_file(path, true, false, ac);
}
