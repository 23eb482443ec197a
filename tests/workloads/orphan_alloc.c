/*
 * Leaves an orphan that allocates after the root has exited: the root
 * forks a child, which forks a grandchild and exits; the root waits for
 * the child and exits.  The grandchild waits until its parent is gone,
 * then makes 10 malloc(6666) and frees 4, and exits 7.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void grandchild(pid_t parent)
{
	struct timespec ts = { .tv_nsec = 20 * 1000 * 1000 };
	void *volatile p[10];
	int i;

	while (getppid() == parent)
		nanosleep(&ts, NULL);
	nanosleep(&ts, NULL);
	for (i = 0; i < 10; i++)
		p[i] = malloc(6666);
	for (i = 0; i < 4; i++)
		free(p[i]);
	_exit(7);
}

int main(void)
{
	pid_t child = fork();
	int status;

	if (child < 0)
		return 1;
	if (child == 0) {
		pid_t me = getpid();

		if (fork() == 0)
			grandchild(me);
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child)
		return 1;
	return 0;
}
