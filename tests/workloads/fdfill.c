/*
 * fdfill THREADS: what a daemon may do before it starts its threads.  It
 * closes every descriptor above stderr, lowers its descriptor limit to 256
 * if it is higher, takes every descriptor left, then starts THREADS threads
 * one after the other, each 1000 malloc(5555) and free.  Prints
 * "THREADS threads of 1000 malloc(5555)" and exits 0; 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *allocate(void *arg)
{
	void *volatile p;
	int i;

	for (i = 0; i < 1000; i++) {
		p = malloc(5555);
		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct rlimit lim;
	int i, threads;

	if (argc != 2 || (threads = atoi(argv[1])) < 1)
		return 2;
	if (syscall(SYS_close_range, 3U, ~0U, 0) || getrlimit(RLIMIT_NOFILE, &lim))
		return 1;
	if (lim.rlim_cur > 256) {
		lim.rlim_cur = 256;
		if (setrlimit(RLIMIT_NOFILE, &lim))
			return 1;
	}
	while (dup(0) >= 0)
		;
	for (i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
			return 1;
	}
	printf("%d threads of 1000 malloc(5555)\n", threads);
	return 0;
}
