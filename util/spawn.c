// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fd-pass.h"
#include "util/spawn.h"
#include "util/util.h"

#define EXIT_NOT_FOUND		127
#define EXIT_NOT_EXECUTABLE	126

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif

/* clone3()'s argument, as far as CLONE_INTO_CGROUP needs (linux/sched.h, 5.7) */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};

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
	struct passwd *pw;
	int n = 0;

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
	as->groups = NULL;
	as->ngroups = 0;
	as->name = as->home = NULL;
	pw = getpwuid(uid);
	if (!pw)
		return;		/* no groups but its own gid, as before */
	as->name = strdup(pw->pw_name);
	as->home = strdup(pw->pw_dir);
	getgrouplist(pw->pw_name, gid, NULL, &n);
	as->groups = calloc(n > 0 ? n : 1, sizeof(*as->groups));
	if (as->groups && getgrouplist(pw->pw_name, gid, as->groups, &n) >= 0)
		as->ngroups = n;
}

int run_as__drop(const struct run_as *as)
{
	if (setgroups(as->ngroups, as->groups))
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

/* sudo said root's: the command is the user's, as under sudo -u <user> */
static void set_user_env(const struct run_as *as)
{
	if (as->name) {
		setenv("USER", as->name, 1);
		setenv("LOGNAME", as->name, 1);
	}
	if (as->home)
		setenv("HOME", as->home, 1);
}

static void child_main(const struct spawn *s, int go_fd, int ready_fd, int exec_fd,
		       const char *const argv[], const struct run_as *as)
{
	char go;
	int err;

	/*
	 * Before saying it is ready: memtrack tracks the pid from then on,
	 * and nothing the switch does may be counted.
	 */
	signal(SIGPIPE, SIG_DFL);
	setpriority(PRIO_PROCESS, 0, as->nice);
	if (as->set && run_as__drop(as)) {
		fprintf(stderr, "memtrack: cannot switch to uid %u: %s\n",
			(unsigned int)as->uid, strerror(errno));
		_exit(126);
	}
	if (as->set)
		set_user_env(as);
	add_preload(s);
	close(ready_fd);
	if (read(go_fd, &go, 1) != 1)
		_exit(128);	/* memtrack gave up before starting us */
	close(go_fd);
	execvp(argv[0], (char *const *)argv);
	err = errno;
	fprintf(stderr, "memtrack: %s: %s\n", argv[0],
		err == ENOENT ? "command not found" : strerror(err));
	if (write(exec_fd, &err, sizeof(err)) != sizeof(err))
		err = EIO;
	_exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE);
}

static void close_pipe(int fds[2])
{
	close(fds[0]);
	close(fds[1]);
}

/* what the helper of spawn_in_cgroup() tells memtrack */
struct spawned {
	pid_t pid;
	bool in_cgroup;
};

/*
 * The command, started in the cgroup as memtrack's own child: a helper
 * forked the usual way (so that the C library's state is sound, memtrack
 * having threads) calls clone3() with CLONE_PARENT | CLONE_INTO_CGROUP,
 * reports the new pid on s->report_fd and exits.  Should clone3 fail, the
 * helper is the command itself, started outside the cgroup.
 */
static int spawn_in_cgroup(struct spawn *s, int go[2], int ready[2], int exec[2],
			   const char *const argv[], const struct run_as *as)
{
	struct clone3_args args = {
		/* no exit_signal with CLONE_PARENT: it is the helper's own, SIGCHLD */
		.flags = CLONE_PARENT | CLONE_INTO_CGROUP,
		.cgroup = (uint64_t)s->cgroup_fd,
	};
	struct spawned out = { 0 };
	int report[2];
	pid_t helper;

	if (pipe2(report, O_CLOEXEC))
		return -errno;
	helper = fork();
	if (helper == 0) {
		close(report[0]);
		close(go[1]);
		close(ready[0]);
		close(exec[0]);
		out.pid = syscall(SYS_clone3, &args, sizeof(args));
		if (out.pid == 0) {
			/* memtrack's read must see EOF should the helper die */
			close(report[1]);
			child_main(s, go[0], ready[1], exec[1], argv, as);
		}
		out.in_cgroup = out.pid > 0;
		if (out.pid < 0)
			out.pid = getpid();
		if (write(report[1], &out, sizeof(out)) != sizeof(out))
			_exit(1);
		close(report[1]);
		if (out.in_cgroup)
			_exit(0);
		child_main(s, go[0], ready[1], exec[1], argv, as);
	}
	close(report[1]);
	if (helper < 0) {
		close(report[0]);
		return -errno;
	}
	s->helper = helper;
	s->report_fd = report[0];
	return 0;
}

