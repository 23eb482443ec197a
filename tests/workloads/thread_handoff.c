/*
 * One thread allocates, another frees: thread A makes 10 blocks of 1000
 * bytes and ends; thread B then frees 6 of them; 4 stay live at exit.
 * The threads run one after the other.
 */
#include <pthread.h>
#include <stdlib.h>

#define BLOCKS 10
#define FREED 6

static void *volatile blocks[BLOCKS];

static void *allocate(void *arg)
{
	int i;

	for (i = 0; i < BLOCKS; i++)
		blocks[i] = malloc(1000);
	return arg;
}

static void *release(void *arg)
{
	int i;

	for (i = 0; i < FREED; i++)
		free(blocks[i]);
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, allocate, NULL) || pthread_join(t, NULL))
		return 1;
	if (pthread_create(&t, NULL, release, NULL) || pthread_join(t, NULL))
		return 1;
	return 0;
}
