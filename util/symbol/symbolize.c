// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer; symbolize.h describes the model.  Its parts, by file:
 *
 *   symbolize.c     the pid table (pid -> current mapping set, and the set
 *                   before the last exec), the module table, the API
 *   map-set.c       mapping sets: sorted, immutable, reference counted
 *   proc-maps.c     the reader of /proc/<pid>/maps
 *   sym-module.c    one per (dev, ino): the Elf (mapped when first seen),
 *                   then at the first resolve its segments, symbols, DWARF
 *   debuginfo.c     separate debug files: build id, debuglink, debuginfod
 *   elf-syms.c      ELF symbol tables
 *   dwarf-lines.c   source lines and inlined calls
 *   cfi-rules.c     unwind rules from the CFI
 *
 * Locking: s->lock guards the pid table, the module table and the sets;
 * mod->lock guards what sym_module__load() fills in and the libdw handles.
 * The order is s->lock, then mod->lock; resolve never holds both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/symbol/debuginfo.h"
#include "util/symbol/map-set.h"
#include "util/proc-maps.h"
#include "util/symbol/dwarf-cache.h"
#include "util/symbol/sym-module.h"
#include "util/symbol/symbolize.h"
#include "util/symbol/unwind.h"
#include "util/usage.h"
#include "util/util.h"

#define MODULE_BUCKETS		1024
#define REFRESH_INTERVAL_NS	NSEC_PER_MSEC

struct pid_entry {
	struct pid_entry *hnext;
	pid_t pid;
	bool exited;
	uint64_t exit_seq;
	uint64_t refresh_ns;	/* last re-read of /proc/<pid>/maps on a miss */
	uint64_t gen;		/* of cur and prev: a new one, never used before, at each change */
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
	struct sym_module *mod_hash[MODULE_BUCKETS];
	struct sym_module *modules;
	size_t nr_modules;
	struct exited_pid *exited;	/* FIFO ring of the kept exited pids */
	size_t exited_head, nr_exited, keep_exited;
	uint64_t exit_seq;
	uint64_t refreshes;
	uint64_t gens;		/* the last pid_entry.gen given */
	size_t nr_sets;
	struct debuginfo *debuginfo;
	int cache_dir;		/* of dwarf_cache files, -1: none */
	pid_t gone_pid;		/* the last pid whose maps could not be read */
	uint64_t gone_ns;
};

enum snap_mode {
	SNAP_REPLACE,
	SNAP_EXEC,	/* the current set becomes prev */
	SNAP_MERGE,	/* keep the current mappings that the new ones do not overlap */
};

/* ---- modules ------------------------------------------------------------ */

static size_t module_hash(dev_t dev, uint64_t ino)
{
	uint64_t h = (ino ^ ((uint64_t)dev << 32) ^ dev) * 0x9e3779b97f4a7c15ULL;

	return h >> 54;		/* MODULE_BUCKETS = 1 << 10 */
}

/*
 * The module of a mapping, created (and its file opened) when first seen;
 * under s->lock.  NULL only when out of memory.
 */
static struct sym_module *module_get(struct symbolizer *s, pid_t pid,
				     const struct sym_file_map *r)
{
	size_t h = module_hash(r->dev, r->ino);
	struct sym_module *mod;

	for (mod = s->mod_hash[h]; mod; mod = mod->hnext) {
		if (mod->dev == r->dev && mod->ino == r->ino) {
			sym_module__reopen(mod, pid, r);
			return mod;
		}
	}
	mod = sym_module__new(pid, r);
	if (!mod)
		return NULL;
	mod->hnext = s->mod_hash[h];
	s->mod_hash[h] = mod;
	mod->next = s->modules;
	s->modules = mod;
	s->nr_modules++;
	return mod;
}


/* ---- mapping sets ------------------------------------------------------- */

/* under s->lock; NULL when out of memory */
static struct map_set *map_set__from_raw(struct symbolizer *s, pid_t pid,
					 const struct sym_file_map *raw, size_t nr)
{
	struct map_set *set = map_set__new(nr, &s->nr_sets);
	size_t i;

	if (!set)
		return NULL;
	for (i = 0; i < nr; i++) {
		struct map *m = &set->maps[i];

		m->mod = module_get(s, pid, &raw[i]);
		if (!m->mod) {
			map_set__put(set, &s->nr_sets);
			return NULL;
		}
		m->start = raw[i].start;
		m->end = raw[i].end;
		m->pgoff = raw[i].pgoff;
	}
	map_set__sort(set);
	return set;
}


/* ---- /proc/<pid>/maps --------------------------------------------------- */

