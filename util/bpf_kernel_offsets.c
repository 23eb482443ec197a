// SPDX-License-Identifier: GPL-2.0
/*
 * The offsets of the kernel fields memtrack's probes read, from the BTF the
 * kernel describes itself with.  libbpf's CO-RE would find the same, but it
 * searches all of vmlinux's types once per structure (about 1.4 ms each here,
 * at every start); one pass finds all the structures at once.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf_kernel_offsets.h"
#include "usage.h"
#include "util.h"

#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

struct kernel_field {
	const char *type;
	const char *member;	/* "a.b": member b of the struct or union member a */
	size_t size;		/* the size the probes read */
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
};

/* vmlinux has a few struct names defined twice (14 on 6.18), none of ours yet */
#define MAX_CANDIDATES	4

/*
 * The structures named like fields[i].type, for every i, in one pass over
 * btf: ids[i][0..MAX_CANDIDATES), 0 after the last.
 */
static void find_structs(const struct btf *btf, __u32 (*ids)[MAX_CANDIDATES])
{
	__u32 id, n = btf__type_cnt(btf), i, c;

	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!btf_is_struct(t) || !t->name_off)
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		for (i = 0; i < ARRAY_SIZE(fields); i++) {
			if (strcmp(name, fields[i].type))
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
static __u32 find_member(const struct btf *btf, __u32 id, const char *name,
			 size_t len, __u64 *bits)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;
	unsigned int i;

	if (!t || !btf_is_composite(t))
		return 0;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		__u32 found;

		if (btf_member_bitfield_size(t, i))
			continue;
		if (*mname) {
			if (strlen(mname) == len && !memcmp(mname, name, len)) {
				*bits += btf_member_bit_offset(t, i);
				return m->type;
			}
			continue;
		}
		found = find_member(btf, m->type, name, len, bits);
		if (found) {
			*bits += btf_member_bit_offset(t, i);
			return found;
		}
	}
	return 0;
}

/* the byte offset of a field's path ("a.b") from the start of type id */
static int field_offset(const struct btf *btf, __u32 id, const struct kernel_field *f,
			__u32 *off)
{
	const char *path = f->member;
	__u64 bits = 0;
	__s64 size;

	for (;;) {
		size_t len = strcspn(path, ".");

		id = find_member(btf, id, path, len, &bits);
		if (!id)
			return -ESRCH;
		if (!path[len])
			break;
		path += len + 1;
	}
	size = btf__resolve_size(btf, id);
	if (bits % 8 || size != (__s64)f->size)
		return -EINVAL;
	*off = bits / 8;
	return 0;
}

/*
 * The field's offset in whichever candidate structures have it, as CO-RE
 * would: they must all agree.
 */
static int candidates_offset(const struct btf *btf, const __u32 *ids,
			     const struct kernel_field *f, __u32 *off)
{
	int err = -ESRCH, ret;
	unsigned int c;
	__u32 o;

	for (c = 0; c < MAX_CANDIDATES && ids[c]; c++) {
		ret = field_offset(btf, ids[c], f, &o);
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

int kernel_offsets__resolve(const struct btf *btf, struct mt_kernel_offsets *ko)
{
	__u32 ids[ARRAY_SIZE(fields)][MAX_CANDIDATES] = { { 0 } };
	unsigned int i;
	int err;

	find_structs(btf, ids);
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		const struct kernel_field *f = &fields[i];

		err = candidates_offset(btf, ids[i], f, (__u32 *)((char *)ko + f->off));
		if (err)
			return err;
	}
	return 0;
}

/*
 * sysfs hands the BTF out a page per read(): 1350 system calls, 40 to 250 ms
 * at every start on a busy machine.  Kernels from 6.16 map it instead.
 */
static struct btf *map_vmlinux_btf(void)
{
	struct btf *btf = NULL;
	struct stat st;
	void *data;
	int fd;

	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0) {
		data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (data != MAP_FAILED) {
			btf = btf__new(data, st.st_size);
			munmap(data, st.st_size);
		}
	}
	close(fd);
	return libbpf_get_error(btf) ? NULL : btf;
}

int kernel_offsets__read(struct mt_kernel_offsets *ko)
{
	struct btf *btf = map_vmlinux_btf();
	int err;

	if (!btf)
		btf = btf__load_vmlinux_btf();

	if (!btf) {
		err = -errno;
		error("cannot read the kernel's BTF (" VMLINUX_BTF "): %s",
		      strerror(-err));
		return err;
	}
	err = kernel_offsets__resolve(btf, ko);
	btf__free(btf);
	return err;
}
