/*
 * stall_thread [-s SIG] PID COMM CMD [ARG...]: stops the thread of PID named
 * COMM (ptrace, which stops that thread alone) until CMD exits 0, run every
 * 5 ms; then sends SIG to PID if asked, and lets the thread go.  A stall
 * that CMD does not end within 2 s is let go and tried again 20 ms later, so
 * that a thread the process needs to get going is not held for good.
 *
 * What it is for: memtrack's poller stalled while the tree runs, so that a
 * ring fills whatever the machine's load (tests/shell/track_freezer.sh).
 * Exit 0 once CMD held, 1 if it never did in 60 s or PID ended first.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRY_MS		2000
#define RETRY_MS	20
#define DEADLINE_MS	60000
#define CHECK_MS	5

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static pid_t thread_named(pid_t pid, const char *comm)
{
	char path[320], name[32];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while (!tid && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f)) {
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, comm))
				tid = atoi(d->d_name);
		}
		fclose(f);
	}
	closedir(dir);
	return tid;
}

static bool holds(char **cmd)
{
	int status;
	pid_t child = fork();

	if (child == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool stop_thread(pid_t tid)
{
	int status;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) || ptrace(PTRACE_INTERRUPT, tid, 0, 0)) {
		fprintf(stderr, "stall_thread: cannot stop thread %d: %s\n", tid, strerror(errno));
		return false;
	}
	return waitpid(tid, &status, __WALL) == tid;
}

/* one stall of tid: true once cmd held */
static bool stall_once(pid_t pid, pid_t tid, int sig, char **cmd)
{
	bool held = false;
	int waited;

	if (!stop_thread(tid))
		return false;
	for (waited = 0; waited < TRY_MS && !held; waited += CHECK_MS) {
		held = holds(cmd);
		if (!held)
			sleep_ms(CHECK_MS);
	}
	if (held && sig)
		kill(pid, sig);
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return held;
}

int main(int argc, char **argv)
{
	int sig = 0, waited = 0, opt;
	pid_t pid, tid;

	while ((opt = getopt(argc, argv, "+s:")) != -1) {
		if (opt != 's')
			return 2;
		sig = atoi(optarg);
	}
	if (argc - optind < 3) {
		fprintf(stderr, "usage: stall_thread [-s SIG] PID COMM CMD [ARG...]\n");
		return 2;
	}
	pid = atoi(argv[optind]);
	while (waited < DEADLINE_MS) {
		tid = thread_named(pid, argv[optind + 1]);
		if (tid < 0)
			break;
		if (tid && stall_once(pid, tid, sig, argv + optind + 2))
			return 0;
		sleep_ms(RETRY_MS);
		waited += RETRY_MS + (tid ? TRY_MS : 0);
	}
	fprintf(stderr, "stall_thread: %s of %d stalled, and '%s' never held\n",
		argv[optind + 1], pid, argv[optind + 2]);
	return 1;
}
