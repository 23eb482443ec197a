// SPDX-License-Identifier: GPL-2.0
/*
 * The definitions the shim forwards to: for each name, the first object
 * after the shim in the link map that defines it, as dlsym(RTLD_NEXT)
 * would find it.  dlsym cannot be used here: it allocates (its error
 * state), and the allocator it would call is the one being looked up.
 * This reads the objects' dynamic symbol tables through dl_iterate_phdr,
 * which allocates nothing.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shim.h"

struct dyn_tables {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
	const ElfW(Half) *versym;
};

/* glibc relocates the dynamic section in place, the vDSO's is not: both kinds occur */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

static bool read_dyn_tables(const struct dl_phdr_info *info, struct dyn_tables *t)
{
	const ElfW(Dyn) *d = NULL;
	int i;

	memset(t, 0, sizeof(*t));
	t->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!d)
		return false;
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			t->symtab = (const ElfW(Sym) *)dyn_ptr(t->base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			t->strtab = (const char *)dyn_ptr(t->base, d->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			t->gnu_hash = (const uint32_t *)dyn_ptr(t->base, d->d_un.d_ptr);
			break;
		case DT_HASH:
			t->sysv_hash = (const uint32_t *)dyn_ptr(t->base, d->d_un.d_ptr);
			break;
		case DT_VERSYM:
			t->versym = (const ElfW(Half) *)dyn_ptr(t->base, d->d_un.d_ptr);
			break;
		}
	}
	return t->symtab && t->strtab && (t->gnu_hash || t->sysv_hash);
}

static uint32_t gnu_hash_of(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash_of(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* a definition the dynamic linker would bind a reference to */
static bool is_definition(const struct dyn_tables *t, uint32_t idx, const char *name)
{
	const ElfW(Sym) *s = &t->symtab[idx];
	unsigned int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);

	if (s->st_shndx == SHN_UNDEF || !s->st_value)
		return false;
	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return false;
	if (bind != STB_GLOBAL && bind != STB_WEAK)
		return false;
	if (t->versym && (t->versym[idx] & 0x8000))
		return false;	/* a hidden (non-default) version */
	return !strcmp(t->strtab + s->st_name, name);
}

static const ElfW(Sym) *gnu_lookup(const struct dyn_tables *t, const char *name)
{
	const uint32_t *h = t->gnu_hash;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)&h[4];
	const uint32_t *buckets = (const uint32_t *)&bloom[bloom_size];
	const uint32_t *chain = &buckets[nbuckets];
	uint32_t hash = gnu_hash_of(name), idx, bits = sizeof(ElfW(Addr)) * 8;
	ElfW(Addr) word;

	if (!nbuckets || !bloom_size)
		return NULL;
	word = bloom[(hash / bits) % bloom_size];
	if (!((word >> (hash % bits)) & (word >> ((hash >> shift) % bits)) & 1))
		return NULL;
	idx = buckets[hash % nbuckets];
	if (idx < symoffset)
		return NULL;
	for (;; idx++) {
		uint32_t ch = chain[idx - symoffset];

		if ((ch | 1) == (hash | 1) && is_definition(t, idx, name))
			return &t->symtab[idx];
		if (ch & 1)
			return NULL;
	}
}

static const ElfW(Sym) *sysv_lookup(const struct dyn_tables *t, const char *name)
{
	uint32_t nbucket = t->sysv_hash[0], nchain = t->sysv_hash[1];
	const uint32_t *bucket = &t->sysv_hash[2], *chain = &bucket[nbucket];
	uint32_t idx;

	if (!nbucket)
		return NULL;
	for (idx = bucket[sysv_hash_of(name) % nbucket]; idx && idx < nchain; idx = chain[idx])
		if (is_definition(t, idx, name))
			return &t->symtab[idx];
	return NULL;
}

static void *symbol_address(const struct dyn_tables *t, const ElfW(Sym) *s)
{
	void *addr = (void *)(t->base + s->st_value);

	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		addr = ((void *(*)(void))addr)();
	return addr;
}

struct lookup_walk {
	const void *self;		/* an address inside the shim */
	struct shim_next_sym *syms;
	unsigned int nsyms;
	bool past_self;
	bool main_seen;
};

static bool contains(const struct dl_phdr_info *info, const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && a >= info->dlpi_addr + p->p_vaddr &&
		    a < info->dlpi_addr + p->p_vaddr + p->p_memsz)
			return true;
	}
	return false;
}

/*
 * An object before the shim in the lookup order takes the program's calls
 * of what it defines.  The executable's own definitions are memtrack's to
 * judge (an operator new calling malloc is no allocator of its own, a
 * malloc of its own is, util/alloc-code.h); a library preloaded before the
 * shim (LD_PRELOAD=libjemalloc.so put first again) is one the shim cannot
 * see through.
 */
static int visit_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lookup_walk *w = arg;
	bool is_main = !w->main_seen;
	struct dyn_tables t;
	unsigned int i;

	(void)size;
	w->main_seen = true;
	if (contains(info, w->self)) {
		w->past_self = true;
		return 0;
	}
	if (is_main || !read_dyn_tables(info, &t))
		return 0;
	for (i = 0; i < w->nsyms; i++) {
		const ElfW(Sym) *s;

		if (w->past_self && w->syms[i].addr)
			continue;
		s = t.gnu_hash ? gnu_lookup(&t, w->syms[i].name) : sysv_lookup(&t, w->syms[i].name);
		if (!s)
			continue;
		if (w->past_self)
			w->syms[i].addr = symbol_address(&t, s);
		else
			w->syms[i].shadowed = true;
	}
	return 0;
}

void shim_lookup_next(struct shim_next_sym *syms, unsigned int n, const void *self)
{
	struct lookup_walk w = { .self = self, .syms = syms, .nsyms = n };

	dl_iterate_phdr(visit_object, &w);
}
