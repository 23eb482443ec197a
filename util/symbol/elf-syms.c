// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/symbol/elf-syms.h"
#include "util/util.h"

Elf *elf__from_fd(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		elf = NULL;
	}
	/*
	 * Mapped, libelf needs fd no more: FDREAD reads the file in if it
	 * could not be mapped, then lets go of fd (as FDDONE).
	 */
	if (elf && elf_cntl(elf, ELF_C_FDREAD)) {
		elf_end(elf);
		elf = NULL;
	}
	close(fd);
	return elf;
}

static bool is_string_tag(GElf_Sxword tag)
{
	return tag == DT_NEEDED || tag == DT_SONAME || tag == DT_RPATH || tag == DT_RUNPATH;
}

int elf__each_dyn_string(Elf *elf, elf_dyn_string_fn *fn, void *arg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Dyn dyn;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; !ret && data && gelf_getdyn(data, i, &dyn); i++) {
			const char *s;

			if (!is_string_tag(dyn.d_tag))
				continue;
			s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (s)
				ret = fn(dyn.d_tag, s, arg);
		}
	}
	return ret;
}

static uint64_t sym_file_offset(Elf *elf, const GElf_Sym *sym)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	return sym->st_value - sh.sh_addr + sh.sh_offset;
}

static int match_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct elf_sym_req *reqs, size_t n)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count, i, j;
	int found = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		for (j = 0; j < n; j++) {
			/* libc has thousands of functions and we ask for dozens: the first byte first */
			if (reqs[j].offset || reqs[j].name[0] != name[0] || strcmp(reqs[j].name, name))
				continue;
			reqs[j].offset = sym_file_offset(elf, &sym);
			found += reqs[j].offset != 0;
		}
	}
	return found;
}

int elf__resolve_offsets(const char *path, struct elf_sym_req *reqs, size_t n)
{
	Elf_Scn *scn = NULL;
	int fd, found = 0;
	size_t i;
	Elf *elf;

	for (i = 0; i < n; i++)
		reqs[i].offset = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB)
			found += match_symbols(elf, scn, &sh, reqs, n);
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* ---- by address: the symbol table of the resolver ---- */

struct sym_cand {
	uint64_t start, size;
	const char *name;
	int rank;		/* binding: global 0, weak 1, local 2 */
};

static int leading_underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/*
 * By address; among aliases the best name first: sized, global before weak
 * before local, fewer leading underscores, shorter, then by name (malloc
 * rather than __libc_malloc).
 */
static int sym_cand_cmp(const void *a, const void *b)
{
	const struct sym_cand *x = a, *y = b;
	size_t lx, ly;
	int ux, uy;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux - uy;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * c by start, stably: a radix sort, a byte a pass, passing over the bytes
 * every start shares (a module's addresses fit in a few).  A comparison
 * sort of libLLVM's 34,000 functions was a third of the resolver's time in
 * a clang run; the comparator now only chooses among the aliases of one
 * address.  tmp has room for n.
 */
static void sort_by_start(struct sym_cand *c, struct sym_cand *tmp, size_t n)
{
	struct sym_cand *from = c, *to = tmp, *swap;
	unsigned int shift;
	size_t i;

	for (shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, at = 0;

		for (i = 0; i < n; i++)
			count[(from[i].start >> shift) & 0xff]++;
		if (n && count[(from[0].start >> shift) & 0xff] == n)
			continue;
		for (i = 0; i < 256; i++) {
			size_t k = count[i];

			count[i] = at;
			at += k;
		}
		for (i = 0; i < n; i++)
			to[count[(from[i].start >> shift) & 0xff]++] = from[i];
		swap = from, from = to, to = swap;
	}
	if (from != c)
		memcpy(c, from, n * sizeof(*c));
}

/* c sorted by sym_cand_cmp, as far as the first of each address goes */
static int sort_symbols(struct sym_cand *c, size_t n)
{
	struct sym_cand *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	size_t i, j, best;

	if (!tmp)
		return -ENOMEM;
	sort_by_start(c, tmp, n);
	free(tmp);
	for (i = 0; i < n; i = j) {
		for (best = i, j = i + 1; j < n && c[j].start == c[i].start; j++)
			if (sym_cand_cmp(&c[j], &c[best]) < 0)
				best = j;
		if (best != i) {
			struct sym_cand first = c[i];

			c[i] = c[best];
			c[best] = first;
		}
	}
	return 0;
}

static int collect_symbols(Elf *elf, Elf_Scn *scn, struct sym_cand **out,
			   size_t *nr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct sym_cand *c;
	size_t count, i, n = 0;
	GElf_Shdr sh;

	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -EINVAL;
	count = sh.sh_size / sh.sh_entsize;
	c = malloc((count ? count : 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		int type, bind;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		c[n].start = sym.st_value;
		c[n].size = sym.st_size;
		c[n].name = name;
		c[n].rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		n++;
	}
	*out = c;
	*nr = n;
	return 0;
}

size_t elf_symbol__name_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name ? (size_t)(at - name) : strlen(name);
}

/* name without its version suffix: a copy the table owns */
static const char *unversioned(struct elf_symtab *t, const char *name, size_t *cap)
{
	size_t len = elf_symbol__name_len(name);
	char *copy;

	if (!name[len])
		return name;
	if (grow_array((void **)&t->owned, cap, t->nr_owned + 1, sizeof(*t->owned)))
		return NULL;
	copy = strndup(name, len);
	if (copy)
		t->owned[t->nr_owned++] = copy;
	return copy;
}

/* one symbol per address, sorted, for a binary search */
int elf_symtab__read(struct elf_symtab *t, Elf *elf, Elf_Scn *scn)
{
	size_t n, i, k = 0, cap = 0;
	struct sym_cand *c;
	int err;

	memset(t, 0, sizeof(*t));
	err = collect_symbols(elf, scn, &c, &n);
	if (err)
		return err;
	t->syms = sort_symbols(c, n) ? NULL : malloc((n ? n : 1) * sizeof(*t->syms));
	if (!t->syms) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (k && t->syms[k - 1].start == c[i].start)
			continue;
		t->syms[k].start = c[i].start;
		t->syms[k].size = c[i].size;
		t->syms[k].name = unversioned(t, c[i].name, &cap);
		if (!t->syms[k].name) {
			err = -ENOMEM;
			break;
		}
		k++;
	}
	free(c);
	t->nr = k;
	if (k < n) {
		struct elf_symbol *shrunk = realloc(t->syms, (k ? k : 1) * sizeof(*shrunk));

		if (shrunk)
			t->syms = shrunk;
	}
	if (err)
		elf_symtab__exit(t);
	return err;
}

void elf_symtab__exit(struct elf_symtab *t)
{
	size_t i;

	for (i = 0; i < t->nr_owned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->syms);
	memset(t, 0, sizeof(*t));
}

/*
 * The function containing addr: the last symbol starting at or below addr
 * if its size covers addr or it has no size; else an enclosing one a few
 * entries back (a local label symbol inside a function).
 */
const struct elf_symbol *elf_symtab__find(const struct elf_symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr, i, back;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	if (!t->syms[i].size)
		return &t->syms[i];
	for (back = 0; back < 8; back++, i--) {
		const struct elf_symbol *sym = &t->syms[i];

		if (sym->size && addr - sym->start < sym->size)
			return sym;
		if (!i)
			break;
	}
	return NULL;
}
