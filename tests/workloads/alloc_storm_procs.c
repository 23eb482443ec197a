/*
 * alloc_storm_procs PROCS ALLOCS: PROCS child processes, each doing ALLOCS
 * malloc of 16..1039 bytes, each freed at once.  The parent allocates nothing.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void storm(long allocs)
{
	void *volatile p;
	long i;

	for (i = 0; i < allocs; i++) {
		p = malloc(16 + (i & 1023));
		free(p);
	}
}

int main(int argc, char **argv)
{
	long procs, allocs, i;
	int status, failed = 0;

	if (argc != 3)
		return 2;
	procs = atol(argv[1]);
	allocs = atol(argv[2]);
	for (i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			storm(allocs);
			_exit(0);
		}
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}