/* the mappings as the modules take them: the paths stay the reader's */
static struct sym_file_map *raw_maps_of(const struct proc_exec_maps *maps)
{
	struct sym_file_map *raw = calloc(maps->n ? maps->n : 1, sizeof(*raw));
	size_t i;

	if (!raw)
		return NULL;
	for (i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->v[i];
		bool file = m->path[0] == '/';

		raw[i].path = m->path;
		raw[i].start = m->start;
		raw[i].end = m->end;
		raw[i].pgoff = m->pgoff;
		raw[i].dev = file ? makedev(m->dev_major, m->dev_minor) : 0;
		raw[i].ino = file ? m->ino : 0;
	}
	return raw;
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
	map_set__put(e->cur, &s->nr_sets);
	map_set__put(e->prev, &s->nr_sets);
	free(e);
}

/*
 * Every change of what cur holds goes through here: a generation never
 * given before, so that what was resolved in the old set is not taken for
 * the new one's (the resolver keeps addresses by generation).
 */
static void pid_set_cur(struct symbolizer *s, struct pid_entry *e, struct map_set *set)
{
	map_set__put(e->cur, &s->nr_sets);
	e->cur = set;
	e->gen = ++s->gens;
}

/* a new process under an old pid: forget the old one */
static void pid_revive(struct symbolizer *s, struct pid_entry *e)
{
	if (!e->exited)
		return;
	e->exited = false;
	e->refresh_ns = 0;
	map_set__put(e->prev, &s->nr_sets);
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
	const char *dirs;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pid_buckets = 256;
	s->pids = calloc(s->pid_buckets, sizeof(*s->pids));
	s->keep_exited = SYMBOLIZER_KEEP_EXITED;
	s->cache_dir = -1;
	s->exited = calloc(s->keep_exited, sizeof(*s->exited));
	dirs = getenv("MEMTRACK_DEBUG_DIRS");
	s->debuginfo = debuginfo__new(dirs ? dirs : DEBUGINFO_DEFAULT_DIRS);
	if (!s->pids || !s->exited || !s->debuginfo) {
		free(s->pids);
		free(s->exited);
		debuginfo__delete(s->debuginfo);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void symbolizer__delete(struct symbolizer *s)
{
	struct sym_module *mod, *next;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->pid_buckets; i++) {
		while (s->pids[i])
			pid_remove(s, s->pids[i]);
	}
	for (mod = s->modules; mod; mod = next) {
		next = mod->next;
		sym_module__delete(mod);
	}
	free(s->pids);
	free(s->exited);
	debuginfo__delete(s->debuginfo);
	if (s->cache_dir >= 0)
		close(s->cache_dir);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void symbolizer__save_caches(struct symbolizer *s)
{
	struct sym_module *mod;

	for (mod = s ? s->modules : NULL; mod; mod = mod->next)
		dwarf_cache__save(mod->dcache);
}

void symbolizer__set_cache_dir(struct symbolizer *s, int dir)
{
	if (s->cache_dir >= 0)
		close(s->cache_dir);
	s->cache_dir = dir;
}

int symbolizer__set_debug_dir(struct symbolizer *s, const char *dirs)
{
	struct debuginfo *d;

	if (!s)
		return -EINVAL;
	d = debuginfo__new(dirs);
	if (!d)
		return -ENOMEM;
	debuginfo__delete(s->debuginfo);
	s->debuginfo = d;
	return 0;
}

static int snapshot_maps(struct symbolizer *s, pid_t pid, const struct proc_exec_maps *maps,
			 enum snap_mode mode)
{
	struct map_set *set, *merged;
	struct sym_file_map *raw;
	struct pid_entry *e;
	size_t nr = maps->n;
	int err = 0;

	if (!nr)
		return -ESRCH;	/* a zombie, or exiting: keep what we had */
	raw = raw_maps_of(maps);
	if (!raw)
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	set = map_set__from_raw(s, pid, raw, nr);
	e = set ? pid_get(s, pid) : NULL;
	if (!e) {
		map_set__put(set, &s->nr_sets);
		err = -ENOMEM;
		goto out;
	}
	switch (mode) {
	case SNAP_REPLACE:
		pid_revive(s, e);
		pid_set_cur(s, e, set);
		break;
	case SNAP_EXEC:
		pid_revive(s, e);
		map_set__put(e->prev, &s->nr_sets);
		e->prev = map_set__get(e->cur);
		pid_set_cur(s, e, set);
		break;
	case SNAP_MERGE:
		merged = map_set__merge(set, e->cur, &s->nr_sets);
		map_set__put(set, &s->nr_sets);
		if (!merged) {
			err = -ENOMEM;
			goto out;
		}
		pid_set_cur(s, e, merged);
		s->refreshes++;
		break;
	}
out:
	pthread_mutex_unlock(&s->lock);
	free(raw);
	return err;
}

/* the executable file mappings of pid, and [vdso], read without any lock */
static int snapshot_pid(struct symbolizer *s, pid_t pid, enum snap_mode mode)
{
	struct proc_exec_maps maps;
	int err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = proc_exec_maps__read(&maps, pid);
	if (err)
		return err;
	err = snapshot_maps(s, pid, &maps, mode);
	proc_exec_maps__free(&maps);
	return err;
}

int symbolizer__snapshot(struct symbolizer *s, pid_t pid)
{
	return snapshot_pid(s, pid, SNAP_REPLACE);
}

int symbolizer__snapshot_maps(struct symbolizer *s, pid_t pid, const struct proc_exec_maps *maps)
{
	if (!s || pid <= 0)
		return -EINVAL;
	return snapshot_maps(s, pid, maps, SNAP_REPLACE);
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
	map_set__put(ce->prev, &s->nr_sets);
	ce->prev = NULL;
	pid_set_cur(s, ce, map_set__get(pe->cur));
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
	struct sym_file_map r;
	int err = 0;

	if (!s || pid <= 0 || !m || !m->path || m->end <= m->start)
		return -EINVAL;
	r.start = m->start;
	r.end = m->end;
	r.pgoff = m->pgoff;
	r.dev = m->path[0] == '/' ? makedev(m->dev_major, m->dev_minor) : 0;
	r.ino = m->path[0] == '/' ? m->ino : 0;
	r.path = m->path;
	pthread_mutex_lock(&s->lock);
	one = map_set__from_raw(s, pid, &r, 1);
	e = one ? pid_get(s, pid) : NULL;
	merged = e ? map_set__merge(one, e->cur, &s->nr_sets) : NULL;
	if (merged)
		pid_set_cur(s, e, merged);
	else
		err = -ENOMEM;
	map_set__put(one, &s->nr_sets);
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
		       struct map *out, uint64_t *gen, bool *may_refresh,
		       enum refresh_policy policy)
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
	if (gen)
		*gen = m && !use_prev ? e->gen : 0;
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
 * before the last exec (a stack taken before it).  gen, if not NULL: the
 * generation of the set it was found in, 0 for the one before the exec.
 */
static bool find_map(struct symbolizer *s, pid_t pid, uint64_t ip, struct map *m,
		     uint64_t *gen, enum refresh_policy policy)
{
	bool refresh, hit = false;

	if (map_lookup(s, pid, ip, false, m, gen, &refresh, policy))
		return true;
	if (refresh && pid > 0) {
		if (!snapshot_pid(s, pid, SNAP_MERGE)) {
			hit = map_lookup(s, pid, ip, false, m, gen, NULL, policy);
		} else {
			pthread_mutex_lock(&s->lock);
			s->gone_pid = pid;
			s->gone_ns = now_ns();
			pthread_mutex_unlock(&s->lock);
		}
	}
	return hit || map_lookup(s, pid, ip, true, m, gen, NULL, policy);
}

static int resolve(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
		   struct sym_frame *out, int max, struct sym_map_info *info)
{
	struct sym_module *mod;
	uint64_t vaddr, foff, gen;
	struct map m;
	int n;

	if (!out || max < 1)
		return -EINVAL;
	out[0] = (struct sym_frame){ .module = SYM_UNKNOWN, .symbol = SYM_UNKNOWN,
				     .offset = ip };
	if (info)
		*info = (struct sym_map_info){ 0 };
	if (!s)
		return -EINVAL;
	if (!find_map(s, pid, ip, &m, &gen, REFRESH_ON_MISS))
		return 1;
	mod = m.mod;
	foff = ip - m.start + m.pgoff;
	pthread_mutex_lock(&mod->lock);
	if (!mod->loaded)
		sym_module__load(mod, s->debuginfo, s->cache_dir);
	vaddr = sym_module__vaddr(mod, ip, foff);
	n = sym_module__frames(mod, vaddr, ret_addr && vaddr ? vaddr - 1 : vaddr, out, max);
	pthread_mutex_unlock(&mod->lock);
	/* no symbol: the place in the file is what one can look up (objdump, addr2line) */
	if (!strcmp(out[n - 1].symbol, SYM_UNKNOWN))
		out[n - 1].offset = foff;
	if (info)
		*info = (struct sym_map_info){
			.module = mod->path, .build_id = mod->build_id[0] ? mod->build_id : NULL,
			.start = m.start, .end = m.end, .pgoff = m.pgoff, .maps_gen = gen,
		};
	return n;
}

uint64_t symbolizer__maps_gen(struct symbolizer *s, pid_t pid)
{
	struct pid_entry *e;
	uint64_t gen;

	pthread_mutex_lock(&s->lock);
	e = pid_find(s, pid);
	gen = e && e->cur ? e->gen : 0;
	pthread_mutex_unlock(&s->lock);
	return gen;
}

int symbolizer__resolve_frames(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
			       struct sym_frame *out, int max, struct sym_map_info *info)
{
	return resolve(s, pid, ip, ret_addr, out, max, info);
}

/* the function's own frame: the last of ip's frames */
static int resolve_one(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
		       struct sym_frame *out)
{
	struct sym_frame frames[SYM_MAX_FRAMES];
	int n;

	if (!out)
		return -EINVAL;
	n = resolve(s, pid, ip, ret_addr, frames, SYM_MAX_FRAMES, NULL);
	*out = frames[n < 0 ? 0 : n - 1];
	return n < 0 ? n : 0;
}

int symbolizer__resolve(struct symbolizer *s, pid_t pid, uint64_t ip,
			struct sym_frame *out)
{
	return resolve_one(s, pid, ip, true, out);
}

int symbolizer__resolve_pc(struct symbolizer *s, pid_t pid, uint64_t ip,
			   struct sym_frame *out)
{
	return resolve_one(s, pid, ip, false, out);
}

/* ---- unwind rules ------------------------------------------------------- */

/* the module's DWARF, read (symbols, lines, debug file) only when .eh_frame fails */
struct dwarf_ctx {
	struct sym_module *mod;
	struct debuginfo *debuginfo;
	int cache_dir;
};

static __thread struct dwarf_ctx cfi_dwarf_ctx;

static Dwarf *module_dwarf(void *arg)
{
	struct dwarf_ctx *c = arg;

	if (!c->mod->loaded)
		sym_module__load(c->mod, c->debuginfo, c->cache_dir);
	return sym_module__dwarf(c->mod);
}

int symbolizer__unwind_rule(struct symbolizer *s, pid_t pid, uint64_t ip, bool ret_addr,
			    struct unwind_rule *out)
{
	struct sym_module *mod;
	uint64_t vaddr;
	struct map m;
	int err;

	/*
	 * Every file mapping of a tracked process is known before its code
	 * runs (BPF stops it at each new one): a miss of a known pid is JIT
	 * code or a bad frame, not worth a read of /proc per frame.
	 */
	if (!find_map(s, pid, ip, &m, NULL, REFRESH_UNKNOWN_PID))
		return -ENOENT;
	mod = m.mod;
	pthread_mutex_lock(&mod->lock);
	if (!sym_module__prepare(mod)) {
		pthread_mutex_unlock(&mod->lock);
		return -ENOENT;
	}
	vaddr = sym_module__vaddr(mod, ip, ip - m.start + m.pgoff);
	cfi_dwarf_ctx.mod = mod;
	cfi_dwarf_ctx.debuginfo = s->debuginfo;
	cfi_dwarf_ctx.cache_dir = s->cache_dir;
	err = cfi_rules__find(&mod->cfi, mod->elf, module_dwarf, &cfi_dwarf_ctx,
			      ret_addr && vaddr ? vaddr - 1 : vaddr, out);
	pthread_mutex_unlock(&mod->lock);
	return err;
}

void symbolizer__stats(struct symbolizer *s, struct symbolizer_stats *st)
{
	struct debuginfo_stats dst;
	struct sym_module *mod;

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
			st->symbols += mod->symtab.nr;
			st->cu_ranges += mod->lines.nr_cus;
			st->dwarf_opened += mod->dwarf != NULL;
			st->dwarf_cached += dwarf_cache__loaded(mod->dcache) > 0;
			st->cache_addrs += dwarf_cache__loaded(mod->dcache);
		}
		pthread_mutex_unlock(&mod->lock);
	}
	st->pids = s->nr_pids;
	st->map_sets = s->nr_sets;
	st->refreshes = s->refreshes;
	pthread_mutex_unlock(&s->lock);
	debuginfo__stats(s->debuginfo, &dst);
	st->debug_build_id = dst.build_id;
	st->debug_debuglink = dst.debuglink;
	st->debug_debuginfod = dst.debuginfod;
	st->debuginfod_ns = dst.debuginfod_ns;
}
