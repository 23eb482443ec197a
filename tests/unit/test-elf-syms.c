// SPDX-License-Identifier: GPL-2.0
/*
 * elf_symtab__read() against the rule it keeps, checked the slow way: every
 * function symbol of a real library, sorted by a comparison sort on the
 * whole rule (by address; among aliases sized, global before weak before
 * local, fewer leading underscores, shorter, then by name), the first of
 * each address kept.  libc has aliases by the hundred (malloc and
 * __libc_malloc), libstdc++ the C1/C2 pairs of every constructor.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/symbol/elf-syms.h"

struct ref {
	uint64_t start, size;
	const char *name;
	int rank;
};

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (underscores(x->name) != underscores(y->name))
		return underscores(x->name) - underscores(y->name);
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* the functions of scn the slow way, the first of each address; their number */
static size_t reference(Elf *elf, Elf_Scn *scn, struct ref **out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = 0, k = 0, count;
	struct ref *r;
	GElf_Shdr sh;

	gelf_getshdr(scn, &sh);
	count = sh.sh_size / sh.sh_entsize;
	r = calloc(count + 1, sizeof(*r));
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type, bind;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || !name || !*name)
			continue;
		r[n++] = (struct ref){ sym.st_value, sym.st_size, name,
				       bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2 };
	}
	qsort(r, n, sizeof(*r), ref_cmp);
	for (i = 0; i < n; i++)
		if (!k || r[k - 1].start != r[i].start)
			r[k++] = r[i];
	*out = r;
	return k;
}

static void check_library(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf__from_fd(fd) : NULL;
	Elf_Scn *scn = NULL;
	size_t tables = 0;

	CHECK(elf, "%s: opened", path);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		struct elf_symtab t;
		struct ref *r;
		size_t n, i, same = 0;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		tables++;
		n = reference(elf, scn, &r);
		CHECK(!elf_symtab__read(&t, elf, scn), "%s: read", path);
		CHECK(t.nr == n, "%s: %zu functions, the slow way %zu", path, t.nr, n);
		for (i = 0; i < n && i < t.nr; i++) {
			size_t len = elf_symbol__name_len(r[i].name);

			/* the table's names are without their version */
			same += t.syms[i].start == r[i].start && t.syms[i].size == r[i].size &&
				!strncmp(t.syms[i].name, r[i].name, len) && !t.syms[i].name[len];
		}
		CHECK(same == n && n > 100, "%s: %zu of %zu as the slow way has them", path, same, n);
		elf_symtab__exit(&t);
		free(r);
	}
	CHECK(tables, "%s: a symbol table", path);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	elf_version(EV_CURRENT);
	check_library("/lib/x86_64-linux-gnu/libc.so.6");
	check_library("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
	return test_done("elf-syms");
}
