/*
 * 8 threads, each 1000 malloc(4242) and 1000 free.  pthread_create itself
 * allocates too (thread descriptors): count the 4242-byte ones.
 */
#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define ALLOCS 1000
#define SIZE 4242

static void *worker(void *arg)
{
	void *volatile p;
	int i;

	(void)arg;
	for (i = 0; i < ALLOCS; i++) {
		p = malloc(SIZE);
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	int i;

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
