/*
 * A thread that starts when its process has no file descriptor to spare
 * (the preload shim needs one to make the thread's ring): the main thread
 * does 1 malloc(1111) + free, lowers its limit to 64 descriptors and takes
 * every one left, then starts a thread that does 100 malloc(4444) + free.
 * Exits 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
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
	struct rlimit lim = { 64, 64 };
	void *volatile p = malloc(1111);
	pthread_t t;

	free(p);
	if (setrlimit(RLIMIT_NOFILE, &lim))
		return 1;
	while (dup(0) >= 0)
		;
	if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
