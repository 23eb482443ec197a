// SPDX-License-Identifier: GPL-2.0
/*
 * The offsets of the kernel fields memtrack's probes read, from the BTF the
 * kernel describes itself with.  libbpf's CO-RE would find the same, but it
 * searches all of vmlinux's types once per structure (about 1.4 ms each here,
 * at every start); one pass finds all the structures at once.
 */
#include <linux/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/bpf_kernel_offsets.h"
#include "util/usage.h"
#include "util/util.h"

#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

struct kernel_field {
	const char *type;
	const char *member;	/* "a.b": member b of the struct or union member a */
	size_t size;		/* the size the probes read; 0: an array, read as they need */
	size_t off;		/* offset in struct mt_kernel_offsets */
};

#define FIELD(t, m, sz, dst)	{ t, m, sz, offsetof(struct mt_kernel_offsets, dst) }

static const struct kernel_field fields[] = {
	FIELD("task_struct", "tgid", 4, task_tgid),
	FIELD("task_struct", "pid", 4, task_pid),
	FIELD("task_struct", "exit_code", 4, task_exit_code),
	FIELD("task_struct", "signal", 8, task_signal),
	FIELD("signal_struct", "live.counter", 4, signal_live),
	FIELD("linux_binprm", "filename", 8, binprm_filename),
	FIELD("linux_binprm", "file", 8, binprm_file),
	FIELD("file", "f_inode", 8, file_inode),
	FIELD("inode", "i_sb", 8, inode_sb),
	FIELD("inode", "i_ino", 8, inode_ino),
	FIELD("super_block", "s_dev", 4, sb_dev),
	FIELD("vm_area_struct", "vm_file", 8, vma_file),
	FIELD("task_struct", "mm", 8, task_mm),
	FIELD("task_struct", "vfork_done", 8, task_vfork_done),
	FIELD("task_struct", "real_parent", 8, task_real_parent),
	FIELD("mm_struct", "start_stack", 8, mm_start_stack),
	FIELD("mm_struct", "saved_auxv", 0, mm_saved_auxv),
	FIELD("task_struct", "fs", 8, task_fs),
	FIELD("fs_struct", "root.dentry", 8, fs_root_dentry),
	FIELD("vm_area_struct", "vm_start", 8, vma_start),
	FIELD("vm_area_struct", "vm_end", 8, vma_end),
	FIELD("vm_area_struct", "vm_pgoff", 8, vma_pgoff),
	FIELD("task_struct", "ptrace", 4, task_ptrace),
	FIELD("task_struct", "thread_pid", 8, task_thread_pid),
	FIELD("signal_struct", "pids", 0, signal_pids),
	FIELD("task_struct", "group_leader", 8, task_group_leader),
	FIELD("pid", "level", 4, pid_level),
	FIELD("pid", "numbers", 0, pid_numbers),	/* a flexible array */
	FIELD("upid", "nr", 4, upid_nr),
	FIELD("upid", "ns", 8, upid_ns),
	FIELD("task_struct", "files", 8, task_files),
	FIELD("files_struct", "fdt", 8, files_fdt),
	FIELD("fdtable", "max_fds", 4, fdt_max_fds),
	FIELD("fdtable", "fd", 8, fdt_fd),
};

/* vmlinux has a few struct names defined twice (14 on 6.18), none of ours yet */
#define MAX_CANDIDATES	4
/* typedef chains, nesting of anonymous members and arrays: far deeper than C needs */
#define MAX_DEPTH	32

/*
 * The kernel's BTF read in place, a table of where each type starts being
 * all we build: libbpf's btf__new() copies the 5.5 MB first, and the page
 * faults of that copy were a third of `memtrack track -- true`.
 */
struct btf_raw {
	const __u8 *types;
	__u32 types_len;
	const char *strs;
	__u32 strs_len;
	__u32 *start;		/* start[id]: the offset of type id in types; id 0 is void */
	__u32 n;		/* ids 0 .. n-1 */
};

