// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stop-mirror.h"
#include "util.h"

/* long enough for a loaded machine to deliver SIGCHLD and the parent to act on it */
#define WATCH_NS	(500 * NSEC_PER_MSEC)

struct watch {
	pid_t child, parent;
	uint64_t until;		/* 0 while the child is held */
};

struct stop_mirror {
	struct watch *w;
	size_t n, cap;
};

struct stop_mirror *stop_mirror__new(void)
{
	return calloc(1, sizeof(struct stop_mirror));
}

void stop_mirror__delete(struct stop_mirror *m)
{
	if (!m)
		return;
	free(m->w);
	free(m);
}

bool proc_state(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	/* the comm may hold anything: the state follows its last ')' */
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %c %d", state, ppid) == 2;
}

void stop_mirror__held(struct stop_mirror *m, pid_t child)
{
	char cstate, pstate;
	pid_t parent, grand;

	if (!m || !proc_state(child, &cstate, &parent) || parent <= 1 ||
	    !proc_state(parent, &pstate, &grand) || pstate == 'T' || pstate == 't')
		return;
	if (grow_array((void **)&m->w, &m->cap, m->n + 1, sizeof(*m->w)))
		return;
	m->w[m->n++] = (struct watch){ .child = child, .parent = parent };
}

void stop_mirror__resumed(struct stop_mirror *m, pid_t child, uint64_t now)
{
	size_t i;

	for (i = 0; m && i < m->n; i++)
		if (m->w[i].child == child && !m->w[i].until)
			m->w[i].until = now + WATCH_NS;
}

unsigned int stop_mirror__tick(struct stop_mirror *m, uint64_t now)
{
	unsigned int resumed = 0;
	size_t i, kept = 0;

	for (i = 0; m && i < m->n; i++) {
		struct watch *w = &m->w[i];
		char state;
		pid_t ppid;

		if (!w->until) {
			m->w[kept++] = *w;	/* still held */
			continue;
		}
		if (proc_state(w->parent, &state, &ppid) && state == 'T') {
			kill(w->parent, SIGCONT);
			resumed++;
			continue;
		}
		if (now < w->until)
			m->w[kept++] = *w;
	}
	if (m)
		m->n = kept;
	return resumed;
}
