// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "encoder.h"
#include "proc-table.h"

#define INITIAL_SLOTS 64

void proc_table__init(struct proc_table *pt)
{
	memset(pt, 0, sizeof(*pt));
}

void proc_table__exit(struct proc_table *pt)
{
	free(pt->slots);
	memset(pt, 0, sizeof(*pt));
}

static struct process *find_slot(struct process *slots, size_t cap, int32_t pid)
{
	size_t i = ((uint32_t)pid * 2654435761u) & (cap - 1);

	while (slots[i].pid && slots[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct proc_table *pt)
{
	size_t cap = pt->cap ? pt->cap * 2 : INITIAL_SLOTS, i;
	struct process *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < pt->cap; i++)
		if (pt->slots[i].pid)
			*find_slot(slots, cap, pt->slots[i].pid) = pt->slots[i];
	free(pt->slots);
	pt->slots = slots;
	pt->cap = cap;
	return 0;
}

struct process *proc_table__get(struct proc_table *pt, int32_t pid)
{
	struct process *p;

	if (pid <= 0)
		return NULL;
	if ((pt->count + 1) * 2 > pt->cap && grow(pt))
		return NULL;
	p = find_slot(pt->slots, pt->cap, pid);
	if (!p->pid) {
		p->pid = pid;
		p->ppid = -1;
		pt->count++;
	}
	return p;
}

static void copy_str(char *dst, const char *src, size_t size)
{
	memcpy(dst, src, size);
	dst[size - 1] = 0;
}

int proc_table__apply(struct proc_table *pt, const struct mt_proc_event *e)
{
	struct process *parent = e->kind == MT_FORK ? proc_table__get(pt, e->ppid) : NULL;
	uint8_t parent_mode = parent ? parent->mode : 0;	/* before a get may move it */
	struct process *p = proc_table__get(pt, e->pid);

	if (!p)
		return -1;
	switch (e->kind) {
	case MT_FORK:
		p->ppid = e->ppid;
		p->start = e->ts;
		copy_str(p->comm, e->comm, sizeof(p->comm));
		p->mode = parent_mode;	/* a fork keeps its parent's backend */
		break;
	case MT_EXEC:
		if (!p->start)
			p->start = e->ts;
		copy_str(p->comm, e->comm, sizeof(p->comm));
		copy_str(p->exe, e->filename, sizeof(p->exe));
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
	const char *backend = backend_name(p->mode);
	int n = 3 + (p->ppid >= 0) + !!p->exe[0] + !!p->start + 2 * p->exited + !!backend;

	msgpack_pack_map(pk, n);
	pack_key(pk, "type");
	pack_str(pk, "Process");
	pack_key(pk, "pid");
	msgpack_pack_int32(pk, p->pid);
	if (p->ppid >= 0) {
		pack_key(pk, "ppid");
		msgpack_pack_int32(pk, p->ppid);
	}
	pack_key(pk, "comm");
	pack_str(pk, p->comm);
	if (p->exe[0]) {
		pack_key(pk, "exe");
		pack_str(pk, p->exe);
	}
	if (p->start) {
		pack_key(pk, "start");
		msgpack_pack_uint64(pk, p->start);
	}
	if (p->exited) {
		pack_key(pk, "exit");
		msgpack_pack_uint64(pk, p->exit);
		pack_key(pk, "exit_code");
		msgpack_pack_int32(pk, p->exit_code);
	}
	if (backend) {
		pack_key(pk, "backend");
		pack_str(pk, backend);
	}
}

void proc_table__pack(struct proc_table *pt, msgpack_packer *pk)
{
	size_t i;

	for (i = 0; i < pt->cap; i++)
		if (pt->slots[i].pid)
			pack_process(pk, &pt->slots[i]);
}
