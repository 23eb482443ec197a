// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer; symbolize.h describes the model.  Three kinds of objects:
 *
 *   struct module     one per (dev, ino): the Elf (mapped when first seen),
 *                     then at the first resolve its PT_LOAD segments, a
 *                     sorted symbol array and the address ranges of its
 *                     DWARF units.  Lives until symbolizer__delete().
 *   struct map_set    a sorted, immutable array of mappings, reference
 *                     counted: a fork shares the parent's, every change
 *                     builds a new one.
 *   struct pid_entry  pid -> current set, and the set before the last exec.
 *
 * Locking: s->lock guards the pid table, the module table and the sets;
 * mod->lock guards what module_load() fills in and the libdw handles.  The
 * order is s->lock, then mod->lock; resolve never holds both.
 */
#define _GNU_SOURCE
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolize.h"
#include "unwind.h"
#include "usage.h"
#include "util.h"

#define MODULE_BUCKETS		1024
#define REFRESH_INTERVAL_NS	NSEC_PER_MSEC
#define DEBUG_DIR		"/usr/lib/debug"
#define VDSO_NAME		"[vdso]"

struct symbol {
	uint64_t start;
	uint64_t size;
	const char *name;	/* in the module's mapped string table */
};

struct load_seg {
	uint64_t offset;	/* p_offset */
	uint64_t filesz;
	uint64_t vaddr;
};

struct cu_range {
	uint64_t low, high;	/* [low, high) */
	Dwarf_Die cu;
};

struct module {
	struct module *hnext;
	struct module *next;
	dev_t dev;
	uint64_t ino;
	char *path;
	pthread_mutex_t lock;
	Elf *elf;		/* file mapped when first seen; NULL if it could not be */
	void *image;		/* our copy of the vdso */
	bool pseudo;		/* [vdso] */
	bool loaded;		/* module_load() ran */
	bool warned;
	bool is_exec;		/* ET_EXEC: ip is the link-time address */
	struct load_seg *segs;
	size_t nr_segs;
	struct symbol *syms;
	size_t nr_syms;
	Elf *dbg_elf;		/* separate debug file */
	Dwarf *dwarf;
	struct cu_range *cus;
	size_t nr_cus;
	Dwarf_CFI *eh_cfi;	/* .eh_frame, then .debug_frame: read at the first unwind */
	Dwarf_CFI *dbg_cfi;
	bool cfi_read;
	struct rule_slot *rules;	/* link-time address -> rule, open addressing */
	size_t rules_cap, nr_rules;
};

struct rule_slot {
	uint64_t addr;		/* + 1: 0 is an empty slot */
	int err;		/* 0, or why there is no rule at addr */
	struct unwind_rule rule;
};

struct map {
	uint64_t start, end, pgoff;
	struct module *mod;
};

struct map_set {
	unsigned int refs;
	size_t nr;
	struct map maps[];
};

struct pid_entry {
	struct pid_entry *hnext;
	pid_t pid;
	bool exited;
	uint64_t exit_seq;
	uint64_t refresh_ns;	/* last re-read of /proc/<pid>/maps on a miss */
	struct map_set *cur;
	struct map_set *prev;	/* before the last exec */
};

struct exited_pid {
	pid_t pid;
	uint64_t seq;
};

struct symbolizer {
	pthread_mutex_t lock;
	struct pid_entry **pids;
	size_t pid_buckets;	/* power of two */
	size_t nr_pids;
	struct module *mod_hash[MODULE_BUCKETS];
	struct module *modules;
	size_t nr_modules;
	struct exited_pid *exited;	/* FIFO ring of the kept exited pids */
	size_t exited_head, nr_exited, keep_exited;
	uint64_t exit_seq;
	uint64_t refreshes;
	size_t nr_sets;
	char *debug_dir;	/* NULL: no separate debug files */
	pid_t gone_pid;		/* the last pid whose maps could not be read */
	uint64_t gone_ns;
};

/* what one line of /proc/<pid>/maps (or an mmap event) says */
struct raw_map {
	uint64_t start, end, pgoff;
	dev_t dev;
	uint64_t ino;
	char *path;
};

enum snap_mode {
	SNAP_REPLACE,
	SNAP_EXEC,	/* the current set becomes prev */
	SNAP_MERGE,	/* keep the current mappings that the new ones do not overlap */
};

static void module_warn(struct module *mod, const char *fmt, ...) __printf(2, 3);

static void module_warn(struct module *mod, const char *fmt, ...)
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

