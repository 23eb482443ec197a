/*
 * shim_fds plain|dup2|lowered: what descriptors a program sees with the
 * preload shim in it.  Prints the two descriptors pipe() gives ("pipe 3 4"
 * where 0-2 alone are open), then where the shim's socket lies: "shim fd
 * top" within 16 below the soft limit of descriptors (or 1024), "shim fd
 * above" past the limit, "shim fd low" elsewhere, "shim fd none" without
 * one (the socket is found by its peer's name, @memtrack-...).
 *
 * dup2: then dup2()s stderr onto the shim's socket, as a program that owns
 * its numbers may, and starts a thread: 100 malloc(4444) + free.
 * lowered: lowers its soft limit to 64 and says where the socket is, then
 * closes it and starts the thread.
 * Each then prints "shim fd ..." again.  Exits 0, 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int limit(void)
{
	struct rlimit lim;

	getrlimit(RLIMIT_NOFILE, &lim);
	return lim.rlim_cur < 1024 ? (int)lim.rlim_cur : 1024;
}

/* a unix socket connected to an abstract @memtrack-... name */
static int is_shim_socket(int fd)
{
	struct sockaddr_un addr;
	socklen_t len = sizeof(addr);

	if (getpeername(fd, (struct sockaddr *)&addr, &len) || addr.sun_family != AF_UNIX ||
	    len < offsetof(struct sockaddr_un, sun_path) + 10)
		return 0;
	return !addr.sun_path[0] && !strncmp(addr.sun_path + 1, "memtrack-", 9);
}

static int shim_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	while (d && fd < 0 && (e = readdir(d))) {
		int n = atoi(e->d_name);

		if (e->d_name[0] != '.' && n != dirfd(d) && is_shim_socket(n))
			fd = n;
	}
	if (d)
		closedir(d);
	return fd;
}

static void print_shim_fd(void)
{
	int fd = shim_fd();

	printf("shim fd %s\n", fd < 0 ? "none" : fd >= limit() ? "above" :
				fd >= limit() - 16 ? "top" : "low");
}

static void *allocate(void *arg)
{
	void *volatile p;
	int i;

	for (i = 0; i < 100; i++) {
		p = malloc(4444);
		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int fds[2], fd;
	pthread_t t;

	if (argc != 2 || (strcmp(argv[1], "plain") && strcmp(argv[1], "dup2") &&
			  strcmp(argv[1], "lowered")))
		return 2;
	if (pipe(fds))
		return 1;
	printf("pipe %d %d\n", fds[0], fds[1]);
	close(fds[0]);
	close(fds[1]);
	print_shim_fd();
	if (!strcmp(argv[1], "plain"))
		return 0;
	if (!strcmp(argv[1], "lowered")) {
		struct rlimit lim;

		getrlimit(RLIMIT_NOFILE, &lim);
		lim.rlim_cur = 64;
		if (setrlimit(RLIMIT_NOFILE, &lim))
			return 1;
		print_shim_fd();
	}
	fd = shim_fd();
	if (fd >= 0 && !strcmp(argv[1], "dup2"))
		dup2(2, fd);
	else if (fd >= 0)
		close(fd);
	if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 1;
	print_shim_fd();
	fflush(stdout);
	return 0;
}
