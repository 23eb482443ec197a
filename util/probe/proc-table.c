// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "util/artifact/artifact-format.h"
#include "util/probe/proc-table.h"
#include "util/util.h"

void proc_table__init(struct proc_table *pt)
{
	memset(pt, 0, sizeof(*pt));
}

void proc_table__exit(struct proc_table *pt)
{
	size_t i;

	for (i = 0; i < pt->count; i++)
		free(pt->procs[i].execs);
	free(pt->procs);
	u64_map__exit(&pt->index);
	memset(pt, 0, sizeof(*pt));
}

struct process *proc_table__get(struct proc_table *pt, int32_t pid)
{
	struct process *p;
	bool added;

	if (pid <= 0)
		return NULL;
	p = u64_map__element(&pt->index, pid, (void **)&pt->procs, &pt->count, &pt->cap,
			     sizeof(*p), &added);
	if (p && added) {
		p->pid = pid;
		p->ppid = -1;
	}
	return p;
}

struct process *proc_table__find(struct proc_table *pt, int32_t pid)
{
	uint64_t *idx = pid > 0 ? u64_map__find(&pt->index, pid) : NULL;

	return idx ? &pt->procs[*idx] : NULL;
}

static void copy_str(char *dst, const char *src, size_t size)
{
	memcpy(dst, src, size);
	dst[size - 1] = 0;
}

int proc_table__apply(struct proc_table *pt, const struct mt_proc_event *e)
{
	struct process *parent = e->kind == MT_FORK ? proc_table__find(pt, e->ppid) : NULL;
	uint8_t parent_mode = parent ? parent->mode : 0;	/* before a get may move it */
	const char *parent_why = parent ? parent->bpf_why : NULL;
	struct process *p = proc_table__get(pt, e->pid);

	if (!p)
		return -1;
	switch (e->kind) {
	case MT_FORK:
		p->ppid = e->ppid;
		p->start = e->ts;
		copy_str(p->comm, e->comm, sizeof(p->comm));
		p->mode = parent_mode;	/* a fork keeps its parent's backend */
		p->bpf_why = parent_why;
		break;
	case MT_EXEC:
		if (!p->start)
			p->start = e->ts;
		copy_str(p->comm, e->comm, sizeof(p->comm));
		copy_str(p->exe, e->filename, sizeof(p->exe));
		if (grow_array((void **)&p->execs, &p->execs_cap, p->nr_execs + 1,
			       sizeof(*p->execs)))
			return -1;
		p->execs[p->nr_execs++] = e->ts;
		break;
	case MT_EXIT:
		p->exit = e->ts;
		p->exit_code = e->exit_code;
		p->exited = true;
		break;
	}
	return 0;
}

/* a process that never said hello to memtrack but had the shim's chance took it */
static const char *backend_name(uint8_t mode)
{
	return mode == MT_MODE_BPF ? "bpf" : mode ? "preload" : NULL;
}

static void pack_process(msgpack_packer *pk, const struct process *p)
{
	struct artifact_record r = { .type = ARTIFACT_PROCESS };
	const char *backend = backend_name(p->mode);

	artifact_record__set_pid(&r, p->pid);
	if (p->ppid >= 0)
		artifact_record__set_ppid(&r, p->ppid);
	artifact_record__set_comm(&r, p->comm);
	if (p->exe[0])
		artifact_record__set_exe(&r, p->exe);
	if (p->start)
		artifact_record__set_start(&r, p->start);
	if (p->exited) {
		artifact_record__set_exit(&r, p->exit);
		artifact_record__set_exit_code(&r, p->exit_code);
	}
	if (backend)
		artifact_record__set_backend(&r, backend);
	if (p->mode == MT_MODE_BPF && p->bpf_why)
		artifact_record__set_bpf_why(&r, p->bpf_why);
	if (p->pymalloc_off)
		artifact_record__set_pymalloc_off(&r, true);
	if (p->nr_execs)
		artifact_record__set_execs(&r, (struct artifact_ids){ p->execs, p->nr_execs });
	artifact_record__pack(pk, &r);
}

void proc_table__pack(struct proc_table *pt, msgpack_packer *pk)
{
	size_t i;

	for (i = 0; i < pt->count; i++)
		pack_process(pk, &pt->procs[i]);
}
