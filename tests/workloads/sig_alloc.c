/*
 * A program that allocates in a signal handler, where it knows the
 * handler interrupts no allocator call of its own: 50 raise(SIGUSR1), each
 * handler mallocs 3333 bytes and frees them; the main thread itself
 * mallocs and frees 10 blocks of 1111.
 * = 60 Malloc, 60 Free; 50 of 3333 bytes.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void on_usr1(int sig)
{
	void *volatile p = malloc(3333);

	(void)sig;
	free(p);
}

int main(void)
{
	struct sigaction sa;
	void *volatile p;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	for (i = 0; i < 50; i++)
		raise(SIGUSR1);
	for (i = 0; i < 10; i++) {
		p = malloc(1111);
		free(p);
	}
	return 0;
}
