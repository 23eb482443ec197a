/*
 * Closes every descriptor above stderr, as daemons do (the preload shim's
 * connection to memtrack among them), then goes on allocating, and starts
 * a thread: 1 malloc(1111) + free before, 50 malloc(2222) + free after,
 * then a thread with 100 malloc(4444) + free.  Exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
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

int main(void)
{
	void *volatile p = malloc(1111);
	pthread_t t;
	int i;

	free(p);
	if (syscall(SYS_close_range, 3U, ~0U, 0))
		return 1;
	for (i = 0; i < 50; i++) {
		p = malloc(2222);
		free(p);
	}
	if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
