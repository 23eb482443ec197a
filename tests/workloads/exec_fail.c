/*
 * 10 malloc(1111), then execs that fail (no such file, a directory, a
 * file that is not executable), then 10 malloc(2222); all 20 freed.
 */
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	char *argv[] = { "nothing", NULL };
	void *volatile p[20];
	int i;

	for (i = 0; i < 10; i++)
		p[i] = malloc(1111);
	if (!execve("/nonexistent/memtrack-exec-fail", argv, environ) || !execve("/", argv, environ) ||
	    !execve("/etc/hostname", argv, environ))
		return 1;
	for (i = 10; i < 20; i++)
		p[i] = malloc(2222);
	for (i = 0; i < 20; i++)
		free(p[i]);
	return 0;
}
