// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/probe/proc-tree.h"
#include "util/util.h"

#define CMDLINE_MAX	4096

struct pid_ppid {
	pid_t pid, ppid;
};

/* /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')' */
static int read_stat(pid_t pid, pid_t *ppid, char *comm, size_t comm_size)
{
	char path[64], buf[512], *open, *close;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	open = strchr(buf, '(');
	close = strrchr(buf, ')');
	if (!open || !close || close < open || sscanf(close + 1, " %*c %d", ppid) != 1)
		return -EINVAL;
	if (comm) {
		n = close - open - 1;
		if (n >= comm_size)
			n = comm_size - 1;
		memcpy(comm, open + 1, n);
		comm[n] = 0;
	}
	return 0;
}

static int all_processes(struct pid_ppid **out)
{
	struct pid_ppid *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		pid_t pid = atoi(d->d_name), ppid;

		if (pid <= 0 || read_stat(pid, &ppid, NULL, 0))
			continue;
		if (grow_array((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			closedir(dir);
			return -ENOMEM;
		}
		v[n].pid = pid;
		v[n++].ppid = ppid;
	}
	closedir(dir);
	*out = v;
	return n;
}

static bool contains(const pid_t *pids, size_t n, pid_t pid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int proc_tree__collect(const pid_t *roots, size_t nroots, pid_t except, pid_t **pids)
{
	struct pid_ppid *procs = NULL;
	pid_t *tree;
	size_t n = 0, i, j;
	int nprocs = all_processes(&procs);

	if (nprocs < 0)
		return nprocs;
	tree = calloc(nprocs + nroots, sizeof(*tree));
	if (!tree) {
		free(procs);
		return -ENOMEM;
	}
	for (i = 0; i < nroots; i++)
		if (!contains(tree, n, roots[i]))
			tree[n++] = roots[i];
	/* breadth first: the children of tree[i] are appended as they are found */
	for (i = 0; i < n; i++)
		for (j = 0; j < (size_t)nprocs; j++)
			if (procs[j].ppid == tree[i] && procs[j].pid != except &&
			    !contains(tree, n, procs[j].pid))
				tree[n++] = procs[j].pid;
	free(procs);
	*pids = tree;
	return n;
}

int proc_tree__describe(pid_t pid, struct process *p)
{
	char path[64];
	pid_t ppid;
	ssize_t len;
	int err;

	err = read_stat(pid, &ppid, p->comm, sizeof(p->comm));
	if (err)
		return err;
	p->ppid = ppid;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	len = readlink(path, p->exe, sizeof(p->exe) - 1);
	p->exe[len > 0 ? len : 0] = 0;
	return 0;
}

char *proc_tree__cmdline(pid_t pid)
{
	char path[64], buf[CMDLINE_MAX];
	size_t n, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	/* the arguments are NUL-separated, and a kernel thread has none */
	while (n && !buf[n - 1])
		n--;
	if (!n)
		return NULL;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	return strdup(buf);
}
