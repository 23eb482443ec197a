/*
 * Starts malloc_free (100 Malloc, 60 Free), from this program's directory,
 * in the way argv[1] names: "vfork" (vfork + exec), "posix_spawn", "envi"
 * (exec with an empty environment: no shim), "preload" (exec with an
 * LD_PRELOAD of the program's own: no shim either).  This program
 * allocates nothing of its own before the start.
 */
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char self[PATH_MAX], target[PATH_MAX + 32], lib[PATH_MAX + 32];
	char *child_argv[] = { "malloc_free", NULL };
	char preload[PATH_MAX + 64];
	char *no_env[] = { NULL }, *own_env[] = { preload, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n < 0 || argc != 2)
		return 2;
	self[n] = 0;
	snprintf(target, sizeof(target), "%s/malloc_free", dirname(self));
	snprintf(lib, sizeof(lib), "%s/libdl_alloc.so", self);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", lib);
	if (!strcmp(argv[1], "posix_spawn")) {
		if (posix_spawn(&pid, target, NULL, NULL, child_argv, environ))
			return 1;
	} else if (!strcmp(argv[1], "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve(target, child_argv, environ);
			_exit(127);
		}
	} else {
		pid = fork();
		if (pid == 0) {
			execve(target, child_argv, strcmp(argv[1], "envi") ? own_env : no_env);
			_exit(127);
		}
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
		return 1;
	return 0;
}