/* ---- ELF files ---------------------------------------------------------- */

/* maps the file of fd through libelf and closes fd */
static Elf *elf_from_fd(int fd)
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
static int open_mapped(pid_t pid, const struct raw_map *r)
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
static Elf *vdso_elf(struct module *mod)
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

static void module_read_segments(struct module *mod)
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

/* <debug_dir>/.build-id/xx/yyyy.debug, or NULL */
static Elf *open_debug_file(Elf *elf, const char *debug_dir)
{
	char path[PATH_MAX], id_hex[2 * 64 + 1];
	const unsigned char *id;
	ssize_t len, i;
	int fd;

	len = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (len < 2 || len > 64)
		return NULL;
	for (i = 1; i < len; i++)
		sprintf(id_hex + 2 * (i - 1), "%02x", id[i]);
	if (snprintf(path, sizeof(path), "%s/.build-id/%02x/%s.debug",
		     debug_dir, id[0], id_hex) >= (int)sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? NULL : elf_from_fd(fd);
}

/* ---- symbols ------------------------------------------------------------ */

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

/* one symbol per address, sorted, for a binary search */
static int module_read_symbols(struct module *mod, Elf *elf, Elf_Scn *scn)
{
	struct sym_cand *c;
	size_t n, i, k = 0;
	int err;

	err = collect_symbols(elf, scn, &c, &n);
	if (err)
		return err;
	qsort(c, n, sizeof(*c), sym_cand_cmp);
	mod->syms = malloc((n ? n : 1) * sizeof(*mod->syms));
	if (!mod->syms) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (k && mod->syms[k - 1].start == c[i].start)
			continue;
		mod->syms[k].start = c[i].start;
		mod->syms[k].size = c[i].size;
		mod->syms[k].name = c[i].name;
		k++;
	}
	free(c);
	mod->nr_syms = k;
	if (k < n) {
		struct symbol *shrunk = realloc(mod->syms, (k ? k : 1) * sizeof(*shrunk));

		if (shrunk)
			mod->syms = shrunk;
	}
	return 0;
}

/*
 * The function containing addr: the last symbol starting at or below addr
 * if its size covers addr or it has no size; else an enclosing one a few
 * entries back (a local label symbol inside a function).
 */
static const struct symbol *module_find_symbol(const struct module *mod,
					       uint64_t addr)
{
	size_t lo = 0, hi = mod->nr_syms, i, back;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	i = lo - 1;
	if (!mod->syms[i].size)
		return &mod->syms[i];
	for (back = 0; back < 8; back++, i--) {
		const struct symbol *sym = &mod->syms[i];

		if (sym->size && addr - sym->start < sym->size)
			return sym;
		if (!i)
			break;
	}
	return NULL;
}

/* ---- DWARF -------------------------------------------------------------- */

static int cu_range_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

/*
 * The address ranges of every compile unit, from the units themselves
 * (.debug_aranges is optional, clang does not write it).
 */
static int module_read_units(struct module *mod)
{
	size_t cap = 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t type;

	while (dwarf_get_units(mod->dwarf, cu, &cu, NULL, &type, &cudie, NULL) == 0) {
		Dwarf_Addr base, low, high;
		ptrdiff_t off = 0;

		if (type != DW_UT_compile && type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &low, &high)) > 0) {
			if (low >= high)
				continue;
			if (grow_array((void **)&mod->cus, &cap, mod->nr_cus + 1, sizeof(*mod->cus)))
				return -ENOMEM;
			mod->cus[mod->nr_cus].low = low;
			mod->cus[mod->nr_cus].high = high;
			mod->cus[mod->nr_cus].cu = cudie;
			mod->nr_cus++;
		}
	}
	qsort(mod->cus, mod->nr_cus, sizeof(*mod->cus), cu_range_cmp);
	return 0;
}

static void module_find_line(struct module *mod, uint64_t addr,
			     struct sym_frame *out)
{
	size_t lo = 0, hi = mod->nr_cus, i, back;
	const char *src;
	Dwarf_Line *line;
	int lineno;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->cus[mid].low <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	/* ranges may nest or overlap (rare): look a few back */
	for (i = lo - 1, back = 0; back < 4; back++, i--) {
		if (addr < mod->cus[i].high)
			break;
		if (!i)
			return;
	}
	if (back == 4)
		return;
	line = dwarf_getsrc_die(&mod->cus[i].cu, addr);
	if (!line || dwarf_lineno(line, &lineno) || lineno <= 0)
		return;
	src = dwarf_linesrc(line, NULL, NULL);
	if (!src)
		return;
	out->file = src;
	out->line = lineno;
}

