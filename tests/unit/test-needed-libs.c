// SPDX-License-Identifier: GPL-2.0
/*
 * The libraries an executable needs, found as the dynamic linker would
 * (util/symbol/needed-libs.h), and a program found as execvp() finds it
 * (open_program): reallocarray_lib needs libreallocarray.so, by its
 * DT_RUNPATH $ORIGIN, then libc.so.6 in the system's directories;
 * LD_LIBRARY_PATH comes before the run path; what is not a regular file
 * (a FIFO, a directory) is passed over without blocking; the walk stops
 * at fn's word; a script is no ELF file.  Run from the source tree, after
 * make all (tests/workloads).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fifo-writer.h"
#include "util/symbol/needed-libs.h"
#include "util/util.h"

#define WORKLOAD	"tests/workloads/reallocarray_lib"
#define LIB		"libreallocarray.so"

static char tmp[] = "/tmp/memtrack-test-needed-libs.XXXXXX";

struct found {
	char path[4][PATH_MAX];
	int n, stop_at;
};

static int collect(int fd, const char *path, void *arg)
{
	struct found *f = arg;
	struct stat st;

	CHECK(!fstat(fd, &st) && S_ISREG(st.st_mode), "%s: not a regular file open", path);
	if (f->n < 4)
		snprintf(f->path[f->n], PATH_MAX, "%s", path);
	f->n++;
	return f->n == f->stop_at ? 7 : 0;
}

static int walk(const char *exe, struct found *f)
{
	int fd = open_regular(exe), ret;

	memset(f->path, 0, sizeof(f->path));
	f->n = 0;
	if (fd < 0)
		return fd;
	ret = needed_libs__each(fd, exe, collect, f);
	close(fd);
	return ret;
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static void test_run_path_then_system(void)
{
	char want[PATH_MAX + 32], dir[PATH_MAX];
	struct found f = { 0 };

	CHECK(realpath("tests/workloads", dir), "tests/workloads: %s (make all first)",
	      strerror(errno));
	snprintf(want, sizeof(want), "%s/%s", dir, LIB);
	unsetenv("LD_LIBRARY_PATH");
	CHECK(walk(WORKLOAD, &f) == 0, "the walk failed");
	CHECK(f.n == 2, "%d libraries", f.n);
	CHECK_STR(f.path[0], want, "by $ORIGIN");
	CHECK(ends_with(f.path[1], "/libc.so.6"), "libc: %s", f.path[1]);
}

static void test_library_path_first(void)
{
	char path[PATH_MAX + 32];
	struct found f = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmp, LIB);
	CHECK(link(WORKLOAD, path) == 0 || symlink(realpath(WORKLOAD, NULL), path) == 0,
	      "%s: %s", path, strerror(errno));
	setenv("LD_LIBRARY_PATH", tmp, 1);
	CHECK(walk(WORKLOAD, &f) == 0 && f.n == 2, "%d libraries", f.n);
	CHECK_STR(f.path[0], path, "LD_LIBRARY_PATH before DT_RUNPATH");
	unlink(path);
}

/* a FIFO would block an open for reading until a writer came: never opened so */
static void test_not_regular_passed_over(void)
{
	char path[PATH_MAX + 32];
	struct found f = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmp, LIB);
	setenv("LD_LIBRARY_PATH", tmp, 1);
	CHECK(mkfifo(path, 0644) == 0, "mkfifo: %s", strerror(errno));
	CHECK(walk(WORKLOAD, &f) == 0 && f.n == 2, "%d libraries", f.n);
	CHECK(!strstr(f.path[0], tmp), "a FIFO taken: %s", f.path[0]);
	unlink(path);
	CHECK(mkdir(path, 0755) == 0, "mkdir: %s", strerror(errno));
	CHECK(walk(WORKLOAD, &f) == 0 && f.n == 2, "%d libraries", f.n);
	CHECK(!strstr(f.path[0], tmp), "a directory taken: %s", f.path[0]);
	rmdir(path);
	unsetenv("LD_LIBRARY_PATH");
}

/* a writer waits in open() for a reader: open_regular() on the FIFO must not be one */
static void test_fifo_never_opened(void)
{
	char path[PATH_MAX + 32];
	pid_t writer;

	snprintf(path, sizeof(path), "%s/fifo", tmp);
	writer = fifo_writer_start(path);
	CHECK(writer > 0, "a FIFO and its writer: %s", strerror(errno));
	CHECK(open_regular(path) == -EINVAL, "a FIFO is no regular file");
	CHECK(fifo_writer_still_waits(writer, path), "the FIFO's writer still waits for a reader");
}

static void test_stops_at_fn(void)
{
	struct found f = { .stop_at = 1 };

	CHECK(walk(WORKLOAD, &f) == 7, "fn's value not returned");
	CHECK(f.n == 1, "%d calls after a stop", f.n);
}

static void test_not_elf(void)
{
	char path[PATH_MAX + 32];
	struct found f = { 0 };
	FILE *s;

	snprintf(path, sizeof(path), "%s/script", tmp);
	s = fopen(path, "w");
	CHECK(s != NULL, "%s: %s", path, strerror(errno));
	if (!s)
		return;
	fputs("#!/bin/sh\nexit 0\n", s);
	fclose(s);
	CHECK(walk(path, &f) == -ENOEXEC && f.n == 0, "a script read as ELF");
	unlink(path);
}

static void test_open_program(void)
{
	char path[PATH_MAX], sh[PATH_MAX + 32];
	int fd;

	setenv("PATH", "/usr/bin:/bin", 1);
	fd = open_program("sh", path, sizeof(path));
	CHECK(fd >= 0 && ends_with(path, "/sh"), "sh: %d %s", fd, path);
	if (fd >= 0)
		close(fd);
	/* not executable: passed over, as execvp() does */
	snprintf(sh, sizeof(sh), "%s/sh", tmp);
	close(creat(sh, 0644));
	snprintf(path, sizeof(path), "%s:/usr/bin:/bin", tmp);
	setenv("PATH", path, 1);
	fd = open_program("sh", path, sizeof(path));
	CHECK(fd >= 0 && !strstr(path, tmp), "a file without x taken: %s", path);
	if (fd >= 0)
		close(fd);
	unlink(sh);
	CHECK(open_program("memtrack-no-such-program", path, sizeof(path)) == -ENOENT,
	      "found nothing");
	fd = open_program(WORKLOAD, path, sizeof(path));
	CHECK(fd >= 0 && !strcmp(path, WORKLOAD), "a name with a slash: %s", path);
	if (fd >= 0)
		close(fd);
	CHECK(open_program("/tmp", path, sizeof(path)) == -EINVAL, "a directory opened");
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_run_path_then_system();
	test_library_path_first();
	test_not_regular_passed_over();
	test_fifo_never_opened();
	test_stops_at_fn();
	test_not_elf();
	test_open_program();
	rmdir(tmp);
	return test_done("needed-libs");
}
