// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/probe/freezer.h"
#include "util/usage.h"
#include "util/util.h"

#define NAME_PREFIX	"memtrack-"

/* the two kernels' interfaces: a file and the words that freeze and thaw */
struct freezer_kind {
	const char *what;
	const char *state_file;
	const char *freeze, *thaw;
};

static const struct freezer_kind cgroup_v2 = { "cgroup2", "cgroup.freeze", "1", "0" };
static const struct freezer_kind cgroup_v1 = {
	"cgroup v1 freezer", "freezer.state", "FROZEN", "THAWED"
};

struct freezer {
	const struct freezer_kind *kind;
	pthread_mutex_t lock;
	int parent_fd;			/* memtrack's own cgroup */
	int dir_fd;			/* ours, in it */
	int state_fd;
	char name[32];
	char describe[PATH_MAX + 64];
	unsigned int held;		/* a bit per ring that asks for the freeze */
	bool abandoned;			/* thawed and removed: no more freezes */
	uint64_t frozen_at;
	uint64_t episodes;
};

/* mountinfo writes a space, tab, newline and backslash as \ooo */
static void unescape_mount_path(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = 0;
}

/* does a comma-separated list hold word */
static bool has_word(const char *list, const char *word)
{
	size_t len = strlen(word);

	while (list && *list) {
		if (!strncmp(list, word, len) && (list[len] == ',' || !list[len]))
			return true;
		list = strchr(list, ',');
		if (list)
			list++;
	}
	return false;
}

/* calls match on each line of a file until it returns true; false if none did */
static bool scan_lines(const char *path, bool (*match)(char *line, void *ctx), void *ctx)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0)
		found = match(line, ctx);
	free(line);
	fclose(f);
	return found;
}

bool freezer__parse_mount(char *line, bool v2, char *mnt, size_t mnt_len, char *root,
			  size_t root_len)
{
	char r[PATH_MAX], m[PATH_MAX], type[64], opts[1024];
	char *sep = strstr(line, " - ");

	if (!sep || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
	    sscanf(sep + 3, "%63s %*s %1023s", type, opts) != 2)
		return false;
	if (v2 ? strcmp(type, "cgroup2") : strcmp(type, "cgroup") || !has_word(opts, "freezer"))
		return false;
	unescape_mount_path(r);
	unescape_mount_path(m);
	return snprintf(mnt, mnt_len, "%s", m) < (int)mnt_len &&
	       snprintf(root, root_len, "%s", r) < (int)root_len;
}

bool freezer__parse_cgroup(char *line, bool v2, char *path, size_t len)
{
	char *ctrl = strchr(line, ':'), *p;

	if (!ctrl)
		return false;
	*ctrl++ = 0;
	p = strchr(ctrl, ':');
	if (!p)
		return false;
	*p++ = 0;
	p[strcspn(p, "\n")] = 0;
	if (v2 ? strcmp(line, "0") || *ctrl : !has_word(ctrl, "freezer"))
		return false;
	return snprintf(path, len, "%s", p) < (int)len;
}

struct mount_query {
	bool v2;
	char *mnt, *root;
	size_t mnt_len, root_len;
};

static bool match_mount(char *line, void *ctx)
{
	struct mount_query *q = ctx;

	return freezer__parse_mount(line, q->v2, q->mnt, q->mnt_len, q->root, q->root_len);
}

struct cgroup_query {
	bool v2;
	char *path;
	size_t len;
};

static bool match_own_cgroup(char *line, void *ctx)
{
	struct cgroup_query *q = ctx;

	return freezer__parse_cgroup(line, q->v2, q->path, q->len);
}

/* the directory of memtrack's own cgroup in a hierarchy, opened */
static int open_own_cgroup(bool v2, char *dir, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	struct mount_query mq = { v2, mnt, root, sizeof(mnt), sizeof(root) };
	struct cgroup_query cq = { v2, path, sizeof(path) };
	const char *rel;

	if (!scan_lines("/proc/self/mountinfo", match_mount, &mq) ||
	    !scan_lines("/proc/self/cgroup", match_own_cgroup, &cq))
		return -ENOENT;
	/* a mount of a subtree (a container's): the path must lie under its root */
	rel = path;
	if (strcmp(root, "/")) {
		size_t n = strlen(root);

		if (strncmp(path, root, n) || (path[n] && path[n] != '/'))
			return -ENOENT;
		rel = path + n;
	}
	if (snprintf(dir, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "") >= (int)len)
		return -ENAMETOOLONG;
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* memtrack-<pid> of runs whose memtrack is gone, left empty: removed */
static void remove_stale(int parent_fd)
{
	int fd = dup(parent_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, NAME_PREFIX, strlen(NAME_PREFIX)))
			continue;
		pid = strtol(de->d_name + strlen(NAME_PREFIX), &end, 10);
		if (*end || pid <= 0 || pid == getpid() || !kill(pid, 0) || errno != ESRCH)
			continue;
		unlinkat(parent_fd, de->d_name, AT_REMOVEDIR);	/* fails if in use */
	}
	closedir(d);
}

static int write_word(int fd, const char *word)
{
	ssize_t n = pwrite(fd, word, strlen(word), 0);

	return n == (ssize_t)strlen(word) ? 0 : n < 0 ? -errno : -EIO;
}

