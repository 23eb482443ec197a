// SPDX-License-Identifier: GPL-2.0
/*
 * A process's executable mappings as PROCMAP_QUERY gives them must be the
 * text's, field for field (proc-maps.c): a deleted file, a shared mapping,
 * a path with spaces, anonymous code left out, [vdso] kept; a pid gone, a
 * zombie.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "util/proc-maps.h"

/* a page of a new file at path mapped r-x (shared or private), the file then deleted if asked */
static void *map_file(const char *path, int flags, bool delete)
{
	size_t page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	void *p;

	CHECK(fd >= 0 && !ftruncate(fd, 2 * page), "create %s", path);
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, flags, fd, page);
	CHECK(p != MAP_FAILED, "map %s", path);
	close(fd);
	if (delete)
		unlink(path);
	return p;
}

static const struct proc_map *find(const struct proc_exec_maps *maps, void *start)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		if (maps->v[i].start == (uintptr_t)start)
			return &maps->v[i];
	return NULL;
}

static bool same_map(const struct proc_map *a, const struct proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->ino == b->ino && !strcmp(a->perms, b->perms) && a->deleted == b->deleted &&
	       !strcmp(a->path, b->path);
}

static void test_same_as_text(void)
{
	char dir[] = "/tmp/test-proc-maps.XXXXXX", gone[128], shared[128], spaced[128];
	size_t page = sysconf(_SC_PAGESIZE), i;
	void *anon, *p_gone, *p_shared, *p_spaced;
	struct proc_exec_maps q, t;
	const struct proc_map *m;
	bool vdso = false;

	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(gone, sizeof(gone), "%s/gone.so", dir);
	snprintf(shared, sizeof(shared), "%s/shared.so", dir);
	snprintf(spaced, sizeof(spaced), "%s/a b (c).so", dir);
	p_gone = map_file(gone, MAP_PRIVATE, true);
	p_shared = map_file(shared, MAP_SHARED, false);
	p_spaced = map_file(spaced, MAP_PRIVATE, false);
	anon = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED, "anonymous code");

	CHECK(!proc_exec_maps__read(&q, getpid()), "read");
	CHECK(!proc_exec_maps__read_text(&t, getpid()), "read the text");
	CHECK(q.n == t.n && q.n > 3, "%zu mappings, the text %zu", q.n, t.n);
	for (i = 0; i < q.n && i < t.n; i++) {
		CHECK(same_map(&q.v[i], &t.v[i]), "mapping %zu: %s %s, the text: %s %s", i,
		      q.v[i].perms, q.v[i].path, t.v[i].perms, t.v[i].path);
		vdso |= !strcmp(q.v[i].path, PROC_MAP_VDSO);
	}
	CHECK(vdso, "[vdso] kept");
	CHECK(!find(&q, anon), "anonymous code left out");
	m = find(&q, p_gone);
	CHECK(m && m->deleted && !strcmp(m->path, gone) && m->pgoff == page,
	      "the deleted file: %s", m ? m->path : "none");
	m = find(&q, p_shared);
	CHECK(m && !strcmp(m->perms, "r-xs") && !strcmp(m->path, shared), "the shared mapping");
	m = find(&q, p_spaced);
	CHECK(m && !strcmp(m->path, spaced) && !m->deleted, "a path with spaces and brackets");
	proc_exec_maps__free(&q);
	proc_exec_maps__free(&t);

	munmap(anon, page);
	munmap(p_gone, page);
	munmap(p_shared, page);
	munmap(p_spaced, page);
	unlink(shared);
	unlink(spaced);
	rmdir(dir);
}

static void test_gone(void)
{
	struct proc_exec_maps q;
	pid_t child = fork();

	if (!child)
		_exit(0);
	CHECK(child > 0, "fork");
	/* a zombie: no memory left to read */
	CHECK(!waitid(P_PID, child, NULL, WEXITED | WNOWAIT), "wait for the child");
	CHECK(!proc_exec_maps__read(&q, child) && q.n == 0, "a zombie: nothing, no error");
	proc_exec_maps__free(&q);
	waitpid(child, NULL, 0);
	CHECK(proc_exec_maps__read(&q, child) == -ESRCH, "reaped: -ESRCH");
	CHECK(proc_exec_maps__read(&q, 1 << 30) == -ESRCH, "no such pid");
	CHECK(proc_exec_maps__read_text(&q, 1 << 30) == -ESRCH, "no such pid, the text");
}

int main(void)
{
	test_same_as_text();
	test_gone();
	printf("test-proc-exec-maps: %d checks, %d failed\n", test_count, test_failures);
	return test_failures ? 1 : 0;
}
