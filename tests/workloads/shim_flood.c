// SPDX-License-Identifier: GPL-2.0
/*
 * A neighbour that floods memtrack's shim socket: shim_flood <name> <n>
 * <ready-file> <seconds> opens n connections to the abstract socket <name>
 * and says nothing on them, creates <ready-file>, holds them <seconds>,
 * and prints how many it opened.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = strlen(name);
	int fd;

	if (len + 1 > sizeof(addr.sun_path))
		return -1;
	memcpy(addr.sun_path + 1, name, len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&addr, offsetof(struct sockaddr_un, sun_path) + 1 + len)) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct rlimit lim;
	int i, n, opened = 0, fd;

	if (argc != 5) {
		fprintf(stderr, "usage: shim_flood <name> <n> <ready-file> <seconds>\n");
		return 2;
	}
	n = atoi(argv[2]);
	if (!getrlimit(RLIMIT_NOFILE, &lim)) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
	for (i = 0; i < n; i++)
		opened += connect_to(argv[1]) >= 0;
	fd = open(argv[3], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	sleep(atoi(argv[4]));
	printf("%d\n", opened);
	return 0;
}
