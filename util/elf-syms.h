/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_ELF_SYMS_H
#define MEMTRACK_ELF_SYMS_H

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

#endif
