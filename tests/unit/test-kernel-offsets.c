// SPDX-License-Identifier: GPL-2.0
/*
 * kernel_offsets__resolve() on BTF built here: fields inside anonymous
 * structs and unions, through typedefs, and the refusals (a missing
 * structure or member, a member of another size).  The running kernel's BTF
 * is read too, for the structures being there at all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#ifdef NO_BPF_SKEL
int main(void)
{
	printf("kernel-offsets: skipped, built without BPF\n");
	return 0;
}
#else
#include <bpf/btf.h>
#include <linux/btf.h>

#include "util/probe/bpf_kernel_offsets.h"

/* what libbpf built, as the raw bytes the kernel hands out */
static int resolve(const struct btf *btf, struct mt_kernel_offsets *ko)
{
	__u32 size;
	const void *raw = btf__raw_data(btf, &size);

	return raw ? kernel_offsets__resolve(raw, size, ko) : -ENOMEM;
}

struct types {
	int i32, i64, ptr;
};

static void add_types(struct btf *btf, struct types *ty)
{
	ty->i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	ty->i64 = btf__add_int(btf, "long unsigned int", 8, 0);
	ty->ptr = btf__add_ptr(btf, 0);
}

/*
 * task_struct with tgid two levels down, in an anonymous struct inside an
 * anonymous union, as randomized layouts and unions put fields.
 */
static void add_task_struct(struct btf *btf, const struct types *ty, int tgid_size)
{
	int tgid_type = tgid_size == 4 ? ty->i32 : ty->i64;
	int inner, uni;

	inner = btf__add_struct(btf, NULL, 16);
	btf__add_field(btf, "before", ty->i64, 0, 0);
	btf__add_field(btf, "tgid", tgid_type, 64, 0);
	uni = btf__add_union(btf, NULL, 16);
	btf__add_field(btf, "other", ty->i64, 0, 0);
	btf__add_field(btf, NULL, inner, 0, 0);
	btf__add_struct(btf, "task_struct", 112);
	btf__add_field(btf, "flags", ty->i32, 0, 3);		/* a bitfield: skipped */
	btf__add_field(btf, "pid", ty->i32, 32, 0);
	btf__add_field(btf, NULL, uni, 128, 0);			/* tgid: 16 + 8 */
	btf__add_field(btf, "exit_code", ty->i32, 256, 0);
	btf__add_field(btf, "signal", ty->ptr, 320, 0);
	btf__add_field(btf, "mm", ty->ptr, 384, 0);
	btf__add_field(btf, "vfork_done", ty->ptr, 448, 0);
	btf__add_field(btf, "real_parent", ty->ptr, 384 + 128, 0);
	btf__add_field(btf, "ptrace", ty->i32, 576, 0);
	btf__add_field(btf, "group_leader", ty->ptr, 640, 0);
	btf__add_field(btf, "thread_pid", ty->ptr, 704, 0);
	btf__add_field(btf, "fs", ty->ptr, 768, 0);
	btf__add_field(btf, "files", ty->ptr, 832, 0);
}

/* struct pid ends in a flexible array of struct upid */
static void add_pid_structs(struct btf *btf, const struct types *ty)
{
	int upid = btf__add_struct(btf, "upid", 16), numbers;

	btf__add_field(btf, "nr", ty->i32, 0, 0);
	btf__add_field(btf, "ns", ty->ptr, 64, 0);
	numbers = btf__add_array(btf, ty->i32, upid, 0);
	btf__add_struct(btf, "pid", 32);
	btf__add_field(btf, "count", ty->i32, 0, 0);
	btf__add_field(btf, "level", ty->i32, 32, 0);
	btf__add_field(btf, "numbers", numbers, 256, 0);
}

