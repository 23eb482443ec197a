// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/probe/allocators.h"
#include "util/probe/bpf_probes.h"
#include "util/symbol/elf-syms.h"
#include "util/probe/uprobe-multi.h"
#include "util/util.h"

struct probe_file *probe_files__find(struct probe_files *pf, const struct mt_file_id *id)
{
	size_t i;

	for (i = 0; i < pf->n; i++)
		if (pf->files[i].id.dev == id->dev && pf->files[i].id.ino == id->ino)
			return &pf->files[i];
	return NULL;
}

/*
 * A probe on an instruction that uprobes cannot emulate costs a second trap
 * (single-stepping it out of line): for glibc's free, whose first
 * instruction is `test %rdi,%rdi`, that was most of the tracing time.  The
 * leading instructions skipped here only set flags (or mark a branch
 * target), so a probe after them sees every call with the same arguments
 * and the same stack, for entry and return probes alike.
 */
static unsigned int harmless_insn_len(const unsigned char *c)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (!memcmp(c, endbr64, sizeof(endbr64)))
		return sizeof(endbr64);
	/* test %r64,%r64 */
	if ((c[0] & 0xf8) == 0x48 && c[1] == 0x85 && (c[2] & 0xc0) == 0xc0)
		return 3;
	/* cmpb $imm8,disp32(%rip) */
	if (c[0] == 0x80 && c[1] == 0x3d)
		return 7;
	return 0;
}

static void skip_harmless_prologue(const char *path, struct elf_sym_req *reqs)
{
	unsigned char code[16];
	unsigned int i, len, skipped;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (i = 0; i < nr_alloc_symbols; i++) {
		if (!reqs[i].offset)
			continue;
		for (skipped = 0; skipped < 3; skipped++) {
			if (pread(fd, code, sizeof(code), reqs[i].offset) != sizeof(code))
				break;
			len = harmless_insn_len(code);
			if (!len)
				break;
			reqs[i].offset += len;
		}
	}
	close(fd);
}

/*
 * libc and libstdc++ hold the functions the preload shim interposes: their
 * probes make events for BPF-traced processes only.  Any other allocator
 * is foreign to the shim, and probed for every tracked process that maps it.
 */
static bool is_foreign_allocator(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	return strncmp(base, "libc.so", 7) && strncmp(base, "libstdc++.so", 12);
}

/* one probe per address, under the first name listed (aliases) */
static int collect_offsets(struct probe_file *f, const struct elf_sym_req *reqs,
			   uint64_t flags)
{
	unsigned int i, j;

	f->entry = calloc(nr_alloc_symbols, sizeof(*f->entry));
	f->entry_cookies = calloc(nr_alloc_symbols, sizeof(*f->entry_cookies));
	f->ret = calloc(nr_alloc_symbols, sizeof(*f->ret));
	f->ret_cookies = calloc(nr_alloc_symbols, sizeof(*f->ret_cookies));
	if (!f->entry || !f->entry_cookies || !f->ret || !f->ret_cookies)
		return -ENOMEM;
	for (i = 0; i < nr_alloc_symbols; i++) {
		bool seen = false;

		if (!reqs[i].offset)
			continue;
		for (j = 0; j < f->nentry; j++)
			seen |= f->entry[j] == reqs[i].offset;
		if (seen)
			continue;
		f->entry[f->nentry] = reqs[i].offset;
		f->entry_cookies[f->nentry++] = alloc_symbols[i].shape | flags;
		/* the return probes: every shape but the leaf frees */
		if (!alloc_shape__has_return(alloc_symbols[i].shape))
			continue;
		f->ret[f->nreturn] = reqs[i].offset;
		f->ret_cookies[f->nreturn++] = alloc_symbols[i].shape | flags;
	}
	return 0;
}

static int find_probes(struct probe_file *f, const char *path, const char *name)
{
	struct elf_sym_req reqs[nr_alloc_symbols];
	bool foreign = is_foreign_allocator(name);
	unsigned int i;
	int n;

	for (i = 0; i < nr_alloc_symbols; i++)
		reqs[i].name = alloc_symbols[i].name;
	n = elf__resolve_offsets(path, reqs, nr_alloc_symbols);
	if (n <= 0)
		return n;
#if defined(__x86_64__)
	skip_harmless_prologue(path, reqs);
#endif
	n = collect_offsets(f, reqs, foreign ? MT_COOKIE_FOREIGN : 0);
	if (n)
		return n;
	f->kind = foreign ? MT_FILE_FOREIGN_ALLOCATOR : MT_FILE_ALLOCATOR;
	return 0;
}

struct probe_file *probe_files__inspect(struct probe_files *pf, const struct mt_file_id *id,
					const char *path, const char *name, int *err)
{
	struct probe_file *f = probe_files__find(pf, id);

	*err = 0;
	if (f)
		return f;
	if (grow_array((void **)&pf->files, &pf->cap, pf->n + 1, sizeof(*pf->files))) {
		*err = -ENOMEM;
		return NULL;
	}
	f = &pf->files[pf->n++];
	memset(f, 0, sizeof(*f));
	f->id = *id;
	/* a file of no allocator, until found otherwise: a failure leaves it so */
	f->kind = MT_FILE_PLAIN;
	*err = find_probes(f, path, name);
	return f;
}

void probe_files__exit(struct probe_files *pf)
{
	size_t i;

	for (i = 0; i < pf->n; i++) {
		free(pf->files[i].entry);
		free(pf->files[i].entry_cookies);
		free(pf->files[i].ret);
		free(pf->files[i].ret_cookies);
	}
	free(pf->files);
	memset(pf, 0, sizeof(*pf));
}

int probe_file__link(const struct probe_file *f, int entry_prog, int return_prog,
		     const char *path, pid_t pid, int fds[2])
{
	fds[0] = fds[1] = -1;
	if (f->nreturn) {
		fds[1] = uprobe_multi__link(return_prog, path, f->ret, f->ret_cookies,
					    f->nreturn, true, pid);
		if (fds[1] < 0)
			return fds[1];
	}
	fds[0] = uprobe_multi__link(entry_prog, path, f->entry, f->entry_cookies, f->nentry,
				    false, pid);
	if (fds[0] < 0) {
		int err = fds[0];

		if (fds[1] >= 0)
			close(fds[1]);
		fds[0] = fds[1] = -1;
		return err;
	}
	return 0;
}
