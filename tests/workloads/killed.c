/* 5 malloc, then killed by SIGKILL: a shell would report 137. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	void *volatile p;
	int i;

	for (i = 0; i < 5; i++)
		p = malloc(1000);
	(void)p;
	kill(getpid(), SIGKILL);
	return 0;
}
