// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/probe/allocators.h"
#include "util/probe/bpf_probes.h"
#include "util/probe/alloc-code.h"
#include "util/probe/bpf_code_cache.h"
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

/* where each function's probe goes: past the leading instructions that only set flags */
static void skip_harmless_prologue(const char *path, const struct alloc_code *ac,
				   uint64_t *at)
{
	unsigned char code[16];
	unsigned int i, len, skipped;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	for (i = 0; i < nr_alloc_symbols; i++) {
		if (!at[i])
			continue;
		for (skipped = 0; skipped < 3; skipped++) {
			if (pread(fd, code, sizeof(code), at[i]) != sizeof(code))
				break;
			len = harmless_insn_len(code);
			if (!len || at[i] + len >= ac->fns[i].offset + ac->fns[i].size)
				break;
			at[i] += len;
		}
	}
	close(fd);
}

/* room for each function's entry, and its return instructions */
#define SET_MAX		(nr_alloc_symbols * (1 + ALLOC_FN_RETS_MAX))

static int probe_set__alloc(struct probe_set *set)
{
	set->entry = calloc(SET_MAX, sizeof(*set->entry));
	set->entry_cookies = calloc(SET_MAX, sizeof(*set->entry_cookies));
	set->ret = calloc(nr_alloc_symbols, sizeof(*set->ret));
	set->ret_cookies = calloc(nr_alloc_symbols, sizeof(*set->ret_cookies));
	return set->entry && set->entry_cookies && set->ret && set->ret_cookies ? 0 : -ENOMEM;
}

static void probe_set__exit(struct probe_set *set)
{
	free(set->entry);
	free(set->entry_cookies);
	free(set->ret);
	free(set->ret_cookies);
}

static void probe_set__add(struct probe_set *set, uint64_t at, uint64_t cookie, bool ret)
{
	set->entry[set->nentry] = at;
	set->entry_cookies[set->nentry++] = cookie;
	if (!ret)
		return;
	set->ret[set->nreturn] = at;
	set->ret_cookies[set->nreturn++] = cookie;
}

/*
 * The shim sees no call of a function it does not interpose, unless that
 * function calls one it does: the others are foreign to it, and probed
 * beside it.  A name of a function it interposes (tcmalloc's tc_malloc is
 * its malloc) is not: the shim's malloc reaches it.
 */
static bool is_foreign(const struct alloc_code *ac, unsigned int i)
{
	return !(alloc_symbols[i].flags & ALLOC_SYM_INTERPOSED) &&
	       !(ac->fns[i].flags & (ALLOC_FN_WRAPS_LIBC | ALLOC_FN_ALIAS));
}

/*
 * A function an exception can leave gets no return probe: the uprobe's
 * trampoline in its return address stops an unwinder (a bad_alloc thrown
 * through operator new would end the program).  When it calls another
 * allocator function, as every operator new that calls malloc does, the
 * call's result is that one's: its probe at entry keeps the program's stack
 * and its arguments, and the call it makes from its own code (within span
 * bytes of the probe) gives the address.  One that allocates by itself
 * (tcmalloc's, jemalloc's operator new) is probed at its return instructions
 * instead (*rets), where the code allows it (util/alloc-code.h), as are a
 * sanitizer runtime's functions, whose malloc records the stack it was
 * called from: the trampoline would stand for its caller in the program's
 * reports.  An operator delete that calls no other free makes its event
 * at its entry, as free does: no return probe either.
 */
static uint64_t cookie_of(const struct alloc_code *ac, unsigned int i, uint64_t at,
			  bool *ret, bool *rets)
{
	const struct alloc_fn *fn = &ac->fns[i];
	uint64_t cookie = alloc_symbols[i].shape;

	if (cookie == MT_SHAPE_FREE_WRAPPER && ac->code_read && !(fn->flags & ALLOC_FN_WRAPS_PROBED))
		cookie = MT_SHAPE_FREE;
	else if (cookie == MT_SHAPE_FREE && (fn->flags & ALLOC_FN_WRAPS_PROBED))
		cookie = MT_SHAPE_FREE_WRAPPER;	/* a forwarder's: the free it calls is nested */
	*ret = alloc_shape__has_return(cookie);
	*rets = false;
	if (is_foreign(ac, i))
		cookie |= MT_COOKIE_FOREIGN;
	if ((alloc_symbols[i].flags & ALLOC_SYM_THROWS) && (fn->flags & ALLOC_FN_WRAPS_PROBED) &&
	    fn->size && at < fn->offset + fn->size) {
		cookie |= MT_COOKIE_INNER | (fn->offset + fn->size - at) << 32;
		*ret = false;
	} else if (*ret && fn->nrets > 0) {
		*ret = false;
		*rets = true;
	}
	return cookie;
}

