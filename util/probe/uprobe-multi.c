// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/probe/uprobe-multi.h"

#define UPROBE_MULTI_RETURN	(1U << 0)	/* BPF_F_UPROBE_MULTI_RETURN */

/* BPF_LINK_CREATE's part of union bpf_attr for uprobe_multi, kernel 6.6 */
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

int uprobe_multi__link(int prog_fd, const char *path, const uint64_t *offsets,
		       const uint64_t *cookies, unsigned int cnt, bool retprobe, pid_t pid)
{
	struct uprobe_multi_link_attr attr = {
		.prog_fd = prog_fd,
		.attach_type = UPROBE_MULTI_ATTACH_TYPE,
		.path = (uintptr_t)path,
		.offsets = (uintptr_t)offsets,
		.cookies = (uintptr_t)cookies,
		.cnt = cnt,
		.uprobe_flags = retprobe ? UPROBE_MULTI_RETURN : 0,
		.pid = pid,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}
