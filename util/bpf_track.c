// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/memtrack.h"	/* before the skeleton: its rodata holds our types */
#include "bpf/memtrack.skel.h"
#include "bpf_kernel_offsets.h"
#include "bpf_track.h"
#include "allocators.h"
#include "elf-syms.h"
#include "pressure.h"
#include "proc-maps.h"
#include "uprobe-multi.h"
#include "usage.h"
#include "util.h"

struct inspected_file {
	struct mt_file_id id;
	enum mt_file_kind kind;
};

struct bpf_track {
	struct memtrack_bpf *skel;
	int *links;
	int nlinks;
	size_t links_cap;
	struct inspected_file *inspected;	/* files already looked at, attached or not */
	size_t ninspected, inspected_cap;
	struct mt_file_id shim;		/* the preload shim: never probed */
	unsigned int attached_files;
	unsigned int probe_failures;
	int last_probe_error;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level != LIBBPF_DEBUG && verbose < 1)
		return 0;	/* our own message says what failed */
	return vfprintf(stderr, fmt, ap);
}

int bpf_track__open(struct bpf_track **out, const struct bpf_track_opts *opts)
{
	struct bpf_track *t = calloc(1, sizeof(*t));
	struct memtrack_bpf *skel;
	int err;

	if (!t)
		return -ENOMEM;
	libbpf_set_print(libbpf_print);
	skel = memtrack_bpf__open();
	if (!skel) {
		err = -errno;
		goto fail;
	}
	t->skel = skel;
	err = kernel_offsets__read((struct mt_kernel_offsets *)&skel->rodata->koff);
	if (err)
		goto fail;
	bpf_map__set_max_entries(skel->maps.events, opts->ring_size[MT_RING_EVENTS]);
	bpf_map__set_max_entries(skel->maps.stacks, opts->ring_size[MT_RING_STACKS]);
	/* an LRU map is allocated whole at load: only fp dedupes stacks in BPF */
	if (opts->call_graph != MT_CALL_GRAPH_FP)
		bpf_map__set_max_entries(skel->maps.stack_ids, 1);
	skel->rodata->events_watermark =
		opts->ring_size[MT_RING_EVENTS] * opts->watermark_pct / 100;
	skel->rodata->stacks_watermark =
		opts->ring_size[MT_RING_STACKS] * opts->watermark_pct / 100;
	skel->rodata->call_graph = opts->call_graph;
	if (opts->stack_copy_size)
		skel->rodata->stack_copy_size = opts->stack_copy_size;
	skel->rodata->discover_allocators = true;
	skel->rodata->decide_at_exec = opts->decide_at_exec;
	skel->rodata->shim_file = opts->shim_file;
	t->shim = opts->shim_file;
	bpf_program__set_expected_attach_type(skel->progs.alloc_enter,
					      UPROBE_MULTI_ATTACH_TYPE);
	bpf_program__set_expected_attach_type(skel->progs.alloc_exit,
					      UPROBE_MULTI_ATTACH_TYPE);
	bpf_program__set_autoattach(skel->progs.alloc_enter, false);
	bpf_program__set_autoattach(skel->progs.alloc_exit, false);

	err = memtrack_bpf__load(skel);
	if (err)
		goto fail;
	err = memtrack_bpf__attach(skel);
	if (err)
		goto fail;
	*out = t;
	return 0;
fail:
	bpf_track__close(t);
	return err < 0 ? err : -EINVAL;
}

static int add_link(struct bpf_track *t, int fd)
{
	if (grow_array((void **)&t->links, &t->links_cap, t->nlinks + 1, sizeof(*t->links)))
		return -ENOMEM;
	t->links[t->nlinks++] = fd;
	return 0;
}

/* the offsets to probe: one per address, under the first name (aliases) */
static unsigned int unique_offsets(const struct elf_sym_req *reqs, bool returns,
				   uint64_t flags, uint64_t *offsets, uint64_t *cookies)
{
	unsigned int cnt = 0, i, j;

	for (i = 0; i < nr_alloc_symbols; i++) {
		bool seen = false;

		if (!reqs[i].offset)
			continue;
		for (j = 0; j < cnt; j++)
			seen |= offsets[j] == reqs[i].offset;
		if (seen)
			continue;
		offsets[cnt] = reqs[i].offset;
		cookies[cnt++] = alloc_symbols[i].shape | flags;
	}
	if (!returns)
		return cnt;
	/* the return probes: every shape but the leaf frees */
	for (i = j = 0; i < cnt; i++) {
		if (!alloc_shape__has_return(MT_COOKIE_SHAPE(cookies[i])))
			continue;
		offsets[j] = offsets[i];
		cookies[j++] = cookies[i];
	}
	return j;
}

