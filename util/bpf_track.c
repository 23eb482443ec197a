// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf/memtrack.skel.h"
#include "bpf_track.h"
#include "elf-syms.h"
#include "usage.h"
#include "util.h"

/* from kernel 6.6's uapi, which Debian's libbpf 1.1 headers predate */
#define MT_BPF_TRACE_UPROBE_MULTI	48
#define MT_BPF_F_UPROBE_MULTI_RETURN	(1U << 0)

struct bpf_track {
	struct memtrack_bpf *skel;
	int links[4];
	int nlinks;
};

struct alloc_func {
	const char *name;
	enum mt_func id;
};

static const struct alloc_func libc_funcs[] = {
	{ "malloc", MT_FN_MALLOC },
	{ "calloc", MT_FN_CALLOC },
	{ "realloc", MT_FN_REALLOC },
	{ "reallocarray", MT_FN_REALLOCARRAY },
	{ "free", MT_FN_FREE },
	{ "aligned_alloc", MT_FN_ALIGNED_ALLOC },
	{ "memalign", MT_FN_MEMALIGN },
	{ "posix_memalign", MT_FN_POSIX_MEMALIGN },
	{ "valloc", MT_FN_VALLOC },
	{ "pvalloc", MT_FN_PVALLOC },
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
	bpf_map__set_max_entries(skel->maps.events, opts->events_ring_size);
	skel->rodata->events_watermark = opts->events_ring_size * opts->watermark_pct / 100;
	bpf_program__set_expected_attach_type(skel->progs.alloc_enter,
					      MT_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(skel->progs.alloc_exit,
					      MT_BPF_TRACE_UPROBE_MULTI);
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

/* BPF_LINK_CREATE for BPF_TRACE_UPROBE_MULTI, laid out as the kernel's union bpf_attr */
struct uprobe_multi_link_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 uprobe_flags;
	__u32 pid;
	__u32 pad;
};

static int link_uprobe_multi(int prog_fd, const char *path, const __u64 *offsets,
			     const __u64 *cookies, unsigned int cnt, bool retprobe)
{
	struct uprobe_multi_link_attr attr = {
		.prog_fd = prog_fd,
		.attach_type = MT_BPF_TRACE_UPROBE_MULTI,
		.path = (uintptr_t)path,
		.offsets = (uintptr_t)offsets,
		.cookies = (uintptr_t)cookies,
		.cnt = cnt,
		.uprobe_flags = retprobe ? MT_BPF_F_UPROBE_MULTI_RETURN : 0,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}

/* keeps the first of several names for one address (aliases) */
static unsigned int unique_offsets(const struct elf_sym_req *reqs, size_t n,
				   bool skip_free, __u64 *offsets, __u64 *cookies)
{
	unsigned int cnt = 0, i, j;

	for (i = 0; i < n; i++) {
		bool seen = false;

		if (!reqs[i].offset || (skip_free && libc_funcs[i].id == MT_FN_FREE))
			continue;
		for (j = 0; j < cnt; j++)
			seen |= offsets[j] == reqs[i].offset;
		if (seen)
			continue;
		offsets[cnt] = reqs[i].offset;
		cookies[cnt++] = libc_funcs[i].id;
	}
	return cnt;
}

static int attach_allocator(struct bpf_track *t, const char *path)
{
	struct elf_sym_req reqs[ARRAY_SIZE(libc_funcs)];
	__u64 offsets[ARRAY_SIZE(libc_funcs)], cookies[ARRAY_SIZE(libc_funcs)];
	unsigned int cnt, i;
	int fd, err;

	for (i = 0; i < ARRAY_SIZE(libc_funcs); i++)
		reqs[i].name = libc_funcs[i].name;
	err = elf__resolve_offsets(path, reqs, ARRAY_SIZE(reqs));
	if (err < 0)
		return err;
	if (err == 0)
		return -ENOENT;

	cnt = unique_offsets(reqs, ARRAY_SIZE(reqs), false, offsets, cookies);
	fd = link_uprobe_multi(bpf_program__fd(t->skel->progs.alloc_enter), path,
			       offsets, cookies, cnt, false);
	if (fd < 0)
		return fd;
	t->links[t->nlinks++] = fd;

	cnt = unique_offsets(reqs, ARRAY_SIZE(reqs), true, offsets, cookies);
	fd = link_uprobe_multi(bpf_program__fd(t->skel->progs.alloc_exit), path,
			       offsets, cookies, cnt, true);
	if (fd < 0)
		return fd;
	t->links[t->nlinks++] = fd;
	pr_debug("attached %u allocator functions in %s\n", cnt + 1, path);
	return 0;
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

int bpf_track__attach_libc(struct bpf_track *t, const char **path)
{
	static char resolved[PATH_MAX];
	const char *name = NULL;

	dl_iterate_phdr(find_libc, &name);
	if (!name || !realpath(name, resolved))
		return -ENOENT;
	*path = resolved;
	return attach_allocator(t, resolved);
}

int bpf_track__track_pid(struct bpf_track *t, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map__update_elem(t->skel->maps.tracked, &key, sizeof(key), &one,
				 sizeof(one), BPF_ANY))
		return -errno;
	return 0;
}

int bpf_track__ring_fd(struct bpf_track *t, enum mt_ring_id ring)
{
	switch (ring) {
	case MT_RING_EVENTS:
		return bpf_map__fd(t->skel->maps.events);
	default:
		return -EINVAL;
	}
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

void bpf_track__detach(struct bpf_track *t)
{
	int i;

	for (i = 0; i < t->nlinks; i++)
		close(t->links[i]);
	t->nlinks = 0;
	memtrack_bpf__detach(t->skel);
}

void bpf_track__close(struct bpf_track *t)
{
	if (!t)
		return;
	bpf_track__detach(t);
	memtrack_bpf__destroy(t->skel);
	free(t);
}