static void add_other_structs(struct btf *btf, const struct types *ty, bool with_vma)
{
	int counter, atomic, pids, path, auxv;

	counter = btf__add_struct(btf, NULL, 4);
	btf__add_field(btf, "counter", ty->i32, 0, 0);
	atomic = btf__add_typedef(btf, "atomic_t", counter);
	pids = btf__add_array(btf, ty->i32, ty->ptr, 4);
	btf__add_struct(btf, "signal_struct", 48);
	btf__add_field(btf, "nr_threads", ty->i32, 0, 0);
	btf__add_field(btf, "live", atomic, 32, 0);
	btf__add_field(btf, "pids", pids, 128, 0);
	path = btf__add_struct(btf, "path", 16);
	btf__add_field(btf, "mnt", ty->ptr, 0, 0);
	btf__add_field(btf, "dentry", ty->ptr, 64, 0);
	btf__add_struct(btf, "files_struct", 32);
	btf__add_field(btf, "count", ty->i32, 0, 0);
	btf__add_field(btf, "fdt", ty->ptr, 192, 0);
	btf__add_struct(btf, "fdtable", 16);
	btf__add_field(btf, "max_fds", ty->i32, 0, 0);
	btf__add_field(btf, "fd", ty->ptr, 64, 0);
	btf__add_struct(btf, "fs_struct", 24);
	btf__add_field(btf, "users", ty->i32, 0, 0);
	btf__add_field(btf, "root", path, 64, 0);
	btf__add_struct(btf, "linux_binprm", 32);
	btf__add_field(btf, "file", ty->ptr, 64, 0);
	btf__add_field(btf, "filename", ty->ptr, 128, 0);
	btf__add_struct(btf, "file", 24);
	btf__add_field(btf, "f_inode", ty->ptr, 128, 0);
	btf__add_struct(btf, "inode", 48);
	btf__add_field(btf, "i_sb", ty->ptr, 64, 0);
	btf__add_field(btf, "i_ino", ty->i64, 320, 0);
	btf__add_struct(btf, "super_block", 24);
	btf__add_field(btf, "s_dev", ty->i32, 128, 0);
	auxv = btf__add_array(btf, ty->i32, ty->i64, 2);
	btf__add_struct(btf, "mm_struct", 64);
	btf__add_field(btf, "start_stack", ty->i64, 256, 0);
	btf__add_field(btf, "saved_auxv", auxv, 320, 0);
	if (with_vma) {
		btf__add_struct(btf, "vm_area_struct", 128);
		btf__add_field(btf, "vm_start", ty->i64, 0, 0);
		btf__add_field(btf, "vm_end", ty->i64, 64, 0);
		btf__add_field(btf, "vm_pgoff", ty->i64, 128, 0);
		btf__add_field(btf, "vm_file", ty->ptr, 64 * 8, 0);
	}
}

static struct btf *build(int tgid_size, bool with_vma)
{
	struct btf *btf = btf__new_empty();
	struct types ty;

	add_types(btf, &ty);
	add_task_struct(btf, &ty, tgid_size);
	add_other_structs(btf, &ty, with_vma);
	add_pid_structs(btf, &ty);
	return btf;
}

static void test_offsets(void)
{
	struct mt_kernel_offsets ko = { 0 };
	struct btf *btf = build(4, true);

	CHECK(resolve(btf, &ko) == 0);
	CHECK_U64(ko.task_pid, 4, "task_struct.pid");
	CHECK_U64(ko.task_tgid, 24, "task_struct.tgid, in an anonymous struct in a union");
	CHECK_U64(ko.task_exit_code, 32, "task_struct.exit_code");
	CHECK_U64(ko.task_signal, 40, "task_struct.signal");
	CHECK_U64(ko.signal_live, 4, "signal_struct.live.counter, through a typedef");
	CHECK_U64(ko.binprm_file, 8, "linux_binprm.file");
	CHECK_U64(ko.binprm_filename, 16, "linux_binprm.filename");
	CHECK_U64(ko.file_inode, 16, "file.f_inode");
	CHECK_U64(ko.inode_sb, 8, "inode.i_sb");
	CHECK_U64(ko.inode_ino, 40, "inode.i_ino");
	CHECK_U64(ko.sb_dev, 16, "super_block.s_dev");
	CHECK_U64(ko.vma_file, 64, "vm_area_struct.vm_file");
	CHECK_U64(ko.task_mm, 48, "task_struct.mm");
	CHECK_U64(ko.mm_start_stack, 32, "mm_struct.start_stack");
	CHECK_U64(ko.task_vfork_done, 56, "task_struct.vfork_done");
	CHECK_U64(ko.task_real_parent, 64, "task_struct.real_parent");
	CHECK_U64(ko.task_group_leader, 80, "task_struct.group_leader");
	CHECK_U64(ko.task_ptrace, 72, "task_struct.ptrace");
	CHECK_U64(ko.task_fs, 96, "task_struct.fs");
	CHECK_U64(ko.fs_root_dentry, 16, "fs_struct.root.dentry, in a struct");
	CHECK_U64(ko.signal_pids, 16, "signal_struct.pids, an array");
	CHECK_U64(ko.mm_saved_auxv, 40, "mm_struct.saved_auxv, an array");
	CHECK_U64(ko.vma_start, 0, "vm_area_struct.vm_start");
	CHECK_U64(ko.vma_end, 8, "vm_area_struct.vm_end");
	CHECK_U64(ko.vma_pgoff, 16, "vm_area_struct.vm_pgoff");
	CHECK_U64(ko.task_thread_pid, 88, "task_struct.thread_pid");
	CHECK_U64(ko.pid_level, 4, "pid.level");
	CHECK_U64(ko.pid_numbers, 32, "pid.numbers, a flexible array");
	CHECK_U64(ko.upid_nr, 0, "upid.nr");
	CHECK_U64(ko.upid_ns, 8, "upid.ns");
	CHECK_U64(ko.task_files, 104, "task_struct.files");
	CHECK_U64(ko.files_fdt, 24, "files_struct.fdt");
	CHECK_U64(ko.fdt_max_fds, 0, "fdtable.max_fds");
	CHECK_U64(ko.fdt_fd, 8, "fdtable.fd");
	btf__free(btf);
}