/* one probe per address, under the first name listed (aliases) */
static int collect_offsets(struct probe_file *f, const struct alloc_code *ac, const uint64_t *at)
{
	unsigned int i, j;
	int err;

	err = probe_set__alloc(&f->seen);
	if (!err)
		err = probe_set__alloc(&f->foreign);
	if (!err && !(f->wrappers = calloc(nr_alloc_symbols, sizeof(*f->wrappers))))
		err = -ENOMEM;
	if (err)
		return err;
	for (i = 0; i < nr_alloc_symbols; i++) {
		bool seen = false, ret, rets;
		struct probe_set *set;
		uint64_t cookie;
		int k;

		if (!at[i])
			continue;
		for (j = 0; j < nr_alloc_symbols; j++)
			seen |= j < i && at[j] == at[i];
		if (seen)
			continue;
		cookie = cookie_of(ac, i, at[i], &ret, &rets);
		set = cookie & MT_COOKIE_FOREIGN ? &f->foreign : &f->seen;
		probe_set__add(set, at[i], cookie, ret);
		for (k = 0; rets && k < ac->fns[i].nrets; k++)
			probe_set__add(set, ac->fns[i].rets[k], cookie | MT_COOKIE_RET, false);
		if ((ac->fns[i].flags & ALLOC_FN_WRAPS_LIBC) && ac->fns[i].size)
			f->wrappers[f->nwrappers++] = (struct probe_range){ ac->fns[i].offset,
									    ac->fns[i].size };
	}
	return 0;
}

/* an allocator function the shim interposes, that calls none of them */
static const char *own_allocator(const struct alloc_code *ac)
{
	unsigned int i;

	for (i = 0; i < nr_alloc_symbols; i++)
		if (ac->fns[i].offset && (alloc_symbols[i].flags & ALLOC_SYM_INTERPOSED) &&
		    !(ac->fns[i].flags & ALLOC_FN_WRAPS_LIBC))
			return alloc_symbols[i].name;
	return NULL;
}

static int find_probes(struct probe_file *f, const char *path)
{
	struct alloc_code *ac = malloc(sizeof(*ac));
	uint64_t at[nr_alloc_symbols];
	unsigned int i;
	int n;

	if (!ac)
		return -ENOMEM;
	n = alloc_code__read_cached(path, ac);
	f->imports = ac->imports;
	f->interp = ac->interp;
	f->sanitizer = ac->sanitizer;
	if (n <= 0)
		goto out;
	for (i = 0; i < nr_alloc_symbols; i++) {
		at[i] = ac->fns[i].offset;
		if (ac->fns[i].flags & ALLOC_FN_ALIAS)
			alloc_set__add(&f->aliases, i);
	}
#if defined(__x86_64__)
	skip_harmless_prologue(path, ac, at);
#endif
	n = collect_offsets(f, ac, at);
	if (n)
		goto out;
	f->own = own_allocator(ac);
	f->kind = f->foreign.nentry ? MT_FILE_FOREIGN_ALLOCATOR : MT_FILE_ALLOCATOR;
	f->nentry = f->seen.nentry + f->foreign.nentry;
out:
	free(ac);
	return n < 0 ? n : 0;
}

struct probe_file *probe_files__inspect(struct probe_files *pf, const struct mt_file_id *id,
					const char *path, int *err)
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
	*err = find_probes(f, path);
	return f;
}

void probe_files__exit(struct probe_files *pf)
{
	size_t i;

	for (i = 0; i < pf->n; i++) {
		probe_set__exit(&pf->files[i].seen);
		probe_set__exit(&pf->files[i].foreign);
		free(pf->files[i].wrappers);
	}
	free(pf->files);
	memset(pf, 0, sizeof(*pf));
}

int probe_set__link(const struct probe_set *set, int entry_prog, int return_prog,
		    const char *path, pid_t pid, int fds[2])
{
	fds[0] = fds[1] = -1;
	if (set->nreturn) {
		fds[1] = uprobe_multi__link(return_prog, path, set->ret, set->ret_cookies,
					    set->nreturn, true, pid);
		if (fds[1] < 0)
			return fds[1];
	}
	fds[0] = uprobe_multi__link(entry_prog, path, set->entry, set->entry_cookies,
				    set->nentry, false, pid);
	if (fds[0] < 0) {
		int err = fds[0];

		if (fds[1] >= 0)
			close(fds[1]);
		fds[0] = fds[1] = -1;
		return err;
	}
	return 0;
}
