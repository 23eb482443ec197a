/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ELF_SYMS_H
#define MEMTRACK_ELF_SYMS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_sym_req {
	const char *name;
	uint64_t offset;	/* file offset of the function; 0: not found */
};

/*
 * Looks up defined functions by name in .dynsym and .symtab and stores the
 * file offsets that uprobes take.  Returns the number found, or -errno.
 */
int elf__resolve_offsets(const char *path, struct elf_sym_req *reqs, size_t n);

/* maps the ELF file of fd (read in if it cannot be mapped) and closes fd; NULL if not ELF */
Elf *elf__from_fd(int fd);

/*
 * fn for each string entry of elf's dynamic section (DT_NEEDED, DT_SONAME,
 * DT_RPATH, DT_RUNPATH), in order, until it returns nonzero: that value,
 * or 0.
 */
typedef int elf_dyn_string_fn(GElf_Sxword tag, const char *s, void *arg);
int elf__each_dyn_string(Elf *elf, elf_dyn_string_fn *fn, void *arg);

/*
 * A function symbol table for lookups by address: one name per address (the
 * best of its aliases), sorted.  Names point into the Elf's string table,
 * except those with a version suffix ("@@GLIBC_2.34"), which are copied
 * without it; so they live as long as both the Elf and the table.
 */
struct elf_symbol {
	uint64_t start;
	uint64_t size;
	const char *name;
};

struct elf_symtab {
	struct elf_symbol *syms;
	size_t nr;
	char **owned;		/* the names copied without their version */
	size_t nr_owned;
};

/* reads the functions of scn (.symtab or .dynsym) of elf; 0 or -errno */
int elf_symtab__read(struct elf_symtab *t, Elf *elf, Elf_Scn *scn);
/* the function containing addr (link-time address), NULL if none */
const struct elf_symbol *elf_symtab__find(const struct elf_symtab *t, uint64_t addr);
void elf_symtab__exit(struct elf_symtab *t);
/* the length of name without its version suffix ("@GLIBC_2.2.5", "@@GLIBC_2.34") */
size_t elf_symbol__name_len(const char *name);

#endif
