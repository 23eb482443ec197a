// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/bpf_kernel_offsets.h"
#include "util/probe/bpf_offsets_cache.h"
#include "util/usage.h"
#include "util/util.h"

#define CACHE_DIR	"/run/memtrack"
#define CACHE_FILE	"kernel-offsets"
#define BOOT_ID		"/proc/sys/kernel/random/boot_id"
#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

static const char magic[8] = "MTKOFF1";

struct offsets_file {
	char magic[8];
	struct offsets_key key;
	struct mt_kernel_offsets ko;
};

int offsets_cache__key(struct offsets_key *k)
{
	int fd = open(BOOT_ID, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -errno;
	n = read(fd, k->boot_id, sizeof(k->boot_id) - 1);
	close(fd);
	/* 36 characters and a newline: another length is not a boot id */
	if (n != 37 || k->boot_id[36] != '\n')
		return -EINVAL;
	k->boot_id[36] = 0;
	if (stat(VMLINUX_BTF, &st))
		return -errno;
	k->btf_size = st.st_size;
	k->layout = kernel_offsets__layout();
	return 0;
}

int offsets_cache__load(int dir, const struct offsets_key *k, struct mt_kernel_offsets *ko)
{
	struct offsets_file f;
	struct stat st;
	int fd = openat(dir, CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return -ENOENT;
	ok = !fstat(fd, &st) && stat_ours_alone(&st, S_IFREG, 077) && st.st_size == sizeof(f) &&
	     pread(fd, &f, sizeof(f), 0) == sizeof(f) &&
	     !memcmp(f.magic, magic, sizeof(magic)) && !memcmp(&f.key, k, sizeof(*k));
	close(fd);
	if (!ok)
		return -ENOENT;
	*ko = f.ko;
	return 0;
}

void offsets_cache__save(int dir, const struct offsets_key *k,
			 const struct mt_kernel_offsets *ko)
{
	struct offsets_file f = { .key = *k, .ko = *ko };
	char tmp[64];
	int fd;
	bool ok;

	memcpy(f.magic, magic, sizeof(magic));
	snprintf(tmp, sizeof(tmp), CACHE_FILE ".%d.tmp", (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = write(fd, &f, sizeof(f)) == sizeof(f);
	if (close(fd) || !ok || renameat(dir, tmp, dir, CACHE_FILE))
		unlinkat(dir, tmp, 0);
}

int offsets_cache__open_dir(void)
{
	struct stat st;
	int fd;

	if (geteuid())
		return -1;
	if (mkdir(CACHE_DIR, 0700) && errno != EEXIST)
		return -1;
	fd = open(CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !stat_ours_alone(&st, S_IFDIR, 022)) {
		close(fd);
		return -1;
	}
	return fd;
}

int kernel_offsets__read_cached(struct mt_kernel_offsets *ko)
{
	struct offsets_key k;
	int dir = offsets_cache__open_dir(), err;

	if (dir < 0 || offsets_cache__key(&k)) {
		if (dir >= 0)
			close(dir);
		return kernel_offsets__read(ko);
	}
	if (!offsets_cache__load(dir, &k, ko)) {
		pr_debug("the kernel's offsets of this boot, from " CACHE_DIR "/" CACHE_FILE "\n");
		close(dir);
		return 0;
	}
	err = kernel_offsets__read(ko);
	if (!err)
		offsets_cache__save(dir, &k, ko);
	close(dir);
	return err;
}