/* ---- modules ------------------------------------------------------------ */

/* symbols and DWARF, at the first resolve in the module; under mod->lock */
static void module_load(struct module *mod, const char *debug_dir)
{
	struct elf_sections es, dbg_es;
	Elf_Scn *symscn;
	Elf *symelf;
	GElf_Ehdr eh;
	int fd;

	mod->loaded = true;
	if (!mod->elf && mod->pseudo) {
		mod->elf = vdso_elf(mod);
		if (!mod->elf)
			return;
	}
	if (!mod->elf) {
		/* not opened while the process lived: the path, if still the same file */
		fd = open_checked(mod->path, mod->ino);
		if (fd >= 0)
			mod->elf = elf_from_fd(fd);
		if (!mod->elf) {
			module_warn(mod, "cannot read '%s' (%s): its frames get no symbols",
				    mod->path, fd == -ESTALE ? "replaced since it was mapped" :
				    fd < 0 ? strerror(-fd) : "not an ELF file");
			return;
		}
	}
	if (!gelf_getehdr(mod->elf, &eh)) {
		module_warn(mod, "cannot read the ELF header of '%s': %s",
			    mod->path, elf_errmsg(-1));
		return;
	}
	mod->is_exec = eh.e_type == ET_EXEC;
	module_read_segments(mod);

	elf_find_sections(mod->elf, &es);
	memset(&dbg_es, 0, sizeof(dbg_es));
	if ((!es.symtab || !es.debug_info) && !mod->pseudo && debug_dir) {
		mod->dbg_elf = open_debug_file(mod->elf, debug_dir);
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
	if (symscn && module_read_symbols(mod, symelf, symscn))
		module_warn(mod, "cannot read the symbols of '%s'", mod->path);

	if (es.debug_info)
		mod->dwarf = dwarf_begin_elf(mod->elf, DWARF_C_READ, NULL);
	else if (dbg_es.debug_info)
		mod->dwarf = dwarf_begin_elf(mod->dbg_elf, DWARF_C_READ, NULL);
	if (mod->dwarf && module_read_units(mod))
		module_warn(mod, "cannot read the DWARF units of '%s'", mod->path);
}

/* file offset -> link-time address, through the PT_LOAD holding it */
static uint64_t module_vaddr(const struct module *mod, uint64_t ip,
			     uint64_t foff)
{
	size_t i;

	for (i = 0; i < mod->nr_segs; i++) {
		const struct load_seg *seg = &mod->segs[i];

		if (foff >= seg->offset && foff - seg->offset < seg->filesz)
			return foff - seg->offset + seg->vaddr;
	}
	return mod->is_exec ? ip : foff;
}

static void module_free(struct module *mod)
{
	if (mod->eh_cfi)
		dwarf_cfi_end(mod->eh_cfi);
	free(mod->rules);
	if (mod->dwarf)
		dwarf_end(mod->dwarf);
	if (mod->dbg_elf)
		elf_end(mod->dbg_elf);
	if (mod->elf)
		elf_end(mod->elf);
	free(mod->image);
	free(mod->cus);
	free(mod->syms);
	free(mod->segs);
	free(mod->path);
	pthread_mutex_destroy(&mod->lock);
	free(mod);
}

static size_t module_hash(dev_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)dev << 32) ^ dev) * 0x9e3779b97f4a7c15ULL;

	return h >> 54;		/* MODULE_BUCKETS = 1 << 10 */
}

/*
 * The module of a mapping, created (and its file opened) when first seen;
 * under s->lock.  NULL only when out of memory.
 */
static struct module *module_get(struct symbolizer *s, pid_t pid,
				 const struct raw_map *r)
{
	size_t h = module_hash(r->dev, r->ino);
	struct module *mod;
	int fd;

	for (mod = s->mod_hash[h]; mod; mod = mod->hnext) {
		if (mod->dev != r->dev || mod->ino != r->ino)
			continue;
		/* a file that could not be opened yet: try again through this pid */
		if (!mod->pseudo && !pthread_mutex_trylock(&mod->lock)) {
			if (!mod->elf && !mod->loaded) {
				fd = open_mapped(pid, r);
				if (fd >= 0)
					mod->elf = elf_from_fd(fd);
			}
			pthread_mutex_unlock(&mod->lock);
		}
		return mod;
	}
	mod = calloc(1, sizeof(*mod));
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
			mod->elf = elf_from_fd(fd);
	}
	mod->hnext = s->mod_hash[h];
	s->mod_hash[h] = mod;
	mod->next = s->modules;
	s->modules = mod;
	s->nr_modules++;
	return mod;
}