/* the helper's report: the command's pid, or -ECHILD if it died first */
static pid_t read_report(struct spawn *s)
{
	struct spawned out = { 0 };
	ssize_t n;

	while ((n = read(s->report_fd, &out, sizeof(out))) < 0 && errno == EINTR)
		;
	if (n != sizeof(out))
		out.pid = -ECHILD;	/* the command, if started, ends at EOF on go */
	close(s->report_fd);
	s->report_fd = -1;
	if (out.pid != s->helper)
		waitpid(s->helper, NULL, 0);
	s->in_cgroup = out.in_cgroup;
	return out.pid;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int spawn__fork(struct spawn *s, const char *const argv[], const struct run_as *as)
{
	int go[2], ready[2], exec[2], err;

	s->pid = 0;
	s->report_fd = s->ready_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ready, O_CLOEXEC)) {
		err = -errno;
		close_pipe(go);
		return err;
	}
	if (pipe2(exec, O_CLOEXEC)) {
		err = -errno;
		close_pipe(go);
		close_pipe(ready);
		return err;
	}
	fflush(NULL);
	s->in_cgroup = false;
	if (s->cgroup_fd >= 0) {
		err = spawn_in_cgroup(s, go, ready, exec, argv, as);
	} else {
		s->pid = fork();
		if (s->pid == 0) {
			close(go[1]);
			close(ready[0]);
			close(exec[0]);
			child_main(s, go[0], ready[1], exec[1], argv, as);
		}
		err = s->pid < 0 ? -errno : 0;
	}
	if (err) {
		close_pipe(go);
		close_pipe(ready);
		close_pipe(exec);
		return err;
	}
	close(go[0]);
	close(ready[1]);
	close(exec[1]);
	s->exec_fd = exec[0];
	s->ready_fd = ready[0];
	s->go_fd = go[1];
	return 0;
}

int spawn__wait_ready(struct spawn *s)
{
	char c;

	if (s->report_fd >= 0) {
		pid_t pid = read_report(s);

		if (pid < 0) {
			close_fd(&s->ready_fd);
			close_fd(&s->go_fd);
			close_fd(&s->exec_fd);
			return pid;
		}
		s->pid = pid;
	}
	/* ready (EOF) once it has dropped privileges, or died trying */
	while (s->ready_fd >= 0 && read(s->ready_fd, &c, 1) < 0 && errno == EINTR)
		;
	close_fd(&s->ready_fd);
	return 0;
}

int spawn__start(struct spawn *s)
{
	int err = write(s->go_fd, "g", 1) == 1 ? 0 : -errno;

	close(s->go_fd);
	s->go_fd = -1;
	return err;
}

int spawn__exec_error(struct spawn *s)
{
	int err = 0;
	ssize_t n;

	if (s->exec_fd < 0)
		return 0;
	while ((n = read(s->exec_fd, &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(s->exec_fd);
	s->exec_fd = -1;
	return n == sizeof(err) ? err : 0;
}

void spawn__abort(struct spawn *s)
{
	close_fd(&s->go_fd);
	close_fd(&s->exec_fd);
	/* a child not known ready yet: its pid from the helper first */
	if (spawn__wait_ready(s) == 0 && s->pid > 0)
		waitpid(s->pid, NULL, 0);
}

struct call_reply {
	int ret;
	char why[256];
};

static int send_reply(int sock, const struct call_reply *r)
{
	ssize_t n = send_fds(sock, r, sizeof(*r), &r->ret, r->ret >= 0, 0);

	return n < 0 ? n : 0;
}

/* the reply, with the fd received in place of the child's number */
static int receive_reply(int sock, struct call_reply *r)
{
	int fd, nfds;
	ssize_t n = recv_fds(sock, r, sizeof(*r), &fd, 1, &nfds);

	if (n != sizeof(*r)) {
		if (nfds)
			close(fd);
		return n < 0 ? n : -EPROTO;
	}
	r->why[sizeof(r->why) - 1] = 0;
	if (r->ret < 0)
		return 0;
	if (!nfds)
		return -EPROTO;
	r->ret = fd;
	return 0;
}

static void __attribute__((noreturn)) call_child(int sock, const struct run_as *as,
						  run_as_fn *fn, void *arg)
{
	struct call_reply r = { 0 };

	if (run_as__drop(as)) {
		r.ret = -errno;
		snprintf(r.why, sizeof(r.why), "cannot switch to uid %u: %s",
			 (unsigned int)as->uid, strerror(errno));
	} else {
		r.ret = fn(arg, r.why, sizeof(r.why));
		if (r.ret < 0 && !r.why[0])
			snprintf(r.why, sizeof(r.why), "%s", strerror(-r.ret));
	}
	_exit(send_reply(sock, &r) ? 1 : 0);
}

int run_as__call(const struct run_as *as, run_as_fn *fn, void *arg, char *why,
		 size_t why_len)
{
	struct call_reply r = { .ret = -EPROTO };
	int fds[2], err, status;
	pid_t pid;

	why[0] = 0;
	if (!as->set) {
		r.ret = fn(arg, why, why_len);
		if (r.ret < 0 && !why[0])
			snprintf(why, why_len, "%s", strerror(-r.ret));
		return r.ret;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!pid) {
		close(fds[0]);
		call_child(fds[1], as, fn, arg);
	}
	close(fds[1]);
	err = receive_reply(fds[0], &r);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (err) {
		snprintf(why, why_len, "the process running as uid %u failed",
			 (unsigned int)as->uid);
		return err;
	}
	snprintf(why, why_len, "%s", r.why);
	return r.ret;
}
