// SPDX-License-Identifier: GPL-2.0
/*
 * Creating output files without being led by other users: see out-file.h.
 * Everything here runs as the user who creates (run_as__call()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/out-file.h"
#include "util/spawn.h"
#include "util/usage.h"
#include "util/util.h"

#define MAX_LINKS	40	/* as the kernel's path walk */

struct walk {
	const char *path;	/* as given, for messages */
	char *why;
	uid_t self;		/* who creates */
	int links;
};

static int __printf(3, 4) refuse(struct walk *w, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->why, OUT_WHY_MAX, fmt, ap);
	va_end(ap);
	return -err;
}

static int walk_path(int start, const char *path, bool create, struct walk *w);

/* a link belonging to root or to whoever creates is theirs to follow */
static int follow_link(int dirfd, const char *name, struct walk *w)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t len;
	int fd, start;

	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISLNK(st.st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	if (st.st_uid != 0 && st.st_uid != w->self) {
		close(fd);
		return refuse(w, EPERM, "'%s' goes through the symbolic link '%s' of uid %u, "
			      "which memtrack does not follow", w->path, name,
			      (unsigned int)st.st_uid);
	}
	if (++w->links > MAX_LINKS) {
		close(fd);
		return -ELOOP;
	}
	/* read from the link we checked, whatever its name points to now */
	len = readlinkat(fd, "", target, sizeof(target) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	target[len] = 0;
	start = target[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
		fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (start < 0)
		return -errno;
	return walk_path(start, target, false, w);
}

static int open_component(int dirfd, const char *name, bool create, struct walk *w)
{
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno == ELOOP || errno == ENOTDIR)
			return follow_link(dirfd, name, w);
		if (errno != ENOENT || !create)
			return -errno;
		if (mkdirat(dirfd, name, 0755) && errno != EEXIST)
			return -errno;
	}
	return -ENOENT;
}

/* takes start (closed in any case); the directory's fd or -errno */
static int walk_path(int start, const char *path, bool create, struct walk *w)
{
	char *copy = strdup(path), *name, *save = NULL;
	int fd = start, next;

	if (!copy) {
		close(start);
		return -ENOMEM;
	}
	for (name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		if (!strcmp(name, "."))
			continue;
		next = open_component(fd, name, create, w);
		close(fd);
		fd = next;
		if (fd < 0)
			break;
	}
	free(copy);
	return fd;
}

/* root writes only where no one else can rename or plant files */
static int check_root_dir(int fd, struct walk *w)
{
	struct stat st;

	if (w->self != 0)
		return 0;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid != 0)
		return refuse(w, EPERM, "'%s' belongs to uid %u: memtrack run by root writes only "
			      "in root's directories (run it with sudo as that user, or choose "
			      "another directory)", w->path, (unsigned int)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return refuse(w, EPERM, "'%s' is writable by other users and not sticky: "
			      "memtrack run by root does not write there", w->path);
	return 0;
}

struct dir_args {
	const char *path;
	bool create;
};

static int open_dir(void *arg, char *why, size_t why_len __maybe_unused)
{
	const struct dir_args *a = arg;
	struct walk w = { .path = a->path, .why = why, .self = geteuid() };
	int fd, err;

	fd = open(a->path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = walk_path(fd, a->path, a->create, &w);
	if (fd < 0)
		return fd;
	err = check_root_dir(fd, &w);
	/* an output directory: say now, not after the command has started */
	if (!err && a->create && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS))
		err = refuse(&w, errno, "'%s' is not writable: %s", a->path, strerror(errno));
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int out_dir__open(const struct run_as *as, const char *path, bool create,
		  char why[OUT_WHY_MAX])
{
	struct dir_args a = { .path = path, .create = create };

	if (!*path) {
		snprintf(why, OUT_WHY_MAX, "%s", strerror(ENOENT));
		return -ENOENT;
	}
	return run_as__call(as, open_dir, &a, why, OUT_WHY_MAX);
}

static int check_replaced(int fd, struct walk *w)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	/* /dev/null, /dev/full: nothing to empty, and only root makes devices */
	if (S_ISCHR(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode))
		return refuse(w, EPERM, "it exists and is not a regular file");
	if (st.st_uid != w->self)
		return refuse(w, EPERM, "it exists and belongs to uid %u: memtrack replaces "
			      "only files of uid %u", (unsigned int)st.st_uid,
			      (unsigned int)w->self);
	if (st.st_nlink != 1)
		return refuse(w, EPERM, "it has other hard links: memtrack does not "
			      "write through them");
	return ftruncate(fd, 0) ? -errno : 0;
}

