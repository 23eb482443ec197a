// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/symbol/elf-syms.h"
#include "util/symbol/needed-libs.h"
#include "util/util.h"

#if defined(__x86_64__)
#define MULTIARCH	"x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH	"aarch64-linux-gnu"
#else
#define MULTIARCH	"unknown"
#endif

#define SYSTEM_DIRS	"/lib/" MULTIARCH ":/usr/lib/" MULTIARCH ":/lib64:/usr/lib64:/lib:" \
			"/usr/lib:/usr/local/lib"
#define NEEDED_MAX	128

struct dynamic {
	char *rpath, *runpath;
	char *needed[NEEDED_MAX];
	unsigned int nneeded;
};

static void dynamic__free(struct dynamic *d)
{
	unsigned int i;

	free(d->rpath);
	free(d->runpath);
	for (i = 0; i < d->nneeded; i++)
		free(d->needed[i]);
}

static int take_string(GElf_Sxword tag, const char *s, void *arg)
{
	struct dynamic *d = arg;

	if (tag == DT_NEEDED && d->nneeded < NEEDED_MAX)
		d->needed[d->nneeded++] = strdup(s);
	else if (tag == DT_RPATH && !d->rpath)
		d->rpath = strdup(s);
	else if (tag == DT_RUNPATH && !d->runpath)
		d->runpath = strdup(s);
	return 0;
}

static int read_dynamic(int fd, struct dynamic *d)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	Elf *elf;

	if (dup_fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf__from_fd(dup_fd)))
		return -ENOEXEC;
	elf__each_dyn_string(elf, take_string, d);
	elf_end(elf);
	return 0;
}

/* dir with $ORIGIN or ${ORIGIN} at its start replaced by origin */
static void expand_origin(const char *dir, int len, const char *origin, char *out, size_t size)
{
	if (len >= 7 && !strncmp(dir, "$ORIGIN", 7))
		snprintf(out, size, "%s%.*s", origin, len - 7, dir + 7);
	else if (len >= 9 && !strncmp(dir, "${ORIGIN}", 9))
		snprintf(out, size, "%s%.*s", origin, len - 9, dir + 9);
	else
		snprintf(out, size, "%.*s", len, dir);
}

/* name in the first of dirs (colon-separated) that has it as a regular file: its fd, or -1 */
static int open_in(const char *dirs, const char *origin, const char *name, char *path,
		   size_t size)
{
	const char *end;

	for (; dirs && *dirs; dirs = *end ? end + 1 : end) {
		char dir[PATH_MAX];
		int fd;

		end = strchrnul(dirs, ':');
		if (end == dirs)
			continue;
		expand_origin(dirs, end - dirs, origin, dir, sizeof(dir));
		if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size)
			continue;
		fd = open_regular(path);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

static int open_needed(const struct dynamic *d, const char *origin, const char *name,
		       char *path, size_t size)
{
	int fd = -1;

	if (strchr(name, '/')) {
		snprintf(path, size, "%s", name);
		return open_regular(path);
	}
	if (!d->runpath)
		fd = open_in(d->rpath, origin, name, path, size);
	if (fd < 0)
		fd = open_in(getenv("LD_LIBRARY_PATH"), origin, name, path, size);
	if (fd < 0)
		fd = open_in(d->runpath, origin, name, path, size);
	if (fd < 0)
		fd = open_in(SYSTEM_DIRS, origin, name, path, size);
	return fd;
}

int needed_libs__each(int exe_fd, const char *exe_path, needed_lib_fn *fn, void *arg)
{
	char origin[PATH_MAX], path[PATH_MAX], *slash;
	struct dynamic d = { 0 };
	unsigned int i;
	int ret = read_dynamic(exe_fd, &d);

	if (ret)
		return ret;
	if (!realpath(exe_path, origin))
		snprintf(origin, sizeof(origin), "%s", exe_path);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(origin, sizeof(origin), ".");
	for (i = 0; !ret && i < d.nneeded; i++) {
		int fd = d.needed[i] ? open_needed(&d, origin, d.needed[i], path, sizeof(path)) : -1;

		if (fd < 0)
			continue;
		ret = fn(fd, path, arg);
		close(fd);
	}
	dynamic__free(&d);
	return ret;
}
