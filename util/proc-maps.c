// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/proc-maps.h"
#include "util/util.h"

#define DELETED " (deleted)"
/*
 * The kernel formats as many lines as a read asks room for: a small
 * process's maps in one read, where stdio's 1 KiB (the st_blksize of
 * /proc) took four.  It is read at each exec and hello of a tree.
 */
#define MAPS_BUF	(16 << 10)

int proc_maps__open(struct proc_maps *it, pid_t pid)
{
	char name[64];

	memset(it, 0, sizeof(*it));
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	it->f = fopen(name, "re");
	if (!it->f)
		return errno == ENOENT ? -ESRCH : -errno;
	it->buf = malloc(MAPS_BUF);
	if (it->buf)
		setvbuf(it->f, it->buf, _IOFBF, MAPS_BUF);
	return 0;
}

/* a hexadecimal number ending at stop; false when there is none */
static bool hex_field(char **p, char stop, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(*p, &end, 16);
	if (end == *p || *end != stop || errno)
		return false;
	*p = end + 1;
	return true;
}

/* "start-end perms pgoff maj:min ino   path" */
static bool parse_line(char *line, struct proc_map *m)
{
	char *p = line, *end;
	uint64_t maj, min;
	size_t len;

	if (!hex_field(&p, '-', &m->start) || !hex_field(&p, ' ', &m->end))
		return false;
	if (strlen(p) < 5 || p[4] != ' ')
		return false;
	memcpy(m->perms, p, 4);
	m->perms[4] = '\0';
	p += 5;
	if (!hex_field(&p, ' ', &m->pgoff) || !hex_field(&p, ':', &maj) ||
	    !hex_field(&p, ' ', &min))
		return false;
	m->dev_major = maj;
	m->dev_minor = min;
	m->ino = strtoull(p, &end, 10);
	if (end == p || (*end != ' ' && *end != '\n' && *end))
		return false;
	p = end + strspn(end, " ");
	len = strcspn(p, "\n");
	p[len] = '\0';
	m->deleted = len > strlen(DELETED) && !strcmp(p + len - strlen(DELETED), DELETED);
	if (m->deleted)
		p[len - strlen(DELETED)] = '\0';
	m->path = p;
	return true;
}

int proc_maps__next(struct proc_maps *it, struct proc_map *m)
{
	for (;;) {
		errno = 0;
		if (getline(&it->line, &it->cap, it->f) < 0)
			return errno && errno != ENOENT ? -errno : 0;
		if (parse_line(it->line, m))
			return 1;
	}
}

void proc_maps__close(struct proc_maps *it)
{
	if (it->f)
		fclose(it->f);
	free(it->buf);
	free(it->line);
	memset(it, 0, sizeof(*it));
}

int proc_exec_maps__read(struct proc_exec_maps *maps, pid_t pid)
{
	struct proc_maps it;
	struct proc_map m;
	int err;

	memset(maps, 0, sizeof(*maps));
	err = proc_maps__open(&it, pid);
	if (err)
		return err;
	while ((err = proc_maps__next(&it, &m)) > 0) {
		/* anonymous executable memory (JIT), [vsyscall], [uprobes]: no file */
		if (!proc_map__exec(&m) || (m.path[0] != '/' && strcmp(m.path, PROC_MAP_VDSO)))
			continue;
		if (grow_array((void **)&maps->v, &maps->cap, maps->n + 1, sizeof(*maps->v)) ||
		    !(m.path = strdup(m.path))) {
			err = -ENOMEM;
			break;
		}
		maps->v[maps->n++] = m;
	}
	proc_maps__close(&it);
	if (err && err != -ESRCH) {
		proc_exec_maps__free(maps);
		return err;
	}
	return 0;
}

void proc_exec_maps__free(struct proc_exec_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		free((char *)maps->v[i].path);
	free(maps->v);
	memset(maps, 0, sizeof(*maps));
}
