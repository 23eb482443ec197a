/*
 * stop_child ROUNDS ALLOCS: each round forks a child that does ALLOCS
 * malloc(24) and free, counting them in shared memory.  The parent stops it
 * (SIGSTOP) after round % 4 ms, checks for 40 ms that it stays stopped (its
 * count does not move), resumes it (SIGCONT) and waits for it.  Exit 0, or 1
 * naming the first round whose child ran while its parent had it stopped.
 * A child done with its allocations waits for its parent's word to exit: an
 * exiting process ignores SIGSTOP, and a fast child once looked as if it
 * had run on while stopped.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static char state_of(pid_t pid)
{
	char path[64], buf[256], *p, state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return state;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1])
		state = p[2];
	fclose(f);
	return state;
}

static void storm(volatile long *count, long allocs)
{
	void *volatile p;
	long i;

	for (i = 0; i < allocs; i++) {
		p = malloc(24);
		free(p);
		(*count)++;
	}
}

/* 0 when the child stayed stopped for the 40 ms it was to */
static int stop_and_watch(pid_t pid, volatile long *count)
{
	long seen;
	int i;

	kill(pid, SIGSTOP);
	for (i = 0; i < 2000 && state_of(pid) != 'T'; i++)
		sleep_ms(1);
	seen = *count;
	for (i = 0; i < 8; i++) {
		sleep_ms(5);
		if (*count != seen || state_of(pid) != 'T')
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long rounds, allocs, r;
	volatile long *count, *done;
	int status;

	if (argc != 3)
		return 2;
	rounds = atol(argv[1]);
	allocs = atol(argv[2]);
	count = mmap(NULL, 2 * sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (count == MAP_FAILED)
		return 1;
	done = count + 1;
	for (r = 0; r < rounds; r++) {
		pid_t pid;
		int ran;

		*count = 0;
		*done = 0;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			storm(count, allocs);
			while (!*done)
				sleep_ms(1);
			_exit(0);
		}
		sleep_ms(r % 4);
		ran = stop_and_watch(pid, count);
		*done = 1;
		kill(pid, SIGCONT);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
		if (ran) {
			fprintf(stderr, "stop_child: round %ld: the child ran while stopped\n", r);
			return 1;
		}
	}
	return 0;
}
