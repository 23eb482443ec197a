// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

#define EXIT_NOT_FOUND		127
#define EXIT_NOT_EXECUTABLE	126

static bool parse_id(const char *s, unsigned long *id)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*id = strtoul(s, &end, 10);
	return !errno && !*end;
}

void run_as__from_sudo(struct run_as *as)
{
	unsigned long uid, gid;

	errno = 0;
	as->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		as->nice = 0;
	as->set = false;
	if (geteuid() != 0 || !parse_id(getenv("SUDO_UID"), &uid) ||
	    !parse_id(getenv("SUDO_GID"), &gid) || uid == 0)
		return;
	as->set = true;
	as->uid = uid;
	as->gid = gid;
}

static int drop_privileges(const struct run_as *as)
{
	struct passwd *pw = getpwuid(as->uid);

	if (pw ? initgroups(pw->pw_name, as->gid) : setgroups(0, NULL))
		return -1;
	if (setgid(as->gid) || setuid(as->uid))
		return -1;
	return 0;
}

/*
 * LD_PRELOAD with the shim first, if the command's user can read it: ld.so
 * would only say it cannot, and the command run untracked by the shim.
 */
static void add_preload(const struct spawn *s)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len;
	char *val;

	if (!s->preload)
		return;
	if (access(s->preload, R_OK)) {
		fprintf(stderr, "memtrack: warning: the command's user cannot read %s: "
			"tracing it with BPF\n", s->preload);
		return;
	}
	len = strlen(s->preload) + (old ? strlen(old) + 1 : 0) + 1;
	val = malloc(len);
	if (!val)
		return;
	snprintf(val, len, "%s%s%s", s->preload, old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", val, 1);
	putenv((char *)s->preload_var);
}

static void child_main(const struct spawn *s, int go_fd, int ready_fd,
		       const char *const argv[], const struct run_as *as)
{
	char go;

	/*
	 * Before saying it is ready: memtrack tracks the pid from then on,
	 * and dropping privileges allocates (NSS lookups).
	 */
	signal(SIGPIPE, SIG_DFL);
	setpriority(PRIO_PROCESS, 0, as->nice);
	if (as->set && drop_privileges(as)) {
		fprintf(stderr, "memtrack: cannot switch to uid %u: %s\n",
			(unsigned int)as->uid, strerror(errno));
		_exit(126);
	}
	add_preload(s);
	close(ready_fd);
	if (read(go_fd, &go, 1) != 1)
		_exit(128);	/* memtrack gave up before starting us */
	close(go_fd);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "memtrack: %s: %s\n", argv[0],
		errno == ENOENT ? "command not found" : strerror(errno));
	_exit(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

static void close_pipe(int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

int spawn__fork(struct spawn *s, const char *const argv[], const struct run_as *as)
{
	int go[2], ready[2], err;
	char c;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ready, O_CLOEXEC)) {
		err = -errno;
		close_pipe(go);
		return err;
	}
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		err = -errno;
		close_pipe(go);
		close_pipe(ready);
		return err;
	}
	if (s->pid == 0) {
		close(go[1]);
		close(ready[0]);
		child_main(s, go[0], ready[1], argv, as);
	}
	close(go[0]);
	close(ready[1]);
	/* ready (EOF) once it has dropped privileges, or died trying */
	while (read(ready[0], &c, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	s->go_fd = go[1];
	return 0;
}

int spawn__start(struct spawn *s)
{
	int err = write(s->go_fd, "g", 1) == 1 ? 0 : -errno;

	close(s->go_fd);
	s->go_fd = -1;
	return err;
}

void spawn__abort(struct spawn *s)
{
	if (s->go_fd >= 0)
		close(s->go_fd);
	s->go_fd = -1;
	waitpid(s->pid, NULL, 0);
}
