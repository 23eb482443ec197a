// SPDX-License-Identifier: GPL-2.0
/*
 * Running what is tracked: the command, with memtrack's signals forwarded
 * to it, or the running processes of -p; then the rest of the tree until
 * its last process exits, as strace -f follows it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/probe/bpf_track.h"
#include "util/probe/proc-table.h"
#include "util/probe/proc-tree.h"
#include "util/spawn.h"
#include "util/track/session.h"
#include "util/track/status-line.h"
#include "util/usage.h"
#include "util/util.h"

#define DETACH_WINDOW_NS	(3 * NSEC_PER_SEC)

static volatile pid_t forward_to;
static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t detach_asked;
static uint64_t last_stop_ask;		/* when SIGINT or SIGTERM last came */

/* a second SIGINT or SIGTERM within DETACH_WINDOW_NS of the first asks to detach */
static bool asks_to_detach(int sig)
{
	uint64_t now;

	if (sig != SIGINT && sig != SIGTERM)
		return false;
	now = now_ns();	/* clock_gettime(): async-signal-safe */
	if (last_stop_ask && now - last_stop_ask < DETACH_WINDOW_NS)
		return true;
	last_stop_ask = now;
	return false;
}

/*
 * A signal sent to memtrack goes to the command.  One from the terminal
 * (Ctrl-C: SI_KERNEL) went to the command's process group already.  The
 * second SIGINT or SIGTERM in a row, or --detach-after's alarm, makes
 * memtrack let go of the tree instead: a command that ignores them, or a
 * daemon it left, must not keep memtrack waiting.
 */
static void forward_signal(int sig, siginfo_t *info, void *uc __maybe_unused)
{
	if (sig == SIGALRM || asks_to_detach(sig))
		detach_asked = sig;
	else if (forward_to <= 0)
		interrupted = sig;
	else if (info->si_code != SI_KERNEL)
		kill(forward_to, sig);
}

static void install_signal_forwarding(const struct track_session *s, pid_t child)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGALRM };
	struct sigaction sa = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO };
	size_t i;

	forward_to = child;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	if (s->opts->detach_after)
		alarm(s->opts->detach_after);
}

/* the wait is over: the tree is let go of, and runs on untracked */
static bool detaching(struct track_session *s)
{
	if (!detach_asked || s->detached)
		return s->detached;
	s->detached = true;
	if (!s->opts->quiet)
		fprintf(stderr, "memtrack: %s: detaching from the tree, which runs on; "
			"writing what was tracked\n", detach_asked == SIGALRM ?
			"--detach-after" : "asked twice");
	return true;
}

/* threads started while these are blocked leave them to the main thread */
void session__block_forwarded_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(how, &set, NULL);
}

#define FOLLOW_POLL_NS	(20 * NSEC_PER_MSEC)

/*
 * The root is gone: the rest of the tree (orphans, daemons) is followed
 * until its last process exits, as strace -f does, unless asked not to or
 * interrupted; what still runs then is said, in the summary and in Meta.
 */
static void follow_the_rest(struct track_session *s)
{
	struct timespec ts = { .tv_nsec = FOLLOW_POLL_NS };

	/* each count walks the map's 64K buckets, 0.3 ms when it is empty */
	while ((s->running = bpf_track__tracked(s->bpf)) && !s->opts->stop_with_root &&
	       !interrupted && !detaching(s))
		nanosleep(&ts, NULL);
}

/*
 * "<command>" through /bin/sh -c, which said it found nothing to run (127)
 * or nothing it could run (126) and started no other process: the command
 * never ran, as with `-- <program>` whose exec failed.
 */
static bool shell_found_nothing(const struct track_session *s)
{
	int code = WIFEXITED(s->status) ? WEXITSTATUS(s->status) : 0;

	return s->via_shell && !s->detached && (code == 126 || code == 127) &&
	       s->procs.count == 1;
}

#define ROOT_SEEN_NS	(10 * NSEC_PER_SEC)
#define ROOT_SEEN_POLL_NS	(1 * NSEC_PER_MSEC)

/*
 * The command has exec'd: BPF must have told of it, or the probes see
 * other processes than memtrack's (pids of another namespace), and the run
 * would wait forever for a tree that nothing reports the end of.
 */
