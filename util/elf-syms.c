// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "elf-syms.h"

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
			if (reqs[j].offset || strcmp(reqs[j].name, name))
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
