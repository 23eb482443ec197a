// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/symbol/debuginfo.h"
#include "util/symbol/dwarf-cache.h"
#include "util/symbol/sym-module.h"
#include "util/usage.h"
#include "util/util.h"

static void module_warn(struct sym_module *mod, const char *fmt, ...) __printf(2, 3);

static void module_warn(struct sym_module *mod, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (mod->warned)
		return;
	mod->warned = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warning("symbolize: %s", msg);
}

/* opens path if it is still the file of inode ino (ino 0: any) */
static int open_checked(const char *path, uint64_t ino)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ino && (fstat(fd, &st) || st.st_ino != ino)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * The file of a mapping of pid: map_files is the mapped file itself, even
 * deleted or in another mount namespace, but needs CAP_SYS_ADMIN; the root
 * of pid then our own view of path, if the inode still matches.
 */
static int open_mapped(pid_t pid, const struct sym_file_map *r)
{
	char name[PATH_MAX + 64];
	int fd = -ENOENT;

	if (pid > 0) {
		snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)pid, r->start, r->end);
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		snprintf(name, sizeof(name), "/proc/%d/root%s", (int)pid, r->path);
		fd = open_checked(name, r->ino);
		if (fd >= 0)
			return fd;
	}
	return open_checked(r->path, r->ino);
}

/* our own vdso: the kernel gives every (64-bit) process the same image */
static Elf *vdso_elf(struct sym_module *mod)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t size;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1 << 20))
		return NULL;
	mod->image = malloc(size);
	if (!mod->image)
		return NULL;
	memcpy(mod->image, eh, size);
	return elf_memory(mod->image, size);
}

static void module_read_segments(struct sym_module *mod)
{
	size_t i, n;

	if (elf_getphdrnum(mod->elf, &n) || !n)
		return;
	mod->segs = calloc(n, sizeof(*mod->segs));
	if (!mod->segs)
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(mod->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		mod->segs[mod->nr_segs].offset = ph.p_offset;
		mod->segs[mod->nr_segs].filesz = ph.p_filesz;
		mod->segs[mod->nr_segs].vaddr = ph.p_vaddr;
		mod->nr_segs++;
	}
}

struct elf_sections {
	Elf_Scn *symtab, *dynsym;
	bool debug_info;
};