/* ---- mapping sets ------------------------------------------------------- */

static struct map_set *map_set__new(struct symbolizer *s, size_t nr)
{
	struct map_set *set = malloc(sizeof(*set) + (nr ? nr : 1) * sizeof(set->maps[0]));

	if (!set)
		return NULL;
	s->nr_sets++;
	set->refs = 1;
	set->nr = nr;
	return set;
}

static struct map_set *map_set__get(struct map_set *set)
{
	if (set)
		set->refs++;
	return set;
}

static void map_set__put(struct symbolizer *s, struct map_set *set)
{
	if (set && !--set->refs) {
		s->nr_sets--;
		free(set);
	}
}

static int map_cmp(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* the mapping with the last start <= ip, if it covers ip */
static const struct map *map_set__find(const struct map_set *set, uint64_t ip)
{
	size_t lo = 0, hi = set ? set->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->maps[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ip >= set->maps[lo - 1].end)
		return NULL;
	return &set->maps[lo - 1];
}

static bool map_set__overlaps(const struct map_set *set, uint64_t start,
			      uint64_t end)
{
	size_t lo = 0, hi = set->nr;

	/* the last mapping starting before end */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->maps[mid].start < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && set->maps[lo - 1].end > start;
}

/* new + the mappings of old that no mapping of new overlaps */
static struct map_set *map_set__merge(struct symbolizer *s,
				      const struct map_set *new,
				      const struct map_set *old)
{
	size_t i, n = new->nr;
	struct map_set *set;

	set = map_set__new(s, new->nr + (old ? old->nr : 0));
	if (!set)
		return NULL;
	memcpy(set->maps, new->maps, new->nr * sizeof(new->maps[0]));
	for (i = 0; old && i < old->nr; i++) {
		if (!map_set__overlaps(new, old->maps[i].start, old->maps[i].end))
			set->maps[n++] = old->maps[i];
	}
	set->nr = n;
	qsort(set->maps, n, sizeof(set->maps[0]), map_cmp);
	return set;
}

/* under s->lock; NULL when out of memory */
static struct map_set *map_set__from_raw(struct symbolizer *s, pid_t pid,
					 const struct raw_map *raw, size_t nr)
{
	struct map_set *set = map_set__new(s, nr);
	size_t i;

	if (!set)
		return NULL;
	for (i = 0; i < nr; i++) {
		struct map *m = &set->maps[i];

		m->mod = module_get(s, pid, &raw[i]);
		if (!m->mod) {
			map_set__put(s, set);
			return NULL;
		}
		m->start = raw[i].start;
		m->end = raw[i].end;
		m->pgoff = raw[i].pgoff;
	}
	qsort(set->maps, nr, sizeof(set->maps[0]), map_cmp);
	return set;
}

/* ---- /proc/<pid>/maps --------------------------------------------------- */

static void raw_maps_free(struct raw_map *raw, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(raw[i].path);
	free(raw);
}

/* the executable file mappings of pid, and [vdso]; without any lock */
static int read_maps(pid_t pid, struct raw_map **out, size_t *nr_out)
{
	struct raw_map *raw = NULL;
	size_t nr = 0, cap = 0, len = 0;
	char name[64], *line = NULL;
	int err = 0;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &len, f) > 0) {
		uint64_t start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8], *path;
		size_t plen;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &pgoff, &maj, &min, &ino, &pos) < 7 ||
		    !pos || perms[2] != 'x')
			continue;
		path = line + pos;
		plen = strcspn(path, "\n");
		path[plen] = '\0';
		if (plen > 10 && !strcmp(path + plen - 10, " (deleted)"))
			path[plen - 10] = '\0';
		/* anonymous executable memory (JIT), [vsyscall], [uprobes]: no file */
		if (path[0] != '/' && strcmp(path, VDSO_NAME))
			continue;
		if (grow_array((void **)&raw, &cap, nr + 1, sizeof(*raw))) {
			err = -ENOMEM;
			break;
		}
		raw[nr].path = strdup(path);
		if (!raw[nr].path) {
			err = -ENOMEM;
			break;
		}
		raw[nr].start = start;
		raw[nr].end = end;
		raw[nr].pgoff = pgoff;
		raw[nr].dev = path[0] == '/' ? makedev(maj, min) : 0;
		raw[nr].ino = path[0] == '/' ? ino : 0;
		nr++;
	}
	free(line);
	fclose(f);
	if (err) {
		raw_maps_free(raw, nr);
		return err;
	}
	*out = raw;
	*nr_out = nr;
	return 0;
}