/* bytes that follow a btf_type of this kind; -1 for a kind we do not know */
static long extra_bytes(const struct btf_type *t)
{
	__u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/* the sections of raw, checked, and each type's start; 0 or -EINVAL */
static int btf_raw__open(struct btf_raw *b, const void *raw, size_t size)
{
	struct btf_header h;
	__u32 off;
	long extra;

	memset(b, 0, sizeof(*b));
	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, raw, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION || h.hdr_len < sizeof(h) ||
	    h.hdr_len % 4 || h.type_off % 4 ||
	    (__u64)h.hdr_len + h.type_off + h.type_len > size ||
	    (__u64)h.hdr_len + h.str_off + h.str_len > size || !h.str_len)
		return -EINVAL;
	b->types = (const __u8 *)raw + h.hdr_len + h.type_off;
	b->types_len = h.type_len;
	b->strs = (const char *)raw + h.hdr_len + h.str_off;
	b->strs_len = h.str_len;
	if (b->strs[b->strs_len - 1])
		return -EINVAL;
	/* room for the most types the section can hold: only the pages used are touched */
	b->start = malloc((b->types_len / sizeof(struct btf_type) + 1) * sizeof(*b->start));
	if (!b->start)
		return -ENOMEM;
	b->n = 1;
	for (off = 0; off < b->types_len; ) {
		const struct btf_type *t = (const struct btf_type *)(b->types + off);

		if (b->types_len - off < sizeof(*t) || (extra = extra_bytes(t)) < 0 ||
		    b->types_len - off - sizeof(*t) < (__u64)extra)
			return -EINVAL;
		b->start[b->n++] = off;
		off += sizeof(*t) + extra;
	}
	return 0;
}

static void btf_raw__close(struct btf_raw *b)
{
	free(b->start);
	b->start = NULL;
}

static const struct btf_type *type_by_id(const struct btf_raw *b, __u32 id)
{
	return id && id < b->n ? (const struct btf_type *)(b->types + b->start[id]) : NULL;
}

static const char *name_of(const struct btf_raw *b, __u32 off)
{
	return off < b->strs_len ? b->strs + off : "";
}

static bool is_composite(const struct btf_type *t)
{
	return BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT || BTF_INFO_KIND(t->info) == BTF_KIND_UNION;
}

/* past typedefs and qualifiers */
static const struct btf_type *resolve(const struct btf_raw *b, __u32 id)
{
	const struct btf_type *t = type_by_id(b, id);
	int depth;

	for (depth = 0; t && depth < MAX_DEPTH; depth++) {
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			t = type_by_id(b, t->type);
			continue;
		default:
			return t;
		}
	}
	return NULL;
}

/* the size of type id in bytes, -1 if it has none we can tell */
static __s64 size_of(const struct btf_raw *b, __u32 id, int depth)
{
	const struct btf_type *t = resolve(b, id);
	const struct btf_array *a;
	__s64 elem;

	if (!t || depth > MAX_DEPTH)
		return -1;
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FLOAT:
		return t->size;
	case BTF_KIND_PTR:
		return sizeof(void *);
	case BTF_KIND_ARRAY:
		a = (const struct btf_array *)(t + 1);
		elem = size_of(b, a->type, depth + 1);
		return elem < 0 ? -1 : elem * a->nelems;
	default:
		return -1;
	}
}

/*
 * The structures named like fields[i].type, for every i, in one pass over
 * the types: ids[i][0..MAX_CANDIDATES), 0 after the last.
 */
static void find_structs(const struct btf_raw *b, __u32 (*ids)[MAX_CANDIDATES])
{
	__u32 id, i, c;

	for (id = 1; id < b->n; id++) {
		const struct btf_type *t = type_by_id(b, id);
		const char *name;

		if (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT || !t->name_off)
			continue;
		name = name_of(b, t->name_off);
		for (i = 0; i < ARRAY_SIZE(fields); i++) {
			/* the first byte turns most structs away without a call */
			if (name[0] != fields[i].type[0] || strcmp(name, fields[i].type))
				continue;
			for (c = 0; c < MAX_CANDIDATES && ids[i][c]; c++)
				;
			if (c < MAX_CANDIDATES)
				ids[i][c] = id;
		}
	}
}

/*
 * The member called name in the struct or union type id, looking into its
 * anonymous members too; its bit offset added to *bits, its type, or 0.
 */
static __u32 find_member(const struct btf_raw *b, __u32 id, const char *name,
			 size_t len, __u64 *bits, int depth)
{
	const struct btf_type *t = resolve(b, id);
	const struct btf_member *m;
	unsigned int i;
	bool kflag;

	if (!t || !is_composite(t) || depth > MAX_DEPTH)
		return 0;
	kflag = BTF_INFO_KFLAG(t->info);
	m = (const struct btf_member *)(t + 1);
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		const char *mname = name_of(b, m->name_off);
		__u32 bit = kflag ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset, found;

		if (kflag && BTF_MEMBER_BITFIELD_SIZE(m->offset))
			continue;
		if (*mname) {
			if (strlen(mname) == len && !memcmp(mname, name, len)) {
				*bits += bit;
				return m->type;
			}
			continue;
		}
		found = find_member(b, m->type, name, len, bits, depth + 1);
		if (found) {
			*bits += bit;
			return found;
		}
	}
	return 0;
}

