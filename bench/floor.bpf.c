// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The floor of the overhead benchmark: the cheapest BPF programs that can sit
 * on memtrack's probe points.  Both return at once; whatever a workload pays
 * under them is the price of the uprobe (and uretprobe) machinery itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("uprobe")
int floor_enter(struct pt_regs *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_exit(struct pt_regs *ctx)
{
	return 0;
}
