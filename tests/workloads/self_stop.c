/* 1 malloc, stops itself with SIGSTOP, and after SIGCONT 1 more malloc. */
#include <signal.h>
#include <stdlib.h>

int main(void)
{
	void *volatile p = malloc(10);

	raise(SIGSTOP);
	p = malloc(20);
	(void)p;
	return 0;
}
