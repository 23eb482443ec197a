/*
 * Forks a child that execs malloc_free (100 Malloc, 60 Free) from this
 * program's directory; the parent mallocs and frees 7.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char self[PATH_MAX], target[PATH_MAX + 32];
	void *volatile p[7];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i, status;
	pid_t pid;

	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(target, sizeof(target), "%s/malloc_free", dirname(self));
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		execl(target, "malloc_free", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 7; i++)
		p[i] = malloc(64);
	for (i = 0; i < 7; i++)
		free(p[i]);
	if (waitpid(pid, &status, 0) != pid || status)
		return 1;
	return 0;
}