static void test_refusals(void)
{
	struct mt_kernel_offsets ko;
	struct btf *btf;

	printf("# two errors expected:\n");
	btf = build(4, false);
	CHECK(resolve(btf, &ko) == -ESRCH, "no vm_area_struct");
	btf__free(btf);
	btf = build(8, true);
	CHECK(resolve(btf, &ko) == -EINVAL, "an 8-byte tgid");
	btf__free(btf);
}

/* a second struct super_block: ignored without s_dev, refused with s_dev elsewhere */
static void test_same_name_twice(void)
{
	struct mt_kernel_offsets ko = { 0 };
	struct btf *btf = build(4, true);

	btf__add_struct(btf, "super_block", 8);
	btf__add_field(btf, "s_flags", btf__find_by_name(btf, "int"), 0, 0);
	CHECK(resolve(btf, &ko) == 0);
	CHECK_U64(ko.sb_dev, 16, "s_dev of the one super_block that has it");
	btf__add_struct(btf, "super_block", 32);
	btf__add_field(btf, "s_dev", btf__find_by_name(btf, "int"), 192, 0);
	printf("# one error expected:\n");
	CHECK(resolve(btf, &ko) == -ENOTUNIQ, "two s_dev offsets");
	btf__free(btf);
}

/* BTF cut short, of another magic, or with a kind we do not know: refused, nothing read past it */
static void test_corrupt(void)
{
	struct mt_kernel_offsets ko;
	struct btf *btf = build(4, true);
	struct btf_header h;
	__u32 size;
	const void *raw = btf__raw_data(btf, &size);
	unsigned char *copy = malloc(size);
	struct btf_type t;

	memcpy(copy, raw, size);
	memcpy(&h, copy, sizeof(h));
	printf("# three errors expected:\n");
	CHECK(kernel_offsets__resolve(copy, size - h.str_len - 4, &ko) == -EINVAL,
	      "types cut short");
	copy[0] ^= 0xff;
	CHECK(kernel_offsets__resolve(copy, size, &ko) == -EINVAL, "another magic");
	copy[0] ^= 0xff;
	memcpy(&t, copy + h.hdr_len + h.type_off, sizeof(t));
	t.info = 31U << 24;	/* kind 31, no members */
	memcpy(copy + h.hdr_len + h.type_off, &t, sizeof(t));
	CHECK(kernel_offsets__resolve(copy, size, &ko) == -EINVAL, "an unknown kind");
	free(copy);
	btf__free(btf);
}

static void test_running_kernel(void)
{
	struct mt_kernel_offsets ko = { 0 };

	CHECK(kernel_offsets__read(&ko) == 0);
	CHECK(ko.task_tgid > 0 && ko.task_pid > 0 && ko.task_tgid != ko.task_pid,
	      "tgid at %u, pid at %u", ko.task_tgid, ko.task_pid);
}

int main(void)
{
	test_offsets();
	test_refusals();
	test_same_name_twice();
	test_corrupt();
	test_running_kernel();
	return test_done("kernel-offsets");
}
#endif