/* ---- pids --------------------------------------------------------------- */

static size_t pid_hash(const struct symbolizer *s, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (s->pid_buckets - 1);
}

static struct pid_entry *pid_find(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *e;

	for (e = s->pids[pid_hash(s, pid)]; e; e = e->hnext)
		if (e->pid == pid)
			return e;
	return NULL;
}

static void pid_table_grow(struct symbolizer *s)
{
	size_t old_buckets = s->pid_buckets, i;
	struct pid_entry **old = s->pids, **n;

	n = calloc(2 * old_buckets, sizeof(*n));
	if (!n)
		return;		/* longer chains, still correct */
	s->pids = n;
	s->pid_buckets = 2 * old_buckets;
	for (i = 0; i < old_buckets; i++) {
		struct pid_entry *e = old[i], *next;

		for (; e; e = next) {
			size_t h = pid_hash(s, e->pid);

			next = e->hnext;
			e->hnext = n[h];
			n[h] = e;
		}
	}
	free(old);
}

static struct pid_entry *pid_get(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *e = pid_find(s, pid);
	size_t h;

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->pid = pid;
	if (s->nr_pids >= s->pid_buckets)
		pid_table_grow(s);
	h = pid_hash(s, pid);
	e->hnext = s->pids[h];
	s->pids[h] = e;
	s->nr_pids++;
	return e;
}