static int wait_until_seen(struct track_session *s)
{
	struct timespec ts = { .tv_nsec = ROOT_SEEN_POLL_NS };
	uint64_t deadline = now_ns() + ROOT_SEEN_NS;

	while (!__atomic_load_n(&s->root_seen, __ATOMIC_ACQUIRE)) {
		if (now_ns() > deadline) {
			kill(s->child.pid, SIGKILL);
			return fatal("BPF did not report the command's exec (pid %d) in %d s: the "
				     "probes do not see memtrack's processes (a pid namespace, or "
				     "a /proc, memtrack cannot see into?); killed it", s->child.pid,
				     (int)(ROOT_SEEN_NS / NSEC_PER_SEC));
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

static int run_child(struct track_session *s)
{
	pid_t pid = s->child.pid;
	int err;

	/*
	 * until its exec, it runs memtrack's code, which BPF is not to count;
	 * the tests' stand-in for probes that see other pids: a root not tracked
	 */
	err = getenv("MEMTRACK_TEST_UNSEEN_ROOT") ? 0 :
	      bpf_track__set_mode(s->bpf, pid,
				  s->backend == BACKEND_BPF && !s->shim_waits ? MT_MODE_BPF :
									       MT_MODE_PENDING);
	if (!err && !proc_table__get(&s->procs, pid))
		err = -ENOMEM;
	if (err)
		return fatal("cannot track pid %d: %s", pid, strerror(-err));
	proc_table__get(&s->procs, pid)->ppid = getpid();
	install_signal_forwarding(s, pid);
	session__block_forwarded_signals(SIG_UNBLOCK);
	s->start_ns = now_ns();
	s->spawned = false;
	bpf_track__command_starts(s->bpf);
	if (spawn__start(&s->child))
		return fatal_errno("cannot start the command");
	s->not_started = spawn__exec_error(&s->child);
	s->unseen = !s->not_started && wait_until_seen(s);
	while (waitpid(pid, &s->status, 0) < 0) {
		if (errno != EINTR)
			return fatal_errno("waitpid");
		if (detaching(s))
			break;
	}
	forward_to = -1;	/* reaped, or let go of: its pid may be anyone's soon */
	if (!s->unseen)
		follow_the_rest(s);
	s->end_ns = now_ns();
	if (shell_found_nothing(s))
		s->not_started = ENOENT;
	return 0;
}

/* the kernel's ptrace check, PTRACE_MODE_ATTACH with the caller's fs creds */
static int open_proc_mem(void *arg, char *why __maybe_unused, size_t len __maybe_unused)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", *(const pid_t *)arg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * -p under sudo: only what the invoking user could trace, or memtrack
 * would hand them another user's process (its names, its allocations)
 * and let back-pressure stop it.  0, or -errno with why filled in.
 */
static int may_trace(const struct track_session *s, pid_t pid, char *why, size_t len)
{
	int fd;

	if (!s->run_as.set)
		return 0;
	fd = run_as__call(&s->run_as, open_proc_mem, &pid, why, len);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* "uid N" of a process, from /proc, for messages */
static unsigned long process_uid(pid_t pid)
{
	char path[64], line[256];
	unsigned long uid = -1UL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return uid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %*u %lu", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

/* -p: the given processes and their descendants, as they run now */
int session__attach_to_tree(struct track_session *s)
{
	char why[256];
	pid_t *tree;
	int n, i, err;

	/* under -p 1 or the pid of its own shell: stopped for its probes, it would never resume */
	n = proc_tree__collect(s->attach, s->nattach, getpid(), &tree);
	if (n < 0)
		return fatal("cannot read the process tree: %s", strerror(-n));
	for (i = 0; i < n; i++) {
		struct process *p;

		/* the given pids were checked already: these are descendants */
		if (i >= s->nattach && may_trace(s, tree[i], why, sizeof(why))) {
			warning("not tracking pid %d, a descendant: uid %u may not trace "
				"it (%s)", tree[i], (unsigned int)s->run_as.uid, why);
			continue;
		}
		p = proc_table__get(&s->procs, tree[i]);

		/* a running process cannot take the shim */
		err = bpf_track__set_mode(s->bpf, tree[i], MT_MODE_BPF);
		if (p)
			p->mode = MT_MODE_BPF;
		if (!err && p)
			err = proc_tree__describe(tree[i], p);
		if (!err)
			err = bpf_track__inspect_process(s->bpf, tree[i], LINK_ALL, NULL);
		if (err && err != -ENOENT && err != -ESRCH)
			warning("cannot track pid %d: %s", tree[i], strerror(-err));
	}
	pr_debug("attached to %d processes\n", n);
	free(tree);
	return 0;
}

/* -p: until every given process has exited, or memtrack is interrupted */
static int wait_for_attached(struct track_session *s)
{
	struct pollfd *fds = calloc(s->nattach, sizeof(*fds));
	int i, left = s->nattach;

	if (!fds)
		return fatal("out of memory");
	for (i = 0; i < s->nattach; i++) {
		fds[i].fd = syscall(SYS_pidfd_open, s->attach[i], 0);
		fds[i].events = POLLIN;
		if (fds[i].fd < 0)
			left--;
	}
	while (left > 0 && !interrupted && !detaching(s)) {
		if (poll(fds, s->nattach, -1) < 0)
			continue;	/* EINTR: a signal asked us to stop */
		for (i = 0; i < s->nattach; i++) {
			if (fds[i].fd >= 0 && fds[i].revents) {
				close(fds[i].fd);
				fds[i].fd = -1;
				left--;
			}
		}
	}
	for (i = 0; i < s->nattach; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	free(fds);
	return 0;
}

static int run_attached(struct track_session *s)
{
	install_signal_forwarding(s, 0);
	session__block_forwarded_signals(SIG_UNBLOCK);
	if (!s->opts->quiet)
		fprintf(stderr, "memtrack: tracking pid %s and its descendants; "
			"Ctrl-C to stop\n", s->opts->attach_pids);
	if (wait_for_attached(s))
		return -1;
	follow_the_rest(s);
	s->end_ns = now_ns();
	return 0;
}

int track_session__run(struct track_session *s)
{
	int err = s->attach ? run_attached(s) : run_child(s);

	status_line__stop(s->status_line);
	s->status_line = NULL;
	return err;
}

int session__check_attach_targets(const struct track_session *s)
{
	char why[256];
	int i;

	for (i = 0; i < s->nattach; i++) {
		if (kill(s->attach[i], 0) && errno == ESRCH)
			return fatal("no process with pid %d", s->attach[i]);
		if (s->attach[i] == getpid())
			return fatal("pid %d is memtrack itself", s->attach[i]);
		if (may_trace(s, s->attach[i], why, sizeof(why)))
			return fatal("cannot attach to pid %d (uid %lu): uid %u, who ran sudo, "
				     "may not trace it (%s)", s->attach[i],
				     process_uid(s->attach[i]), (unsigned int)s->run_as.uid, why);
	}
	return 0;
}
