/*
 * The parent mallocs 10, forks, waits, frees its 10.  The child mallocs
 * 20 and frees 5 of them.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	void *volatile p[20];
	int i, status;
	pid_t pid;

	for (i = 0; i < 10; i++)
		p[i] = malloc(100);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (i = 0; i < 20; i++)
			p[i] = malloc(200);
		for (i = 0; i < 5; i++)
			free(p[i]);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || status)
		return 1;
	for (i = 0; i < 10; i++)
		free(p[i]);
	return 0;
}
