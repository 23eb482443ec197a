// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

void name_thread(const char *fmt, ...)
{
	char name[16] = "mt-";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name + 3, sizeof(name) - 3, fmt, ap);
	va_end(ap);
	prctl(PR_SET_NAME, name);
}

uint64_t self_rss_bytes(void)
{
	unsigned long size, resident;
	char buf[128];
	ssize_t n;
	int fd;

	fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
		return 0;
	return (uint64_t)resident * sysconf(_SC_PAGESIZE);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

const char *human_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = n;
	unsigned int u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (u)
		snprintf(buf, size, "%.1f %s", v, units[u]);
	else
		snprintf(buf, size, "%" PRIu64 " B", n);
	return buf;
}

int epoll_add_fd(int epoll_fd, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int open_regular(const char *path)
{
	int at = open(path, O_PATH | O_CLOEXEC), fd;
	char by_fd[32];
	struct stat st;

	if (at < 0)
		return -errno;
	if (fstat(at, &st) || !S_ISREG(st.st_mode)) {
		close(at);
		return -EINVAL;
	}
	/* the very file looked at, opened for reading now */
	snprintf(by_fd, sizeof(by_fd), "/proc/self/fd/%d", at);
	fd = open(by_fd, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(at);
	return fd;
}

bool stat_ours_alone(const struct stat *st, mode_t type, mode_t others)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() &&
	       !(st->st_mode & others);
}

int open_program(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *end;
	int fd = -ENOENT;

	if (strchr(name, '/')) {
		snprintf(buf, len, "%s", name);
		return open_regular(buf);
	}
	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (; fd < 0 && *path; path = *end ? end + 1 : end) {
		int dir_len;

		end = strchrnul(path, ':');
		dir_len = end - path;
		/* an empty entry is the current directory */
		if ((size_t)snprintf(buf, len, "%.*s/%s", dir_len ? dir_len : 1,
				     dir_len ? path : ".", name) >= len || access(buf, X_OK))
			continue;
		fd = open_regular(buf);
	}
	return fd;
}
