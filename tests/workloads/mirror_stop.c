/*
 * A parent that mirrors its child's stops, as sudo and su do for job
 * control: it waits for the child with WUNTRACED, and when the child
 * stops, stops itself the same way; once continued, it continues the
 * child.  The child makes N (default 100) malloc(4321) + free.  Under BPF,
 * memtrack holds the child at its fork, and stops it at a full ring: the
 * parent must not stay stopped.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	void *volatile p;
	int status, i;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (i = 0; i < n; i++) {
			p = malloc(4321);
			free(p);
		}
		_exit(0);
	}
	for (;;) {
		if (waitpid(pid, &status, WUNTRACED) != pid)
			return 1;
		if (!WIFSTOPPED(status))
			break;
		kill(getpid(), WSTOPSIG(status));
		kill(pid, SIGCONT);
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
