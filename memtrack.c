// SPDX-License-Identifier: GPL-2.0
/*
 * memtrack: the dispatcher.  Looks the command up in commands[] and hands
 * off; everything else lives in builtin-*.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "util/spawn.h"
#include "util/usage.h"


/*
 * AS_USER: under sudo, the command runs as the invoking user from its
 * start: what it reads (artifacts, suppressions, stats files) and writes
 * is checked against that user's rights, not root's.  Only track needs root.
 */
#define AS_USER		1

struct cmd_struct {
	const char *cmd;
	int (*fn)(int, const char **);
	const char *summary;
	int flags;
};

static struct cmd_struct commands[] = {
	{ "track",  cmd_track,  "Trace every heap allocation of a command's process tree", 0 },
	{ "stats",  cmd_stats,  "Summarise and plot the pipeline stats that track wrote", AS_USER },
	{ "report", cmd_report, "Summaries, leaks and call sites of a recorded artifact", AS_USER },
	{ "help",   cmd_help,   "Show help for memtrack or one of its commands", AS_USER },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char memtrack_usage_string[] =
	"memtrack [--version] [-h | --help] [--list-cmds] <command> [<args>]";

static void list_commands(FILE *out)
{
	size_t i;

	fprintf(out, "usage: %s\n\nThe memtrack commands are:\n",
		memtrack_usage_string);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "   %-10s %s\n", commands[i].cmd, commands[i].summary);
	fprintf(out, "\nSee 'memtrack help <command>' or 'memtrack <command> -h' "
		     "for the options of a command.\n");
}

static struct cmd_struct *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(name, commands[i].cmd))
			return &commands[i];
	return NULL;
}

/* the number of single-character edits between a and b, capped at 3 */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[32], prev, tmp;

	if (la >= ARRAY_SIZE(row) || lb >= ARRAY_SIZE(row))
		return 3;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb] < 3 ? row[lb] : 3;
}

static int unknown_command(const char *name)
{
	size_t i;

	fprintf(stderr, "memtrack: '%s' is not a memtrack command. See 'memtrack --help'.\n",
		name);
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if (edit_distance(name, commands[i].cmd) <= 2 ||
		    !strncmp(name, commands[i].cmd, strlen(name))) {
			fprintf(stderr, "\nThe most similar command is\n\t%s\n",
				commands[i].cmd);
			break;
		}
	}
	return MEMTRACK_EXIT_USAGE;
}

static int become_sudo_user(void)
{
	struct run_as as;

	run_as__from_sudo(&as);
	if (as.set && run_as__drop(&as)) {
		error_errno("cannot become uid %u, who ran sudo", (unsigned int)as.uid);
		return -1;
	}
	return 0;
}

static int run_builtin(struct cmd_struct *p, int argc, const char **argv)
{
	int status;

	if ((p->flags & AS_USER) && become_sudo_user())
		return MEMTRACK_EXIT_FATAL;
	status = p->fn(argc, argv);

	if (status)
		return status & 0xff;

	/* Somebody closed stdout? */
	if (fflush(stdout) || ferror(stdout)) {
		error_errno("write failure on standard output");
		return 1;
	}
	if (fclose(stdout) && errno != EPIPE && errno != EINVAL) {
		error_errno("close failed on standard output");
		return 1;
	}
	return 0;
}

/* the options of a command, from its own -h, when no manual page is installed */
static int show_usage_of(struct cmd_struct *p)
{
	const char *argv[] = { p->cmd, "-h", NULL };
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		exit(p->fn(2, argv));
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return error_errno("cannot show the usage of '%s'", p->cmd);
	return 0;
}

/* runs man with args (no shell), its stderr to /dev/null when quiet; true when it showed the page */
static bool run_man(const char *const *args, bool quiet)
{
	pid_t pid;
	int status, null;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		null = quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execvp("man", (char *const *)args);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       !WEXITSTATUS(status);
}

/* the page installed beside this binary: <bindir>/../share/man/man1/<page>.1 */
static bool installed_page(const char *page, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0)
		return false;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return false;
	*slash = 0;
	snprintf(path, len, "%s/../share/man/man1/%s.1", self, page);
	return !access(path, R_OK);
}

int cmd_help(int argc, const char **argv)
{
	struct cmd_struct *p;
	char page[64], path[PATH_MAX + 96];
	const char *man_l[] = { "man", "-l", path, NULL };
	const char *man[] = { "man", page, NULL };

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		list_commands(stdout);
		return 0;
	}
	p = find_command(argv[1]);
	if (!p)
		return unknown_command(argv[1]);
	snprintf(page, sizeof(page), "memtrack-%s", argv[1]);
	if (installed_page(page, path, sizeof(path)) ? run_man(man_l, false) :
	    run_man(man, true))
		return 0;
	fprintf(stderr, "no manual page %s installed (make doc builds it); its usage:\n\n",
		page);
	return show_usage_of(p);
}

int main(int argc, const char **argv)
{
	struct cmd_struct *p;

	argv++;
	argc--;
	if (argc == 0) {
		list_commands(stdout);
		return MEMTRACK_EXIT_USAGE;
	}
	if (!strcmp(argv[0], "--version") || !strcmp(argv[0], "version")) {
		printf("memtrack version %s\n", memtrack_version_string);
		return 0;
	}
	if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "--help")) {
		list_commands(stdout);
		return 0;
	}
	if (!strcmp(argv[0], "--list-cmds")) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(commands); i++)
			if (commands[i].fn != cmd_help)
				printf("%s\n", commands[i].cmd);
		return 0;
	}
	if (argv[0][0] == '-') {
		fprintf(stderr, "memtrack: unknown option: %s\n", argv[0]);
		fprintf(stderr, "usage: %s\n", memtrack_usage_string);
		return MEMTRACK_EXIT_USAGE;
	}

	/* Turn "memtrack cmd --help" into "memtrack help cmd" */
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		argv[1] = argv[0];
		argv[0] = "help";
	}

	p = find_command(argv[0]);
	if (!p)
		return unknown_command(argv[0]);
	return run_builtin(p, argc, argv);
}