static void elf_find_sections(Elf *elf, struct elf_sections *es)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(es, 0, sizeof(*es));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			es->symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			es->dynsym = scn;
		else if (sh.sh_type == SHT_PROGBITS &&
			 (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			 (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")))
			es->debug_info = true;
	}
}

static void module_read_build_id(struct sym_module *mod)
{
	const unsigned char *id;
	ssize_t len = dwelf_elf_gnu_build_id(mod->elf, (const void **)&id), i;

	if (len <= 0 || len > SYM_BUILD_ID_MAX)
		return;
	for (i = 0; i < len; i++)
		snprintf(&mod->build_id[2 * i], 3, "%02x", id[i]);
}

/* the file and its segments: what unwind rules need; under mod->lock */
bool sym_module__prepare(struct sym_module *mod)
{
	GElf_Ehdr eh;
	int fd;

	if (mod->prepared)
		return mod->elf != NULL;
	mod->prepared = true;
	if (!mod->elf && mod->pseudo)
		mod->elf = vdso_elf(mod);
	if (!mod->elf && !mod->pseudo) {
		/* not opened while the process lived: the path, if still the same file */
		fd = open_checked(mod->path, mod->ino);
		if (fd >= 0)
			mod->elf = elf__from_fd(fd);
		if (!mod->elf) {
			module_warn(mod, "cannot read '%s' (%s): its frames get no symbols",
				    mod->path, fd == -ESTALE ? "replaced since it was mapped" :
				    fd < 0 ? strerror(-fd) : "not an ELF file");
			return false;
		}
	}
	if (!mod->elf)
		return false;
	if (!gelf_getehdr(mod->elf, &eh)) {
		module_warn(mod, "cannot read the ELF header of '%s': %s",
			    mod->path, elf_errmsg(-1));
		elf_end(mod->elf);
		mod->elf = NULL;
		return false;
	}
	mod->is_exec = eh.e_type == ET_EXEC;
	module_read_segments(mod);
	module_read_build_id(mod);
	return true;
}

/* symbols and DWARF, at the first resolve in the module; under mod->lock */
void sym_module__load(struct sym_module *mod, struct debuginfo *dbg, int cache_dir)
{
	struct elf_sections es, dbg_es;
	Elf_Scn *symscn;
	Elf *symelf;
	const void *id;
	const char *image;
	ssize_t id_len;
	size_t size;

	mod->loaded = true;
	if (!sym_module__prepare(mod))
		return;
	elf_find_sections(mod->elf, &es);
	memset(&dbg_es, 0, sizeof(dbg_es));
	if ((!es.symtab || !es.debug_info) && !mod->pseudo) {
		mod->dbg_elf = debuginfo__find(dbg, mod->elf, mod->path);
		if (mod->dbg_elf)
			elf_find_sections(mod->dbg_elf, &dbg_es);
	}

	/* .symtab, of the file or else of its debug file; else .dynsym */
	symelf = mod->elf;
	symscn = es.symtab;
	if (!symscn && dbg_es.symtab) {
		symelf = mod->dbg_elf;
		symscn = dbg_es.symtab;
	}
	if (!symscn)
		symscn = es.dynsym;
	if (symscn && elf_symtab__read(&mod->symtab, symelf, symscn))
		module_warn(mod, "cannot read the symbols of '%s'", mod->path);

	mod->dwarf_elf = es.debug_info ? mod->elf : dbg_es.debug_info ? mod->dbg_elf : NULL;
	if (mod->dwarf_elf && cache_dir >= 0 &&
	    (id_len = dwelf_elf_gnu_build_id(mod->elf, &id)) > 0 &&
	    (image = elf_rawfile(mod->dwarf_elf, &size)))
		mod->dcache = dwarf_cache__open(cache_dir, id, id_len, image, size);
}

Dwarf *sym_module__dwarf(struct sym_module *mod)
{
	if (mod->dwarf_tried || !mod->dwarf_elf)
		return mod->dwarf;
	mod->dwarf_tried = true;
	mod->dwarf = dwarf_begin_elf(mod->dwarf_elf, DWARF_C_READ, NULL);
	if (mod->dwarf && dwarf_lines__init(&mod->lines, mod->dwarf))
		module_warn(mod, "cannot read the DWARF units of '%s'", mod->path);
	return mod->dwarf;
}

/* file offset -> link-time address, through the PT_LOAD holding it */
uint64_t sym_module__vaddr(const struct sym_module *mod, uint64_t ip, uint64_t foff)
{
	size_t i;

	for (i = 0; i < mod->nr_segs; i++) {
		const struct load_seg *seg = &mod->segs[i];

		if (foff >= seg->offset && foff - seg->offset < seg->filesz)
			return foff - seg->offset + seg->vaddr;
	}
	return mod->is_exec ? ip : foff;
}

/*
 * The frames of an address are computed once: the stacks of a run share
 * most of their addresses, and the walk down a unit's DWARF to the scopes
 * holding an address costs microseconds.
 */
struct frames_slot {
	uint64_t key;		/* addr + 1; 0: empty */
	uint64_t vaddr;
	struct sym_frame *frames;
	int n;
};

static size_t slot_of(uint64_t key, size_t cap)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> 20 & (cap - 1);
}

static int frames_grow(struct sym_module *mod)
{
	size_t cap = mod->frames_cap ? 2 * mod->frames_cap : 256, i, j;
	struct frames_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < mod->frames_cap; i++) {
		if (!mod->frames[i].key)
			continue;
		for (j = slot_of(mod->frames[i].key, cap); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = mod->frames[i];
	}
	free(mod->frames);
	mod->frames = slots;
	mod->frames_cap = cap;
	return 0;
}

static int compute_frames(struct sym_module *mod, uint64_t vaddr, uint64_t addr,
			  struct sym_frame *out, int max);

int sym_module__frames(struct sym_module *mod, uint64_t vaddr, uint64_t addr,
		       struct sym_frame *out, int max)
{
	struct frames_slot *slot;
	size_t i;
	int n;

