/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_PROC_TABLE_H
#define MEMTRACK_PROC_TABLE_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/memtrack.h"
#include "util/u64-map.h"

/* What track learns of each process of the tree, for the Process records. */
struct process {
	int32_t pid;
	int32_t ppid;
	char comm[MT_COMM_LEN];
	char exe[MT_PATH_LEN];
	uint64_t start;
	uint64_t exit;
	int32_t exit_code;	/* wait status */
	uint64_t *execs;	/* the times of its execs, in order */
	size_t nr_execs, execs_cap;
	bool exited;
	uint8_t mode;		/* enum mt_mode: its backend, 0 if never known */
	const char *bpf_why;	/* with MT_MODE_BPF: why, in a word or two (a static string) */
	bool pymalloc_off;	/* its shim saw PYTHONMALLOC=malloc */
};

struct proc_table {
	struct process *procs;	/* in order of first appearance */
	size_t count, cap;
	struct u64_map index;	/* pid -> procs[] index */
};

void proc_table__init(struct proc_table *pt);
void proc_table__exit(struct proc_table *pt);
/* finds or adds pid; NULL when out of memory */
struct process *proc_table__get(struct proc_table *pt, int32_t pid);
/* pid's entry, NULL when it has none */
struct process *proc_table__find(struct proc_table *pt, int32_t pid);
/* applies an MT_FORK, MT_EXEC or MT_EXIT record; 0 or -1 out of memory */
int proc_table__apply(struct proc_table *pt, const struct mt_proc_event *e);
/* one "Process" map per process */
void proc_table__pack(struct proc_table *pt, msgpack_packer *pk);

#endif
