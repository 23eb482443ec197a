/*
 * fds_then_thread close|exhaust|both: a thread started after the process has
 * done something to its file descriptors, which the preload shim needs
 * (its connection to memtrack, and one to make each thread's ring).
 *
 * close: closes every descriptor above stderr, as daemons do (the shim's
 * connection among them): 1 malloc(1111) + free before, 50 malloc(2222) +
 * free after, then the thread.
 * exhaust: 1 malloc(1111) + free, then lowers its limit to 64 descriptors
 * and takes every one left, then the thread.
 * both: close, then exhaust, then the thread: the shim has no connection
 * left, and no descriptor to make one.
 * The thread does 100 malloc(4444) + free.  Exits 0, 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static int close_all(void)
{
	void *volatile p;
	int i;

	if (syscall(SYS_close_range, 3U, ~0U, 0))
		return -1;
	for (i = 0; i < 50; i++) {
		p = malloc(2222);
		free(p);
	}
	return 0;
}

static int exhaust(void)
{
	struct rlimit lim = { 64, 64 };

	if (setrlimit(RLIMIT_NOFILE, &lim))
		return -1;
	while (dup(0) >= 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	void *volatile p;
	pthread_t t;

	if (argc != 2 || (strcmp(argv[1], "close") && strcmp(argv[1], "exhaust") &&
			  strcmp(argv[1], "both")))
		return 2;
	p = malloc(1111);
	free(p);
	if ((strcmp(argv[1], "exhaust") && close_all()) ||
	    (strcmp(argv[1], "close") && exhaust()) ||
	    pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