static int link_binary(struct bpf_track *t, const char *path,
		       const struct elf_sym_req *reqs, bool returns, uint64_t flags)
{
	uint64_t offsets[nr_alloc_symbols], cookies[nr_alloc_symbols];
	struct bpf_program *prog = returns ? t->skel->progs.alloc_exit :
					     t->skel->progs.alloc_enter;
	unsigned int cnt = unique_offsets(reqs, returns, flags, offsets, cookies);
	int fd, err;

	if (!cnt)
		return 0;
	fd = uprobe_multi__link(bpf_program__fd(prog), path, offsets, cookies, cnt, returns);
	if (fd < 0)
		return fd;
	err = add_link(t, fd);
	if (err)
		close(fd);
	return err ? err : (int)cnt;
}

/* probes every allocator function that path defines; returns how many */
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
 * is foreign to the shim, and probed for every tracked process.
 */
static bool is_foreign_allocator(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	return strncmp(base, "libc.so", 7) && strncmp(base, "libstdc++.so", 12);
}

static int attach_binary(struct bpf_track *t, const char *path, const char *name)
{
	struct elf_sym_req reqs[nr_alloc_symbols];
	uint64_t flags = is_foreign_allocator(name) ? MT_COOKIE_FOREIGN : 0;
	unsigned int i;
	int err, n;

	for (i = 0; i < nr_alloc_symbols; i++)
		reqs[i].name = alloc_symbols[i].name;
	n = elf__resolve_offsets(path, reqs, nr_alloc_symbols);
	if (n <= 0)
		return n;
#if defined(__x86_64__)
	skip_harmless_prologue(path, reqs);
#endif
	/*
	 * Return probes first: a return without a call state is ignored, but
	 * a call entered before its return probe existed would leave a state
	 * that makes every later call of that thread look nested.
	 */
	err = link_binary(t, path, reqs, true, flags);
	if (err < 0)
		return err;
	n = link_binary(t, path, reqs, false, flags);
	if (n <= 0) {
		if (err > 0)
			close(t->links[--t->nlinks]);
		return n;
	}
	t->attached_files++;
	pr_debug("probed %d allocator functions in %s\n", n, name);
	return n;
}

static bool same_file(const struct mt_file_id *a, const struct mt_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

static struct inspected_file *find_inspected(struct bpf_track *t, const struct mt_file_id *id)
{
	size_t i;

	for (i = 0; i < t->ninspected; i++)
		if (same_file(&t->inspected[i].id, id))
			return &t->inspected[i];
	return NULL;
}

static int mark_inspected(struct bpf_track *t, const struct mt_file_id *id,
			  enum mt_file_kind kind)
{
	struct inspected_file *f = find_inspected(t, id);
	__u8 value = kind;

	if (!f) {
		if (grow_array((void **)&t->inspected, &t->inspected_cap, t->ninspected + 1,
			       sizeof(*t->inspected)))
			return -ENOMEM;
		f = &t->inspected[t->ninspected++];
		f->id = *id;
	}
	f->kind = kind;
	if (bpf_map__update_elem(t->skel->maps.inspected, id, sizeof(*id), &value,
				 sizeof(value), BPF_ANY))
		return -errno;
	return 0;
}

/* the kernel's dev_t, as BPF reads it from a superblock */
static __u64 kernel_dev(unsigned int maj, unsigned int min)
{
	return ((__u64)maj << 20) | min;
}

/* looks for allocator functions in a file not seen before, probes them: its kind */
static int inspect_file(struct bpf_track *t, const struct mt_file_id *id,
			const char *path, const char *name)
{
	struct inspected_file *f = find_inspected(t, id);
	enum mt_file_kind kind;
	int err, n;

	if (f)
		return f->kind;
	/* a file of no allocator, until probed: a failure leaves it so */
	err = mark_inspected(t, id, MT_FILE_PLAIN);
	if (err || same_file(id, &t->shim))
		return err ? err : MT_FILE_PLAIN;
	n = attach_binary(t, path, name);
	if (n <= 0)
		return n < 0 ? n : MT_FILE_PLAIN;
	kind = is_foreign_allocator(name) ? MT_FILE_FOREIGN_ALLOCATOR : MT_FILE_ALLOCATOR;
	err = mark_inspected(t, id, kind);
	return err ? err : (int)kind;
}

static void probe_failed(struct bpf_track *t, const char *file, int err)
{
	t->probe_failures++;
	t->last_probe_error = err;
	warning("cannot probe the allocator functions of '%s': %s%s", file,
		strerror(-err), err == -EINVAL ?
		" (another tool's uprobe there with a reference counter? see dmesg)" : "");
}

static void note_code(struct code_scan *scan, const struct mt_file_id *id,
		      const struct mt_file_id *shim, int kind)
{
	if (!scan)
		return;
	if (kind == MT_FILE_FOREIGN_ALLOCATOR)
		scan->foreign = true;
	else if (kind == MT_FILE_ALLOCATOR)
		scan->allocator = true;
	if (same_file(id, shim))
		scan->shim = true;
}

int bpf_track__inspect_process(struct bpf_track *t, pid_t pid, struct code_scan *scan)
{
	char path[64];
	struct proc_maps maps;
	struct proc_map m;
	int err, n;

	if (scan)
		memset(scan, 0, sizeof(*scan));
	err = proc_maps__open(&maps, pid);
	if (err)
		return err == -ESRCH ? -ENOENT : err;
	while ((err = proc_maps__next(&maps, &m)) > 0) {
		struct mt_file_id id;

		if (!proc_map__exec(&m) || !m.ino || m.path[0] != '/')
			continue;
		id.dev = kernel_dev(m.dev_major, m.dev_minor);
		id.ino = m.ino;
		/* the mapped file itself, wherever (and whatever) its path is now */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid,
			 m.start, m.end);
		n = inspect_file(t, &id, path, m.path);
		if (n == -ENOMEM) {
			err = n;
			break;
		}
		if (n < 0)
			probe_failed(t, m.path, n);
		else
			note_code(scan, &id, &t->shim, n);
	}
	proc_maps__close(&maps);
	return err == -ENOMEM ? err : 0;	/* a process gone meanwhile: what was read */
}

