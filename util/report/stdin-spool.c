// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/report/stdin-spool.h"
#include "util/util.h"

#define COPY_CHUNK	(1 << 16)

/* where standard input started; -1: not made rereadable */
static off_t stdin_start = -1;

static int spool_fd(void)
{
	const char *dir = getenv("TMPDIR");
	int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		fd = memfd_create("memtrack-stdin", MFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int copy_all(int from, int to)
{
	char *buf = malloc(COPY_CHUNK);
	ssize_t n;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && (n = read(from, buf, COPY_CHUNK)) != 0) {
		if (n < 0)
			err = errno == EINTR ? 0 : -errno;
		else
			err = write_all(to, buf, n);
	}
	free(buf);
	return err;
}

int stdin__make_rereadable(void)
{
	off_t at = lseek(STDIN_FILENO, 0, SEEK_CUR);
	int fd, err;

	if (at >= 0) {
		stdin_start = at;
		return 0;
	}
	if (errno != ESPIPE)
		return -errno;
	fd = spool_fd();
	if (fd < 0)
		return fd;
	err = copy_all(STDIN_FILENO, fd);
	if (!err && dup2(fd, STDIN_FILENO) < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	stdin_start = 0;
	return 0;
}

int stdin__rewind(void)
{
	if (stdin_start < 0)
		return 0;
	return lseek(STDIN_FILENO, stdin_start, SEEK_SET) < 0 ? -errno : 0;
}
