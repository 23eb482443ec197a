// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe-links
 *
 * One line per uprobe_multi link on the machine: "<link id> <pid> <prog id>".
 * pid is the process the link is limited to (BPF_LINK_CREATE's uprobe_multi
 * pid), 0 for a link whose probes trap in every process.  A limited link
 * whose process has been reaped also reads 0 until its holder closes it
 * (the kernel keeps the task, not its pid), so a caller that wants the
 * global ones looks twice.  "?" when the kernel does not say (link info
 * gained uprobe_multi in 6.8).  bpftool 7.1 knows neither the link type nor
 * its pid.
 *
 * Exits 0, or 1 when the links cannot be listed (not root, no BPF).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINK_TYPE_UPROBE_MULTI	12	/* BPF_LINK_TYPE_UPROBE_MULTI, kernel 6.6 */

/* struct bpf_link_info up to its uprobe_multi part, as in kernel 6.8 uapi */
struct uprobe_multi_link_info {
	__u32 type;
	__u32 id;
	__u32 prog_id;
	__u32 pad;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 path_size;
	__u32 count;
	__u32 flags;
	__u32 pid;
};

static int link__print(__u32 id)
{
	struct uprobe_multi_link_info info;
	__u32 len = sizeof(info);
	int fd, err;

	fd = bpf_link_get_fd_by_id(id);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* gone meanwhile */
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (err)
		return -errno;
	if (info.type != LINK_TYPE_UPROBE_MULTI)
		return 0;
	/* a kernel without uprobe_multi link info leaves count 0 too */
	if (!info.count)
		printf("%u ? %u\n", info.id, info.prog_id);
	else
		printf("%u %u %u\n", info.id, info.pid, info.prog_id);
	return 0;
}

int main(int argc, char **argv)
{
	__u32 id = 0;
	int err;

	if (argc > 1) {
		fprintf(stderr, "error: unknown argument '%s'\nusage: uprobe-links\n", argv[1]);
		return 129;
	}
	while (!bpf_link_get_next_id(id, &id)) {
		err = link__print(id);
		if (err) {
			fprintf(stderr, "error: link %u: %s\n", id, strerror(-err));
			return 1;
		}
	}
	if (errno != ENOENT) {
		fprintf(stderr, "error: cannot list BPF links: %s\n", strerror(errno));
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