int bpf_track__resume_attached(struct bpf_track *t, pid_t pid)
{
	return pressure__resume_attached(bpf_track__pressure_fd(t), pid);
}

unsigned int bpf_track__attached_files(struct bpf_track *t)
{
	return t->attached_files;
}

unsigned int bpf_track__probe_failures(struct bpf_track *t)
{
	return t->probe_failures;
}

static int find_libc(struct dl_phdr_info *info, size_t size __maybe_unused, void *data)
{
	const char *name = info->dlpi_name, *base = strrchr(name, '/');

	if (base && !strncmp(base + 1, "libc.so", 7)) {
		*(const char **)data = name;
		return 1;
	}
	return 0;
}

/*
 * The libc memtrack itself maps is the one its commands will map: inspect
 * memtrack's own mappings, with the (device, inode) that BPF sees (stat()'s
 * differs on overlayfs and btrfs).
 */
int bpf_track__attach_libc(struct bpf_track *t, const char **path)
{
	static char resolved[PATH_MAX];
	const char *name = NULL;
	unsigned int failures = t->probe_failures;
	int err;

	dl_iterate_phdr(find_libc, &name);
	*path = name && realpath(name, resolved) ? resolved : NULL;
	err = bpf_track__inspect_process(t, getpid(), NULL);
	if (err)
		return err;
	if (t->probe_failures > failures)
		return t->last_probe_error;
	return t->attached_files ? 0 : -ENOENT;
}

int bpf_track__set_mode(struct bpf_track *t, pid_t pid, enum mt_mode mode)
{
	__u32 key = pid;
	__u8 value = mode;

	if (bpf_map__update_elem(t->skel->maps.tracked, &key, sizeof(key), &value,
				 sizeof(value), BPF_ANY))
		return -errno;
	return 0;
}

int bpf_track__mode(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;
	__u8 value;

	if (bpf_map__lookup_elem(t->skel->maps.tracked, &key, sizeof(key), &value,
				 sizeof(value), 0))
		return 0;
	return value;
}

int bpf_track__ring_fd(struct bpf_track *t, enum mt_ring_id ring)
{
	switch (ring) {
	case MT_RING_EVENTS:
		return bpf_map__fd(t->skel->maps.events);
	case MT_RING_STACKS:
		return bpf_map__fd(t->skel->maps.stacks);
	default:
		return -EINVAL;
	}
}

int bpf_track__prog_ids(struct bpf_track *t, uint32_t *ids, int max)
{
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, t->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (n < max && !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			ids[n++] = info.id;
	}
	return n;
}

int bpf_track__pressure_fd(struct bpf_track *t)
{
	return bpf_map__fd(t->skel->maps.pressure_stopped);
}

const volatile uint64_t *bpf_track__pressure_stops(struct bpf_track *t)
{
	return (const volatile uint64_t *)&t->skel->bss->pressure_stops;
}

uint64_t bpf_track__drops(struct bpf_track *t, enum mt_ring_id ring)
{
	int ncpus = libbpf_num_possible_cpus(), i;
	__u32 key = ring;
	uint64_t sum = 0;
	__u64 *vals;

	if (ncpus <= 0)
		return 0;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.drops), &key, vals))
		for (i = 0; i < ncpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

void bpf_track__stop_tracing(struct bpf_track *t)
{
	__atomic_store_n(&t->skel->bss->tracing_done, 1, __ATOMIC_RELEASE);
}

void bpf_track__detach(struct bpf_track *t, int guardian_fd)
{
	int i;

	bpf_track__stop_tracing(t);
	if (guardian_fd >= 0 && t->nlinks)
		pressure__hand_over(guardian_fd, t->links, t->nlinks);
	for (i = 0; i < t->nlinks; i++)
		close(t->links[i]);
	t->nlinks = 0;
	free(t->links);
	t->links = NULL;
	t->links_cap = 0;
	memtrack_bpf__detach(t->skel);
}

void bpf_track__close(struct bpf_track *t)
{
	if (!t)
		return;
	bpf_track__detach(t, -1);
	memtrack_bpf__destroy(t->skel);
	free(t->inspected);
	free(t);
}
