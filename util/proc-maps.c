// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

/* path, len bytes, as m's: the kernel's " (deleted)" cut off and said */
static void set_path(struct proc_map *m, char *path, size_t len)
{
	m->deleted = len > strlen(DELETED) && !strcmp(path + len - strlen(DELETED), DELETED);
	if (m->deleted)
		path[len - strlen(DELETED)] = '\0';
	m->path = path;
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
	set_path(m, p, len);
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

/* an executable mapping of a file, or [vdso]: not JIT code, [vsyscall] or [uprobes] */
static bool keeps_exec_map(const struct proc_map *m)
{
	return proc_map__exec(m) && (m->path[0] == '/' || !strcmp(m->path, PROC_MAP_VDSO));
}

static int add_exec_map(struct proc_exec_maps *maps, struct proc_map m)
{
	if (grow_array((void **)&maps->v, &maps->cap, maps->n + 1, sizeof(*maps->v)) ||
	    !(m.path = strdup(m.path)))
		return -ENOMEM;
	maps->v[maps->n++] = m;
	return 0;
}

int proc_exec_maps__read_text(struct proc_exec_maps *maps, pid_t pid)
{
	struct proc_maps it;
	struct proc_map m;
	int err;

	memset(maps, 0, sizeof(*maps));
	err = proc_maps__open(&it, pid);
	if (err)
		return err;
	while ((err = proc_maps__next(&it, &m)) > 0)
		if (keeps_exec_map(&m) && (err = add_exec_map(maps, m)))
			break;
	proc_maps__close(&it);
	if (err && err != -ESRCH) {
		proc_exec_maps__free(maps);
		return err;
	}
	return 0;
}

/* PROCMAP_QUERY of <linux/fs.h> (Linux 6.11), newer than the headers we build with */
struct procmap_query_v1 {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};

#define PROCMAP_QUERY_V1		_IOWR('f', 17, struct procmap_query_v1)
#define PROCMAP_VMA_READABLE		0x01
#define PROCMAP_VMA_WRITABLE		0x02
#define PROCMAP_VMA_EXECUTABLE		0x04
#define PROCMAP_VMA_SHARED		0x08
#define PROCMAP_COVERING_OR_NEXT_VMA	0x10

/* the mapping as a line of the text would give it; name is q's, and becomes m's path */
static void map_of_query(const struct procmap_query_v1 *q, char *name, struct proc_map *m)
{
	size_t len = q->vma_name_size ? strlen(name) : 0;

	m->start = q->vma_start;
	m->end = q->vma_end;
	m->pgoff = q->vma_offset;
	m->dev_major = q->dev_major;
	m->dev_minor = q->dev_minor;
	m->ino = q->inode;
	m->perms[0] = q->vma_flags & PROCMAP_VMA_READABLE ? 'r' : '-';
	m->perms[1] = q->vma_flags & PROCMAP_VMA_WRITABLE ? 'w' : '-';
	m->perms[2] = q->vma_flags & PROCMAP_VMA_EXECUTABLE ? 'x' : '-';
	m->perms[3] = q->vma_flags & PROCMAP_VMA_SHARED ? 's' : 'p';
	m->perms[4] = '\0';
	if (!len)
		name[0] = '\0';
	set_path(m, name, len);
}

/*
 * The executable mappings asked of the kernel one at a time, in binary:
 * a third of the time of the text for a small process, a fifth for
 * python3's.  -ENOTTY where the kernel has no PROCMAP_QUERY.
 */
static int query_exec_maps(struct proc_exec_maps *maps, pid_t pid)
{
	char path[64], name[PATH_MAX + 16];
	struct procmap_query_v1 q;
	struct proc_map m;
	uint64_t addr = 0;
	int fd, err = 0;

	memset(maps, 0, sizeof(*maps));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = PROCMAP_COVERING_OR_NEXT_VMA | PROCMAP_VMA_EXECUTABLE;
		q.query_addr = addr;
		q.vma_name_addr = (uintptr_t)name;
		q.vma_name_size = sizeof(name);
		if (ioctl(fd, PROCMAP_QUERY_V1, &q)) {
			/* ENOENT: no mapping from addr on; ESRCH: the process is gone */
			err = errno == ENOENT || errno == ESRCH ? 0 :
			      !maps->n && (errno == ENOTTY || errno == EINVAL) ? -ENOTTY : -errno;
			break;
		}
		map_of_query(&q, name, &m);
		if (keeps_exec_map(&m) && (err = add_exec_map(maps, m)))
			break;
		if (q.vma_end <= addr)
			break;
		addr = q.vma_end;
	}
	close(fd);
	if (err)
		proc_exec_maps__free(maps);
	return err;
}

int proc_exec_maps__read(struct proc_exec_maps *maps, pid_t pid)
{
	int err = query_exec_maps(maps, pid);

	return err == -ENOTTY ? proc_exec_maps__read_text(maps, pid) : err;
}

void proc_exec_maps__free(struct proc_exec_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		free((char *)maps->v[i].path);
	free(maps->v);
	memset(maps, 0, sizeof(*maps));
}
