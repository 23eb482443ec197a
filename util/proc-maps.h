/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PROC_MAPS_H
#define MEMTRACK_PROC_MAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * The one reader of /proc/<pid>/maps: an iterator over its lines.
 *
 *	struct proc_maps it;
 *	struct proc_map m;
 *
 *	if (proc_maps__open(&it, pid) == 0) {
 *		while (proc_maps__next(&it, &m) > 0)
 *			...;
 *		proc_maps__close(&it);
 *	}
 */
struct proc_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	uint32_t dev_major, dev_minor;
	uint64_t ino;		/* 0: not a file */
	char perms[5];		/* "r-xp" */
	bool deleted;		/* the file was deleted: " (deleted)" is cut from path */
	const char *path;	/* a path, a [pseudo] name, or "" (anonymous); valid
				 * until the next call */
};

#define PROC_MAP_VDSO	"[vdso]"

struct proc_maps {
	FILE *f;
	char *buf;		/* the stream's */
	char *line;
	size_t cap;
};

/* 0, -ESRCH when pid is gone, or -errno */
int proc_maps__open(struct proc_maps *it, pid_t pid);
/* 1 and *m filled, 0 at the end, -errno on a read error; lines it cannot parse are skipped */
int proc_maps__next(struct proc_maps *it, struct proc_map *m);
void proc_maps__close(struct proc_maps *it);

static inline bool proc_map__exec(const struct proc_map *m)
{
	return m->perms[2] == 'x';
}

/*
 * A process's executable mappings, read once for all who look at them (a
 * hello's inspection and symbols): its files' and [vdso]'s, in address
 * order, each path a copy of its own.
 */
struct proc_exec_maps {
	struct proc_map *v;
	size_t n, cap;
};

/* 0, -ESRCH when pid is gone, or -errno; a process that exits while read leaves what was read */
int proc_exec_maps__read(struct proc_exec_maps *maps, pid_t pid);
/* the same from the text of /proc/<pid>/maps, which proc_exec_maps__read() reads before Linux 6.11 */
int proc_exec_maps__read_text(struct proc_exec_maps *maps, pid_t pid);
void proc_exec_maps__free(struct proc_exec_maps *maps);

#endif