static void pid_remove(struct symbolizer *s, struct pid_entry *e)
{
	struct pid_entry **pp = &s->pids[pid_hash(s, e->pid)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	s->nr_pids--;
	map_set__put(s, e->cur);
	map_set__put(s, e->prev);
	free(e);
}

/* a new process under an old pid: forget the old one */
static void pid_revive(struct symbolizer *s, struct pid_entry *e)
{
	if (!e->exited)
		return;
	e->exited = false;
	e->refresh_ns = 0;
	map_set__put(s, e->prev);
	e->prev = NULL;
}

/* drops the oldest kept exited pid, if it has not been reused since */
static void exited_pop(struct symbolizer *s)
{
	struct exited_pid x = s->exited[s->exited_head];
	struct pid_entry *e;

	s->exited_head = (s->exited_head + 1) % s->keep_exited;
	s->nr_exited--;
	e = pid_find(s, x.pid);
	if (e && e->exited && e->exit_seq == x.seq)
		pid_remove(s, e);
}

/* ---- API ---------------------------------------------------------------- */

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid_buckets = 256;
	s->pids = calloc(s->pid_buckets, sizeof(*s->pids));
	s->keep_exited = SYMBOLIZER_KEEP_EXITED;
	s->exited = calloc(s->keep_exited, sizeof(*s->exited));
	s->debug_dir = strdup(DEBUG_DIR);
	if (!s->pids || !s->exited || !s->debug_dir) {
		free(s->pids);
		free(s->exited);
		free(s->debug_dir);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void symbolizer__delete(struct symbolizer *s)
{
	struct module *mod, *next;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->pid_buckets; i++) {
		while (s->pids[i])
			pid_remove(s, s->pids[i]);
	}
	for (mod = s->modules; mod; mod = next) {
		next = mod->next;
		module_free(mod);
	}
	free(s->pids);
	free(s->exited);
	free(s->debug_dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int symbolizer__set_debug_dir(struct symbolizer *s, const char *dir)
{
	char *copy = NULL;

	if (!s)
		return -EINVAL;
	if (dir && !(copy = strdup(dir)))
		return -ENOMEM;
	free(s->debug_dir);
	s->debug_dir = copy;
	return 0;
}

static int snapshot_pid(struct symbolizer *s, pid_t pid, enum snap_mode mode)
{
	struct map_set *set, *merged;
	struct raw_map *raw = NULL;
	struct pid_entry *e;
	size_t nr = 0;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = read_maps(pid, &raw, &nr);
	if (err)
		return err;
	if (!nr) {
		/* a zombie, or exiting: keep what we had */
		raw_maps_free(raw, nr);
		return -ESRCH;
	}
	pthread_mutex_lock(&s->lock);
	set = map_set__from_raw(s, pid, raw, nr);
	e = set ? pid_get(s, pid) : NULL;
	if (!e) {
		map_set__put(s, set);
		err = -ENOMEM;
		goto out;
	}
	switch (mode) {
	case SNAP_REPLACE:
		pid_revive(s, e);
		map_set__put(s, e->cur);
		e->cur = set;
		break;
	case SNAP_EXEC:
		pid_revive(s, e);
		map_set__put(s, e->prev);
		e->prev = e->cur;
		e->cur = set;
		break;
	case SNAP_MERGE:
		merged = map_set__merge(s, set, e->cur);
		map_set__put(s, set);
		if (!merged) {
			err = -ENOMEM;
			goto out;
		}
		map_set__put(s, e->cur);
		e->cur = merged;
		s->refreshes++;
		break;
	}
out:
	pthread_mutex_unlock(&s->lock);
	raw_maps_free(raw, nr);
	return err;
}

int symbolizer__snapshot(struct symbolizer *s, pid_t pid)
{
	return snapshot_pid(s, pid, SNAP_REPLACE);
}

int symbolizer__exec(struct symbolizer *s, pid_t pid)
{
	return snapshot_pid(s, pid, SNAP_EXEC);
}

int symbolizer__fork(struct symbolizer *s, pid_t parent, pid_t child)
{
	struct pid_entry *pe, *ce;
	int err = 0;

	if (!s || parent <= 0 || child <= 0 || parent == child)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	pe = pid_find(s, parent);
	if (!pe || !pe->cur) {
		err = -ESRCH;
		goto out;
	}
	ce = pid_get(s, child);
	if (!ce) {
		err = -ENOMEM;
		goto out;
	}
	pid_revive(s, ce);
	map_set__put(s, ce->prev);
	ce->prev = NULL;
	map_set__put(s, ce->cur);
	ce->cur = map_set__get(pe->cur);
out:
	pthread_mutex_unlock(&s->lock);
	return err;
}

void symbolizer__exit(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *e;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	e = pid_find(s, pid);
	if (!e || e->exited)
		goto out;
	e->exited = true;
	e->exit_seq = ++s->exit_seq;
	if (!s->keep_exited) {
		pid_remove(s, e);
		goto out;
	}
	if (s->nr_exited == s->keep_exited)
		exited_pop(s);
	s->exited[(s->exited_head + s->nr_exited) % s->keep_exited] =
		(struct exited_pid){ .pid = pid, .seq = e->exit_seq };
	s->nr_exited++;
out:
	pthread_mutex_unlock(&s->lock);
}

void symbolizer__set_keep_exited(struct symbolizer *s, unsigned int n)
{
	struct exited_pid *ring;
	size_t i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	while (s->nr_exited > n)
		exited_pop(s);
	ring = calloc(n ? n : 1, sizeof(*ring));
	if (ring) {
		for (i = 0; i < s->nr_exited; i++)
			ring[i] = s->exited[(s->exited_head + i) % s->keep_exited];
		free(s->exited);
		s->exited = ring;
		s->exited_head = 0;
		s->keep_exited = n;
	}
	pthread_mutex_unlock(&s->lock);
}

int symbolizer__add_mapping(struct symbolizer *s, pid_t pid,
			    const struct sym_mapping *m)
{
	struct map_set *one, *merged;
	struct pid_entry *e;
	struct raw_map r;
	int err = 0;

	if (!s || pid <= 0 || !m || !m->path || m->end <= m->start)
		return -EINVAL;
	r.start = m->start;
	r.end = m->end;
	r.pgoff = m->pgoff;
	r.dev = m->path[0] == '/' ? makedev(m->dev_major, m->dev_minor) : 0;
	r.ino = m->path[0] == '/' ? m->ino : 0;
	r.path = (char *)m->path;
	pthread_mutex_lock(&s->lock);
	one = map_set__from_raw(s, pid, &r, 1);
	e = one ? pid_get(s, pid) : NULL;
	merged = e ? map_set__merge(s, one, e->cur) : NULL;
	if (merged) {
		map_set__put(s, e->cur);
		e->cur = merged;
	} else {
		err = -ENOMEM;
	}
	map_set__put(s, one);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/*
 * The mapping of pid covering ip, copied out under s->lock; use_prev: in
 * the image before the last exec.  Says whether a miss may re-read the maps.
 */
enum refresh_policy {
	REFRESH_ON_MISS,	/* re-read /proc/<pid>/maps at most once per ms */
	REFRESH_UNKNOWN_PID,	/* only for a pid not seen yet */
};

static bool map_lookup(struct symbolizer *s, pid_t pid, uint64_t ip, bool use_prev,
		       struct map *out, bool *may_refresh, enum refresh_policy policy)
{
	const struct map *m = NULL;
	struct pid_entry *e;
	uint64_t now;

	pthread_mutex_lock(&s->lock);
	e = pid_find(s, pid);
	if (e)
		m = map_set__find(use_prev ? e->prev : e->cur, ip);
	if (m)
		*out = *m;
	if (!m && may_refresh) {
		now = now_ns();
		if (e)
			*may_refresh = policy == REFRESH_ON_MISS && !e->exited &&
				       now - e->refresh_ns >= REFRESH_INTERVAL_NS;
		else	/* the frames of one stack of a process that is gone: try once */
			*may_refresh = pid != s->gone_pid ||
				       now - s->gone_ns >= REFRESH_INTERVAL_NS;
		if (e && *may_refresh)
			e->refresh_ns = now;
	}
	pthread_mutex_unlock(&s->lock);
	return m != NULL;
}

/*
 * The mapping of pid that holds ip: as last read, else read again (mapped
 * since the snapshot by ld.so or dlopen, or never snapshotted), else the one
 * before the last exec (a stack taken before it).
 */
static bool find_map(struct symbolizer *s, pid_t pid, uint64_t ip, struct map *m,
		     enum refresh_policy policy)
{
	bool refresh, hit = false;

	if (map_lookup(s, pid, ip, false, m, &refresh, policy))
		return true;
	if (refresh && pid > 0) {
		if (!snapshot_pid(s, pid, SNAP_MERGE)) {
			hit = map_lookup(s, pid, ip, false, m, NULL, policy);
		} else {
			pthread_mutex_lock(&s->lock);
			s->gone_pid = pid;
			s->gone_ns = now_ns();
			pthread_mutex_unlock(&s->lock);
		}
	}
	return hit || map_lookup(s, pid, ip, true, m, NULL, policy);
}

static int resolve(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
		   struct sym_frame *out)
{
	const struct symbol *sym;
	uint64_t vaddr, addr;
	struct module *mod;
	struct map m;

	if (!out)
		return -EINVAL;
	out->module = SYM_UNKNOWN;
	out->symbol = SYM_UNKNOWN;
	out->offset = ip;
	out->file = NULL;
	out->line = 0;
	if (!s)
		return -EINVAL;
	if (!find_map(s, pid, ip, &m, REFRESH_ON_MISS))
		return 0;
	mod = m.mod;
	out->module = mod->path;
	pthread_mutex_lock(&mod->lock);
	if (!mod->loaded)
		module_load(mod, s->debug_dir);
	vaddr = module_vaddr(mod, ip, ip - m.start + m.pgoff);
	out->offset = vaddr;
	addr = ret_addr && vaddr ? vaddr - 1 : vaddr;
	sym = module_find_symbol(mod, addr);
	if (sym) {
		out->symbol = sym->name;
		out->offset = vaddr - sym->start;
	}
	if (mod->nr_cus)
		module_find_line(mod, addr, out);
	pthread_mutex_unlock(&mod->lock);
	return 0;
}

int symbolizer__resolve(struct symbolizer *s, pid_t pid, uint64_t ip,
			struct sym_frame *out)
{
	return resolve(s, pid, ip, true, out);
}

int symbolizer__resolve_pc(struct symbolizer *s, pid_t pid, uint64_t ip,
			   struct sym_frame *out)
{
	return resolve(s, pid, ip, false, out);
}

/* ---- unwind rules ------------------------------------------------------- */

/* a register's rule as libdw gives it, in the few forms compilers emit */
static int register_rule(Dwarf_Frame *frame, int regno, uint8_t *how, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return -EINVAL;
	*off = 0;
	if (!nops) {
		*how = ops ? UNW_UNDEFINED : UNW_SAME;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -EOPNOTSUPP;
	*how = UNW_AT_CFA;
	if (nops > 1 && ops[nops - 1].atom == DW_OP_stack_value) {
		*how = UNW_VAL_CFA;
		nops--;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		*off = (int64_t)ops[1].number;
	else if (nops != 1)
		return -EOPNOTSUPP;
	return 0;
}

static int cfi_rule(Dwarf_CFI *cfi, uint64_t addr, struct unwind_rule *out)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	int err = -EOPNOTSUPP;
	unsigned int reg;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame))
		return -ENOENT;
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		goto out;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		out->cfa_off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		out->cfa_off = (int64_t)ops[0].number;
	} else {
		goto out;
	}
	if (reg != UNW_REG_RSP && reg != UNW_REG_RBP)
		goto out;
	out->cfa_reg = reg;
	err = register_rule(frame, UNW_REG_RA, &out->ra_how, &out->ra_off);
	if (!err)
		err = register_rule(frame, UNW_REG_RBP, &out->rbp_how, &out->rbp_off);
out:
	free(frame);
	return err;
}

static void module_read_cfi(struct module *mod)
{
	mod->cfi_read = true;
	if (mod->elf)
		mod->eh_cfi = dwarf_getcfi_elf(mod->elf);
	if (mod->dwarf)
		mod->dbg_cfi = dwarf_getcfi(mod->dwarf);	/* owned by mod->dwarf */
}

static int rules_grow(struct module *mod)
{
	size_t cap = mod->rules_cap ? 2 * mod->rules_cap : 256, i, j;
	struct rule_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < mod->rules_cap; i++) {
		if (!mod->rules[i].addr)
			continue;
		for (j = (mod->rules[i].addr * 0x9e3779b97f4a7c15ULL) >> 20 & (cap - 1);
		     slots[j].addr; j = (j + 1) & (cap - 1))
			;
		slots[j] = mod->rules[i];
	}
	free(mod->rules);
	mod->rules = slots;
	mod->rules_cap = cap;
	return 0;
}

/* the rule at a link-time address, computed once; under mod->lock */
static int module_rule(struct module *mod, uint64_t addr, struct unwind_rule *out)
{
	struct rule_slot *slot;
	size_t i;
	int err;

	if (!mod->cfi_read)
		module_read_cfi(mod);
	if ((mod->nr_rules + 1) * 2 > mod->rules_cap && rules_grow(mod))
		return -ENOMEM;
	for (i = ((addr + 1) * 0x9e3779b97f4a7c15ULL) >> 20 & (mod->rules_cap - 1);
	     mod->rules[i].addr; i = (i + 1) & (mod->rules_cap - 1)) {
		slot = &mod->rules[i];
		if (slot->addr == addr + 1) {
			if (!slot->err)
				*out = slot->rule;
			return slot->err;
		}
	}
	slot = &mod->rules[i];
	err = cfi_rule(mod->eh_cfi, addr, &slot->rule);
	if (err == -ENOENT)
		err = cfi_rule(mod->dbg_cfi, addr, &slot->rule);
	slot->addr = addr + 1;
	slot->err = err;
	mod->nr_rules++;
	if (!err)
		*out = slot->rule;
	return err;
}

int symbolizer__unwind_rule(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
			    struct unwind_rule *out)
{
	struct module *mod;
	uint64_t vaddr;
	struct map m;
	int err;

	/*
	 * Every file mapping of a tracked process is known before its code
	 * runs (BPF stops it at each new one): a miss of a known pid is JIT
	 * code or a bad frame, not worth a read of /proc per frame.
	 */
	if (!find_map(s, pid, ip, &m, REFRESH_UNKNOWN_PID))
		return -ENOENT;
	mod = m.mod;
	pthread_mutex_lock(&mod->lock);
	if (!mod->loaded)
		module_load(mod, s->debug_dir);
	vaddr = module_vaddr(mod, ip, ip - m.start + m.pgoff);
	err = module_rule(mod, ret_addr && vaddr ? vaddr - 1 : vaddr, out);
	pthread_mutex_unlock(&mod->lock);
	return err;
}

void symbolizer__stats(struct symbolizer *s, struct symbolizer_stats *st)
{
	struct module *mod;

	memset(st, 0, sizeof(*st));
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (mod = s->modules; mod; mod = mod->next) {
		st->modules++;
		/* one being loaded is not counted: never wait for it here */
		if (pthread_mutex_trylock(&mod->lock))
			continue;
		if (mod->loaded) {
			st->loaded++;
			st->symbols += mod->nr_syms;
			st->cu_ranges += mod->nr_cus;
		}
		pthread_mutex_unlock(&mod->lock);
	}
	st->pids = s->nr_pids;
	st->map_sets = s->nr_sets;
	st->refreshes = s->refreshes;
	pthread_mutex_unlock(&s->lock);
}
