/*
 * What a shell does for a simple command: a vfork child allocates in the
 * memory it shares with its parent (dash mallocs a block for the
 * command's arguments), then execs; the parent frees the block later.
 * The child's block is the parent's memory: 1 malloc(512) and its free,
 * both the parent's; the exec'd program (malloc_free, next to this one)
 * makes its own 100 Malloc and 60 Free.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char *volatile block;

int main(void)
{
	char self[PATH_MAX], target[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(target, sizeof(target), "%s/malloc_free", dirname(self));
	pid = vfork();
	if (pid == 0) {
		block = malloc(512);
		execl(target, "malloc_free", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 1;
	free(block);
	return 0;
}