/* the byte offset of a field's path ("a.b") from the start of type id */
static int field_offset(const struct btf_raw *b, __u32 id, const struct kernel_field *f,
			__u32 *off)
{
	const char *path = f->member;
	__u64 bits = 0;

	for (;;) {
		size_t len = strcspn(path, ".");

		id = find_member(b, id, path, len, &bits, 0);
		if (!id)
			return -ESRCH;
		if (!path[len])
			break;
		path += len + 1;
	}
	if (bits % 8 || (f->size && size_of(b, id, 0) != (__s64)f->size))
		return -EINVAL;
	*off = bits / 8;
	return 0;
}

/*
 * The field's offset in whichever candidate structures have it, as CO-RE
 * would: they must all agree.
 */
static int candidates_offset(const struct btf_raw *b, const __u32 *ids,
			     const struct kernel_field *f, __u32 *off)
{
	int err = -ESRCH, ret;
	unsigned int c;
	__u32 o;

	for (c = 0; c < MAX_CANDIDATES && ids[c]; c++) {
		ret = field_offset(b, ids[c], f, &o);
		if (ret) {
			if (err == -ESRCH)
				err = ret;
			continue;
		}
		if (!err && o != *off) {
			error("the kernel's BTF has two struct %s with %s at %u and %u",
			      f->type, f->member, *off, o);
			return -ENOTUNIQ;
		}
		*off = o;
		err = 0;
	}
	if (err)
		error("the kernel's BTF has no %s.%s%s", f->type, f->member,
		      err == -EINVAL ? " of the expected size" : "");
	return err;
}

__u32 kernel_offsets__layout(void)
{
	__u32 h = 0x811c9dc5 ^ sizeof(struct mt_kernel_offsets);
	const char *p;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		for (p = fields[i].type; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x01000193;
		h = (h ^ '.') * 0x01000193;
		for (p = fields[i].member; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x01000193;
		h = (h ^ (fields[i].size << 16 | fields[i].off)) * 0x01000193;
	}
	return h;
}

int kernel_offsets__resolve(const void *raw, size_t size, struct mt_kernel_offsets *ko)
{
	__u32 ids[ARRAY_SIZE(fields)][MAX_CANDIDATES] = { { 0 } };
	struct btf_raw b;
	unsigned int i;
	int err = btf_raw__open(&b, raw, size);

	if (err) {
		btf_raw__close(&b);
		error("the kernel's BTF is not BTF memtrack can read (%s)", strerror(-err));
		return err;
	}
	find_structs(&b, ids);
	for (i = 0; i < ARRAY_SIZE(fields) && !err; i++) {
		const struct kernel_field *f = &fields[i];

		err = candidates_offset(&b, ids[i], f, (__u32 *)((char *)ko + f->off));
	}
	btf_raw__close(&b);
	return err;
}

/* sysfs hands the BTF out a page per read(): kernels from 6.16 map it */
static void *read_vmlinux_btf(int fd, size_t size, bool *mapped)
{
	void *data = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	size_t got = 0;
	ssize_t n;

	*mapped = data != MAP_FAILED;
	if (*mapped)
		return data;
	data = malloc(size);
	while (data && got < size) {
		n = read(fd, (char *)data + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(data);
			return NULL;
		}
		got += n;
	}
	return data;
}

int kernel_offsets__read(struct mt_kernel_offsets *ko)
{
	int fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC), err;
	struct stat st;
	void *data = NULL;
	bool mapped = false;

	if (fd < 0 || fstat(fd, &st))
		err = -errno;
	else if (st.st_size <= 0)
		err = -ENODATA;
	else
		err = (data = read_vmlinux_btf(fd, st.st_size, &mapped)) ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	if (err) {
		error("cannot read the kernel's BTF (" VMLINUX_BTF "): %s", strerror(-err));
		return err;
	}
	err = kernel_offsets__resolve(data, st.st_size, ko);
	if (mapped)
		munmap(data, st.st_size);
	else
		free(data);
	return err;
}