static int open_kind(struct freezer *f, const struct freezer_kind *kind, char *dir, size_t len)
{
	struct stat st;

	f->parent_fd = open_own_cgroup(kind == &cgroup_v2, dir, len);
	if (f->parent_fd < 0)
		return f->parent_fd;
	/*
	 * A cgroup delegated to a user (a desktop session's): its processes
	 * could move themselves, and pids moved back there at the end would go
	 * into the user's hands.  Root's own only, as for every directory.
	 */
	if (fstat(f->parent_fd, &st))
		return -errno;
	if (st.st_uid != 0)
		return -EPERM;
	remove_stale(f->parent_fd);
	if (mkdirat(f->parent_fd, f->name, 0755))
		return -errno;
	f->dir_fd = openat(f->parent_fd, f->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (f->dir_fd >= 0)
		f->state_fd = openat(f->dir_fd, kind->state_file, O_RDWR | O_CLOEXEC);
	if (f->dir_fd < 0 || f->state_fd < 0) {
		int err = -errno;

		unlinkat(f->parent_fd, f->name, AT_REMOVEDIR);
		return err;
	}
	f->kind = kind;
	snprintf(f->describe, sizeof(f->describe), "%s %s/%s", kind->what, dir, f->name);
	return 0;
}

static void close_fds(struct freezer *f)
{
	if (f->state_fd >= 0)
		close(f->state_fd);
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	if (f->parent_fd >= 0)
		close(f->parent_fd);
	f->state_fd = f->dir_fd = f->parent_fd = -1;
}

struct freezer *freezer__new(char *why, size_t why_len)
{
	struct freezer *f = calloc(1, sizeof(*f));
	char dir[PATH_MAX];
	int err;

	if (!f) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->state_fd = f->dir_fd = f->parent_fd = -1;
	snprintf(f->name, sizeof(f->name), NAME_PREFIX "%d", (int)getpid());
	err = open_kind(f, &cgroup_v2, dir, sizeof(dir));
	if (err) {
		int err2;

		close_fds(f);
		err2 = open_kind(f, &cgroup_v1, dir, sizeof(dir));
		if (err2) {
			close_fds(f);
			snprintf(why, why_len, "cgroup2: %s; cgroup v1 freezer: %s",
				 err == -ENOENT ? "not mounted" : strerror(-err),
				 err2 == -ENOENT ? "not mounted" : strerror(-err2));
			free(f);
			return NULL;
		}
	}
	return f;
}

int freezer__add(struct freezer *f, pid_t pid)
{
	int fd = openat(f->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC), err;
	char buf[24];

	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	err = write_word(fd, buf);
	close(fd);
	return err;
}

int freezer__cgroup_fd(const struct freezer *f)
{
	return f->kind == &cgroup_v2 ? f->dir_fd : -1;
}

int freezer__state_fd(const struct freezer *f)
{
	return f->state_fd;
}

const char *freezer__thaw_word(const struct freezer *f)
{
	return f->kind->thaw;
}

const char *freezer__describe(const struct freezer *f)
{
	return f->describe;
}

bool freezer__hold(struct freezer *f, unsigned int bit)
{
	bool froze = false;

	pthread_mutex_lock(&f->lock);
	if (!f->held && !f->abandoned && !write_word(f->state_fd, f->kind->freeze)) {
		f->frozen_at = now_ns();
		f->episodes++;
		froze = true;
	}
	if (f->frozen_at)
		f->held |= 1U << bit;
	pthread_mutex_unlock(&f->lock);
	return froze;
}

/* the pids in the cgroup, the first max of them */
static int read_pids(struct freezer *f, pid_t *pids, int max)
{
	int fd = openat(f->dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC), n = 0;
	FILE *in = fd >= 0 ? fdopen(fd, "r") : NULL;
	long pid;

	if (!in) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (n < max && fscanf(in, "%ld", &pid) == 1)
		pids[n++] = pid;
	fclose(in);
	return n;
}

uint64_t freezer__release(struct freezer *f, unsigned int bit, pid_t *pids, int max, int *n)
{
	uint64_t since = 0;

	*n = 0;
	pthread_mutex_lock(&f->lock);
	if (f->held & (1U << bit)) {
		f->held &= ~(1U << bit);
		if (!f->held) {
			*n = read_pids(f, pids, max);
			write_word(f->state_fd, f->kind->thaw);
			since = f->frozen_at;
			f->frozen_at = 0;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return since;
}

bool freezer__holds(struct freezer *f, unsigned int bit)
{
	bool held;

	pthread_mutex_lock(&f->lock);
	held = f->held & (1U << bit);
	pthread_mutex_unlock(&f->lock);
	return held;
}

uint64_t freezer__episodes(struct freezer *f)
{
	uint64_t n;

	pthread_mutex_lock(&f->lock);
	n = f->episodes;
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* processes still in the cgroup (the tree outlived the run) go back to memtrack's */
static void move_back(struct freezer *f)
{
	int fd = openat(f->parent_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC), i, n;
	pid_t pids[256];
	char buf[24];

	if (fd < 0)
		return;
	do {
		n = read_pids(f, pids, 256);
		for (i = 0; i < n; i++) {
			int err;

			snprintf(buf, sizeof(buf), "%d", (int)pids[i]);
			err = write_word(fd, buf);
			if (err && err != -ESRCH)
				n = 0;	/* cannot: leave them */
		}
	} while (n == 256);
	close(fd);
}

void freezer__abandon(struct freezer *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	if (!f->abandoned) {
		f->abandoned = true;
		write_word(f->state_fd, f->kind->thaw);
		move_back(f);
		if (unlinkat(f->parent_fd, f->name, AT_REMOVEDIR) && errno != ENOENT)
			pr_debug("cannot remove the cgroup %s: %s\n", f->describe,
				 strerror(errno));
	}
	pthread_mutex_unlock(&f->lock);
}

void freezer__delete(struct freezer *f)
{
	if (!f)
		return;
	freezer__abandon(f);
	close_fds(f);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
