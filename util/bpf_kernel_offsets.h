/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_KERNEL_OFFSETS_H
#define MEMTRACK_BPF_KERNEL_OFFSETS_H

#include <linux/types.h>

#include "bpf/memtrack.h"

struct btf;

/* the offsets of the fields the probes read, from btf; 0 or -errno, said */
int kernel_offsets__resolve(const struct btf *btf, struct mt_kernel_offsets *ko);
/* the same from the running kernel's BTF */
int kernel_offsets__read(struct mt_kernel_offsets *ko);

#endif
