// SPDX-License-Identifier: GPL-2.0
/*
 * timeit [-o <file>] [--stopped <pidfile>] -- <program> [<args>...]
 *
 * Runs a command and prints one line of key=value pairs (to <file> with -o):
 * its wall time in ns (CLOCK_MONOTONIC, from fork to reaping), the largest
 * resident set of any process of its tree that was waited for (ru_maxrss of
 * wait4, in KiB) and its wait status.  The command's own output is left alone.
 *
 * --stopped: the child stops itself (SIGSTOP) before exec and writes nothing
 * until someone sends it SIGCONT; its pid goes to <pidfile> once it is
 * stopped, and the wall time runs from the moment it is continued.  This lets
 * a tracer that attaches to a pid (bcc's memleak -p) be in place first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"

static int usage(void)
{
	fprintf(stderr, "usage: timeit [-o <file>] [--stopped <pidfile>] -- <program> [<args>...]\n");
	return 129;
}

static int write_pid(const char *path, pid_t pid)
{
	char tmp[4096];
	FILE *f;

	/* written aside and renamed: a reader never sees half a pid */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)pid);
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

int main(int argc, char **argv)
{
	const char *out_path = NULL, *pid_path = NULL;
	uint64_t t0, t1;
	struct rusage ru;
	int i, status;
	FILE *out;
	pid_t pid;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--stopped") && i + 1 < argc)
			pid_path = argv[++i];
		else
			return usage();
	}
	if (i + 1 >= argc)
		return usage();

	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("timeit: fork");
		return 1;
	}
	if (pid == 0) {
		if (pid_path)
			raise(SIGSTOP);
		execvp(argv[i + 1], argv + i + 1);
		fprintf(stderr, "timeit: cannot run '%s': %s\n", argv[i + 1], strerror(errno));
		_exit(127);
	}
	for (;;) {
		if (wait4(pid, &status, pid_path ? WUNTRACED | WCONTINUED : 0, &ru) < 0) {
			if (errno == EINTR)
				continue;
			perror("timeit: wait4");
			return 1;
		}
		if (WIFSTOPPED(status)) {
			if (write_pid(pid_path, pid)) {
				perror("timeit: cannot write the pid file");
				kill(pid, SIGKILL);
			}
			continue;
		}
		if (WIFCONTINUED(status)) {
			t0 = now_ns();
			continue;
		}
		break;
	}
	t1 = now_ns();

	out = out_path ? fopen(out_path, "w") : stderr;
	if (!out) {
		perror("timeit: cannot write the result");
		return 1;
	}
	fprintf(out, "wall_ns=%lu maxrss_kib=%ld status=%d\n", t1 - t0, ru.ru_maxrss, status);
	if (out != stderr)
		fclose(out);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
