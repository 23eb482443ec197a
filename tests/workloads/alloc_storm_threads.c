/*
 * alloc_storm_threads THREADS ALLOCS: THREADS threads of one process, each
 * doing ALLOCS malloc of 16..1039 bytes, each freed at once: THREADS*ALLOCS
 * malloc and THREADS*ALLOCS free from the workers.  main() allocates nothing
 * itself, but glibc's pthread_create does: on glibc 2.36, one calloc per
 * thread for its TLS vector (dtv), which stays cached with the thread's stack
 * and is not freed before exit.  So a tracer sees THREADS*ALLOCS frees and
 * THREADS*ALLOCS malloc + THREADS calloc.  The threads start together, so
 * they hit the allocator (and any probe on it) at the same time.
 */
#include <pthread.h>
#include <stdlib.h>

static long allocs;
static pthread_barrier_t start;

static void *storm(void *arg)
{
	void *volatile p;
	long i;

	(void)arg;
	pthread_barrier_wait(&start);
	for (i = 0; i < allocs; i++) {
		p = malloc(16 + (i & 1023));
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[256];	/* on the stack: no malloc of our own */
	long nthreads, i;

	if (argc != 3)
		return 2;
	nthreads = atol(argv[1]);
	allocs = atol(argv[2]);
	if (nthreads < 1 || nthreads > 256 || allocs < 0)
		return 2;
	if (pthread_barrier_init(&start, NULL, nthreads))
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i], NULL, storm, NULL))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
