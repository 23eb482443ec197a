/*
 * cont_child: forks a child that makes 100000 malloc(24) and free, and
 * sends it SIGCONT every 10 us while it runs, as a parent that resumes its
 * children would: a hold of memtrack's at the child's first instruction
 * may be ended by it before the child's probes are there.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	pid_t pid = fork();
	int i, status;

	if (pid < 0)
		return 1;
	if (!pid) {
		for (i = 0; i < 100000; i++) {
			void *volatile p = malloc(24);

			free(p);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGCONT);
		usleep(10);
	}
	return 0;
}
