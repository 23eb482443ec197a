/*
 * watch_stops N [GO]: forks a child that makes a malloc(1), then N
 * malloc(2222) + free (once the file GO exists, if given), and waits for it
 * as a job-control shell does (WUNTRACED | WCONTINUED).  Prints "stops K" with the number of stops
 * it was told of: what memtrack's pauses showed of themselves.  Exit 0, or 1.
 *
 * The count starts once the child runs: under BPF memtrack holds a new
 * child at its fork with a SIGSTOP until its probes are attached, a stop
 * the cgroup freezer cannot replace (tests/shell/track_freezer.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* a test's word that it is ready for the mallocs (a stalled poller, tests/shell/track_freezer.sh) */
static void wait_for_file(const char *path)
{
	struct timespec ms = { 0, 1000000 };

	while (path && access(path, F_OK))
		nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, stops = 0, status, i, fds[2];
	void *volatile p;
	char c;
	pid_t pid;

	if (pipe(fds))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(fds[0]);
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		/* a first call (its probes, or its shim's hello), then a second write: past it */
		p = malloc(1);
		free(p);
		if (write(fds[1], "m", 1) != 1)
			_exit(1);
		close(fds[1]);
		wait_for_file(argc > 2 ? argv[2] : NULL);
		for (i = 0; i < n; i++) {
			p = malloc(2222);
			free(p);
		}
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		return 1;
	for (;;) {
		if (waitpid(pid, &status, WUNTRACED | WCONTINUED) != pid)
			return 1;
		if (WIFSTOPPED(status))
			stops++;
		else if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
	}
	printf("stops %d\n", stops);
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : 1;
}