static bool is_symlink(int dirfd, const char *name)
{
	struct stat st;

	return !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode);
}

struct file_args {
	int dirfd;
	const char *name;
	enum out_mode mode;
};

static int create_file(void *arg, char *why, size_t why_len __maybe_unused)
{
	const struct file_args *a = arg;
	struct walk w = { .path = a->name, .why = why, .self = geteuid() };
	/* O_NONBLOCK: an existing fifo must not hang us; it is refused below */
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	int fd, err;

	if (a->mode == OUT_NEW)
		flags |= O_EXCL;
	fd = openat(a->dirfd, a->name, flags, 0644);
	/* a link of another user in a sticky directory: EACCES (fs.protected_symlinks) */
	if (fd < 0 && errno == EACCES && is_symlink(a->dirfd, a->name))
		errno = ELOOP;
	if (fd < 0 && errno == ELOOP)
		return refuse(&w, ELOOP, "it is a symbolic link: memtrack does not write "
			      "through one");
	if (fd < 0 && errno == EEXIST)
		return refuse(&w, EEXIST, "the file exists: memtrack does not replace it");
	/* a fifo with no reader, a socket: not "No such device or address" */
	if (fd < 0 && (errno == ENXIO || errno == EOPNOTSUPP))
		return refuse(&w, EPERM, "it exists and is not a regular file");
	if (fd < 0)
		return -errno;
	err = a->mode == OUT_REPLACE ? check_replaced(fd, &w) : 0;
	if (!err && fcntl(fd, F_SETFL, O_WRONLY))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int out_file__create(const struct run_as *as, int dirfd, const char *name,
		     enum out_mode mode, char why[OUT_WHY_MAX])
{
	struct file_args a = { .dirfd = dirfd, .name = name, .mode = mode };

	if (!*name || strchr(name, '/')) {
		snprintf(why, OUT_WHY_MAX, "'%s' is not a file name", name);
		return -EINVAL;
	}
	return run_as__call(as, create_file, &a, why, OUT_WHY_MAX);
}

/* the directory part of path into dir, *name the rest; 0 or -ENAMETOOLONG */
static int split_path(const char *path, char *dir, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == path)
		snprintf(dir, size, "/");
	else if ((size_t)(slash - path) < size)
		snprintf(dir, size, "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	return 0;
}

int out_dir__open_parent(const struct run_as *as, const char *path, const char **name,
			char why[OUT_WHY_MAX])
{
	char dir[PATH_MAX];

	if (split_path(path, dir, sizeof(dir), name)) {
		snprintf(why, OUT_WHY_MAX, "%s", strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	return out_dir__open(as, dir, false, why);
}

struct path_args {
	struct dir_args dir;
	struct file_args file;
};

/* both in one process: one child, not two, under sudo */
static int create_at_path(void *arg, char *why, size_t why_len)
{
	struct path_args *a = arg;
	int fd;

	a->file.dirfd = open_dir(&a->dir, why, why_len);
	if (a->file.dirfd < 0)
		return a->file.dirfd;
	fd = create_file(&a->file, why, why_len);
	close(a->file.dirfd);
	return fd;
}

int out_file__create_path(const struct run_as *as, const char *path,
			  enum out_mode mode, char why[OUT_WHY_MAX])
{
	struct path_args a = { .file.mode = mode };
	char dir[PATH_MAX];

	if (split_path(path, dir, sizeof(dir), &a.file.name)) {
		snprintf(why, OUT_WHY_MAX, "%s", strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	if (!*a.file.name) {
		snprintf(why, OUT_WHY_MAX, "'%s' is not a file name", path);
		return -EINVAL;
	}
	a.dir.path = dir;
	return run_as__call(as, create_at_path, &a, why, OUT_WHY_MAX);
}

int out_file__write_path(const char *path, const void *data, size_t len,
			 char why[OUT_WHY_MAX])
{
	struct run_as as;
	int fd, err;

	run_as__from_sudo(&as);
	fd = out_file__create_path(&as, path, OUT_REPLACE, why);
	if (fd < 0)
		return fd;
	err = write_all(fd, data, len);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		snprintf(why, OUT_WHY_MAX, "%s", strerror(-err));
	return err;
}
