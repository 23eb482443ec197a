/*
 * For memtrack track -p: mallocs 50 blocks of 99 bytes, says "ready" on
 * stdout and waits for SIGUSR1.  Then 1000 x malloc(321) + free, frees the
 * 50 blocks from before, and forks a child doing 100 x malloc(123) + free.
 * After attach: 1000 + 100 Malloc, 1100 Free, and 50 frees of unknown blocks.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void churn(int n, size_t size)
{
	void *volatile p;
	int i;

	for (i = 0; i < n; i++) {
		p = malloc(size);
		free(p);
	}
}

int main(void)
{
	void *early[50];
	sigset_t set;
	int i, sig, status;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < 50; i++)
		early[i] = malloc(99);
	if (write(1, "ready\n", 6) != 6 || sigwait(&set, &sig))
		return 1;
	churn(1000, 321);
	for (i = 0; i < 50; i++)
		free(early[i]);
	pid = fork();
	if (pid == 0) {
		churn(100, 123);
		_exit(0);
	}
	return waitpid(pid, &status, 0) != pid || status;
}
