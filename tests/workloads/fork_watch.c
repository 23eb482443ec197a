/*
 * fork_watch N M: forks N children one after another, each making M
 * malloc(3333) + free, and waits for each as a job-control shell does
 * (WUNTRACED).  Prints "stops K": how many of them it saw stopped, which a
 * profiler's hold at fork would be.  Exit 0, or 1.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void allocate(int m)
{
	void *volatile p;
	int i;

	for (i = 0; i < m; i++) {
		p = malloc(3333);
		free(p);
	}
}

/* waits for pid's end; counts the stops on the way */
static int reap(pid_t pid, int *stops)
{
	int status;

	for (;;) {
		if (waitpid(pid, &status, WUNTRACED) != pid)
			return -1;
		if (!WIFSTOPPED(status))
			return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
		(*stops)++;
		kill(pid, SIGCONT);
	}
}

int main(int argc, char **argv)
{
	int n, m, i, stops = 0, failed = 0;
	pid_t pid;

	if (argc != 3)
		return 1;
	n = atoi(argv[1]);
	m = atoi(argv[2]);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			allocate(m);
			_exit(0);
		}
		failed |= reap(pid, &stops);
	}
	printf("stops %d\n", stops);
	return failed ? 1 : 0;
}