	if ((mod->nr_frames + 1) * 2 > mod->frames_cap && frames_grow(mod))
		return compute_frames(mod, vaddr, addr, out, max);
	for (i = slot_of(addr + 1, mod->frames_cap); mod->frames[i].key;
	     i = (i + 1) & (mod->frames_cap - 1)) {
		slot = &mod->frames[i];
		if (slot->key == addr + 1 && slot->vaddr == vaddr) {
			n = slot->n < max ? slot->n : max;
			memcpy(out, slot->frames, n * sizeof(*out));
			return n;
		}
	}
	n = compute_frames(mod, vaddr, addr, out, max);
	slot = &mod->frames[i];
	slot->frames = malloc(n * sizeof(*out));
	if (slot->frames && max == SYM_MAX_FRAMES) {
		memcpy(slot->frames, out, n * sizeof(*out));
		slot->key = addr + 1;
		slot->vaddr = vaddr;
		slot->n = n;
		mod->nr_frames++;
	} else {
		free(slot->frames);
		slot->frames = NULL;
	}
	return n;
}

/* from the cache file when it has addr, else from the DWARF, kept for the next run */
static int module_src_frames(struct sym_module *mod, uint64_t addr, struct src_frame *src,
			     int max)
{
	int n;

	if (dwarf_cache__find(mod->dcache, addr, src, max, &n))
		return n;
	sym_module__dwarf(mod);
	n = mod->lines.nr_cus ? dwarf_lines__find(&mod->lines, addr, src, max) : 0;
	/* DWARF that could not be read answers nothing worth keeping for the next run */
	if (max == SYM_MAX_FRAMES && mod->lines.nr_cus)
		dwarf_cache__add(mod->dcache, addr, src, n);
	return n;
}

static int compute_frames(struct sym_module *mod, uint64_t vaddr, uint64_t addr,
			  struct sym_frame *out, int max)
{
	const struct elf_symbol *sym = elf_symtab__find(&mod->symtab, addr);
	struct src_frame src[SYM_MAX_FRAMES];
	int n, i;

	if (max > SYM_MAX_FRAMES)
		max = SYM_MAX_FRAMES;
	n = module_src_frames(mod, addr, src, max);
	if (!n) {
		src[0] = (struct src_frame){ NULL, NULL, 0 };
		n = 1;
	}
	/* the functions inlined at addr: named by DWARF, no offset of their own */
	for (i = 0; i < n - 1; i++)
		out[i] = (struct sym_frame){
			.module = mod->path, .symbol = src[i].function, .offset = 0,
			.file = src[i].file, .line = src[i].line, .inlined = true,
		};
	/* the function the code is in, by the symbol table */
	out[i] = (struct sym_frame){
		.module = mod->path, .symbol = sym ? sym->name : SYM_UNKNOWN,
		.offset = sym ? vaddr - sym->start : vaddr,
		.file = src[i].file, .line = src[i].line,
	};
	return n;
}

void sym_module__delete(struct sym_module *mod)
{
	size_t i;

	if (!mod)
		return;
	for (i = 0; i < mod->frames_cap; i++)
		free(mod->frames[i].frames);
	free(mod->frames);
	dwarf_cache__close(mod->dcache);
	cfi_rules__exit(&mod->cfi);
	dwarf_lines__exit(&mod->lines);
	if (mod->dwarf)
		dwarf_end(mod->dwarf);
	if (mod->dbg_elf)
		elf_end(mod->dbg_elf);
	if (mod->elf)
		elf_end(mod->elf);
	free(mod->image);
	elf_symtab__exit(&mod->symtab);
	free(mod->segs);
	free(mod->path);
	pthread_mutex_destroy(&mod->lock);
	free(mod);
}

struct sym_module *sym_module__new(pid_t pid, const struct sym_file_map *r)
{
	struct sym_module *mod = calloc(1, sizeof(*mod));
	int fd;

	if (!mod)
		return NULL;
	mod->path = strdup(r->path);
	if (!mod->path) {
		free(mod);
		return NULL;
	}
	mod->dev = r->dev;
	mod->ino = r->ino;
	mod->pseudo = r->path[0] == '[';
	pthread_mutex_init(&mod->lock, NULL);
	if (!mod->pseudo) {
		fd = open_mapped(pid, r);
		if (fd >= 0)
			mod->elf = elf__from_fd(fd);
	}
	return mod;
}

void sym_module__reopen(struct sym_module *mod, pid_t pid, const struct sym_file_map *r)
{
	int fd;

	/* never wait here: the caller holds the symbolizer's lock */
	if (mod->pseudo || pthread_mutex_trylock(&mod->lock))
		return;
	if (!mod->elf && !mod->loaded) {
		fd = open_mapped(pid, r);
		if (fd >= 0)
			mod->elf = elf__from_fd(fd);
	}
	pthread_mutex_unlock(&mod->lock);
}
