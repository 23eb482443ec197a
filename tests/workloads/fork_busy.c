/*
 * fork from a process whose 8 threads allocate all the time: each thread
 * does 20000 malloc(2222) + free; while they run, the main thread forks a
 * child that does 77 malloc(7777) and frees 7 of them, and waits for it.
 * = parent: 160000 malloc(2222) + 8 thread calloc (glibc's dtv) and
 *   160000 free; child: 77 malloc(7777), 7 free.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 8
#define ALLOCS 20000

static atomic_int running;

static void *busy(void *arg)
{
	void *volatile p;
	int i;

	(void)arg;
	atomic_fetch_add(&running, 1);
	for (i = 0; i < ALLOCS; i++) {
		p = malloc(2222);
		free(p);
	}
	return NULL;
}

static void child(void)
{
	void *volatile p[77];
	int i;

	for (i = 0; i < 77; i++)
		p[i] = malloc(7777);
	for (i = 0; i < 7; i++)
		free(p[i]);
	_exit(0);
}

int main(void)
{
	pthread_t t[THREADS];
	int i, status;
	pid_t pid;

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, busy, NULL))
			return 1;
	while (atomic_load(&running) < THREADS)
		;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child();
	if (waitpid(pid, &status, 0) != pid || status)
		return 1;
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
