/*
 * fork from a thread that has not called the allocator yet: the main
 * thread does 1 malloc(1111) + free and starts a thread, which forks at
 * once; the child does 10 malloc(3333) + free and exits 0.  The thread
 * waits for it and the process exits with the child's status (a signal
 * that killed the child: 128 + its number).
 * = parent: 1 malloc(1111), 1 free, 1 calloc (the thread's dtv);
 *   child: 10 malloc(3333), 10 free.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *fork_at_once(void *arg)
{
	int *status = arg, i;
	void *volatile p;
	pid_t pid = fork();

	if (pid == 0) {
		for (i = 0; i < 10; i++) {
			p = malloc(3333);
			free(p);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, status, 0) != pid)
		*status = -1;
	return NULL;
}

int main(void)
{
	void *volatile p = malloc(1111);
	int status = -1;
	pthread_t t;

	free(p);
	if (pthread_create(&t, NULL, fork_at_once, &status) || pthread_join(t, NULL))
		return 1;
	if (status == -1)
		return 1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
