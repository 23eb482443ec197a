/*
 * detach_tree PIDFILE: a tree memtrack cannot wait out.  The root forks a
 * child that ignores SIGINT and SIGTERM, makes 100 malloc(5555) and
 * sleeps; and a daemon (forked twice, in a session of its own) that makes
 * 50 malloc(4444) and sleeps.  Once both have allocated, their pids go to
 * PIDFILE ("child daemon\n", written whole); then the root waits for its
 * child, which never ends.  The test kills them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void allocate_and_sleep(int n, size_t size, volatile int *ready)
{
	void *volatile p;
	int i;

	for (i = 0; i < n; i++)
		p = malloc(size);
	(void)p;
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

static pid_t start_daemon(volatile int *ready, volatile pid_t *pid)
{
	pid_t first = fork();

	if (first == 0) {
		setsid();
		if (fork() == 0) {
			*pid = getpid();
			allocate_and_sleep(50, 4444, ready);
		}
		_exit(0);
	}
	return first;
}

int main(int argc, char **argv)
{
	struct shared { int child_ready, daemon_ready; pid_t daemon; } *sh;
	char line[64];
	pid_t child, first;
	int fd, len;

	if (argc != 2)
		return 2;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	child = fork();
	if (child == 0) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		allocate_and_sleep(100, 5555, &sh->child_ready);
	}
	first = start_daemon(&sh->daemon_ready, &sh->daemon);
	waitpid(first, NULL, 0);
	while (!__atomic_load_n(&sh->child_ready, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&sh->daemon_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	len = snprintf(line, sizeof(line), "%d %d\n", child, sh->daemon);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, line, len) != len)
		return 1;
	close(fd);
	waitpid(child, NULL, 0);
	return 0;
}
