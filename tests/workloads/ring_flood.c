/*
 * ring_flood <n> <size>: a process that registers n rings of <size> bytes
 * on its own shim's connection, each with its write position at the end of
 * a ring never written, then says "rings sent" on it (memtrack prints the
 * words of a shim) and sleeps until stdin closes.  Without a connection
 * of the shim's it says so and exits 3.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* preload/shim-abi.h's words, as a hostile process would read them */
#define HDR_SIZE	4096
#define PROD_OFFSET	64
#define MAGIC		0x4d54534dU
#define MSG_REGISTER	2
#define MSG_WARN	5

struct reg {
	uint32_t msg, tid;
	uint64_t size;
};

/* the shim's connection: a SOCK_SEQPACKET socket among our descriptors */
static int find_sock(void)
{
	int fd, type;
	socklen_t len;

	for (fd = 3; fd < 65536; fd++) {
		struct stat st;

		len = sizeof(type);
		if (fstat(fd, &st) || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) || type != SOCK_SEQPACKET)
			continue;
		return fd;
	}
	return -1;
}

static int send_ring(int sock, uint32_t tid, uint64_t size)
{
	struct reg m = { .msg = MSG_REGISTER, .tid = tid, .size = size };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fd = memfd_create("memtrack-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING), ok;
	uint32_t hdr[4] = { MAGIC, 1, (uint32_t)size, (uint32_t)(size >> 32) };

	if (fd < 0 || ftruncate(fd, HDR_SIZE + size) ||
	    pwrite(fd, hdr, sizeof(hdr), 0) != sizeof(hdr) ||
	    pwrite(fd, &size, sizeof(size), PROD_OFFSET) != sizeof(size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ok = sendmsg(sock, &mh, MSG_NOSIGNAL) == sizeof(m);
	close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct { uint32_t msg, len; char text[16]; } warn = { MSG_WARN, 10, "rings sent" };
	void *volatile p = malloc(100);	/* the shim connects */
	int i, n, sock, sent = 0;
	uint64_t size;
	char c;

	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	size = strtoull(argv[2], NULL, 0);
	sock = find_sock();
	if (sock < 0) {
		fprintf(stderr, "ring_flood: no shim connection\n");
		return 3;
	}
	for (i = 0; i < n; i++)
		sent += !send_ring(sock, 1000000 + i, size);
	send(sock, &warn, 8 + warn.len, MSG_NOSIGNAL);
	printf("%d\n", sent);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	free(p);
	return 0;
}
