/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_UNIT_CACHE_FILE_H
#define MEMTRACK_UNIT_CACHE_FILE_H

/*
 * For the tests of what a cache refuses to read: a scratch directory, and
 * a cache file of it spoilt in place the ways another user or a crash
 * would leave it.  Each returns true when done.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* a new directory from the mkdtemp() template path, opened: its fd, or -1 */
static inline int scratch_dir_make(char *path)
{
	return mkdtemp(path) ? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

/* the directory, its fd closed, removed with what is in it */
static inline bool scratch_dir_remove(const char *path, int dir)
{
	char cmd[4200];

	close(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return !system(cmd);
}

static inline bool cache_file_chmod(int dir, const char *name, mode_t mode)
{
	return !fchmodat(dir, name, mode, 0);
}

/* cut to size bytes; size < 0: that many bytes fewer */
static inline bool cache_file_truncate(int dir, const char *name, off_t size)
{
	int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
	struct stat st;
	bool ok;

	if (fd < 0)
		return false;
	ok = !fstat(fd, &st) && !ftruncate(fd, size < 0 ? st.st_size + size : size);
	close(fd);
	return ok;
}

static inline bool cache_file_write_at(int dir, const char *name, off_t at, const void *buf,
				       size_t len)
{
	int fd = openat(dir, name, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && pwrite(fd, buf, len, at) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok;
}

static inline bool cache_file_append_byte(int dir, const char *name)
{
	int fd = openat(dir, name, O_WRONLY | O_APPEND | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, "x", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

#endif
