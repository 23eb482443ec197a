// SPDX-License-Identifier: GPL-2.0
/*
 * elf_symtab__read() on real libraries: one entry per address of a
 * function, in address order, and among the aliases of an address the
 * name the rule prefers (global before weak, fewer leading underscores,
 * then by name): libc has them by the hundred (malloc and __libc_malloc),
 * libstdc++ the C1/C2 pair of every constructor.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/symbol/elf-syms.h"

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the distinct addresses of scn's functions, and the address of name (0: none) */
static size_t addresses(Elf *elf, Elf_Scn *scn, const char *name, uint64_t *at)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n = 0, k = 0, count;
	uint64_t *a;
	GElf_Shdr sh;

	gelf_getshdr(scn, &sh);
	count = sh.sh_size / sh.sh_entsize;
	a = calloc(count + 1, sizeof(*a));
	*at = 0;
	for (i = 0; i < count; i++) {
		const char *s;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		s = elf_strptr(elf, sh.sh_link, sym.st_name);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value || !s || !*s)
			continue;
		a[n++] = sym.st_value;
		if (!strncmp(s, name, strlen(name)) && (!s[strlen(name)] || s[strlen(name)] == '@'))
			*at = sym.st_value;
	}
	qsort(a, n, sizeof(*a), u64_cmp);
	for (i = 0; i < n; i++)
		k += !i || a[i] != a[i - 1];
	free(a);
	return k;
}

/* the table of path's .dynsym: whole, sorted, and naming alias's address as expected */
static void check_library(const char *path, const char *alias, const char *expected)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf__from_fd(fd) : NULL;
	Elf_Scn *scn = NULL;
	bool seen = false;

	CHECK(elf, "%s: opened", path);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		const struct elf_symbol *s;
		struct elf_symtab t;
		uint64_t at;
		size_t n, i, sorted = 1;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		seen = true;
		n = addresses(elf, scn, alias, &at);
		CHECK(!elf_symtab__read(&t, elf, scn), "%s: read", path);
		CHECK(t.nr == n && n > 100, "%s: %zu functions for %zu addresses", path, t.nr, n);
		for (i = 1; i < t.nr; i++)
			sorted += t.syms[i - 1].start < t.syms[i].start;
		CHECK(sorted == t.nr, "%s: %zu of %zu in address order", path, sorted, t.nr);
		s = at ? elf_symtab__find(&t, at) : NULL;
		CHECK(s && !strcmp(s->name, expected), "%s: %s's address named %s, not %s", path,
		      alias, expected, s ? s->name : "(none)");
		elf_symtab__exit(&t);
	}
	CHECK(seen, "%s: a .dynsym", path);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	elf_version(EV_CURRENT);
	check_library("/lib/x86_64-linux-gnu/libc.so.6", "__libc_malloc", "malloc");
	check_library("/lib/x86_64-linux-gnu/libc.so.6", "__libc_free", "free");
	check_library("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "_ZNSt6localeC2Ev",
		      "_ZNSt6localeC1Ev");
	return test_done("elf-syms");
}
