/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMTRACK_BPF_KERNEL_OFFSETS_H
#define MEMTRACK_BPF_KERNEL_OFFSETS_H

#include <linux/types.h>

#include "bpf/memtrack.h"

#include <stddef.h>

/* the offsets of the fields the probes read, from raw BTF (size bytes); 0 or -errno, said */
int kernel_offsets__resolve(const void *raw, size_t size, struct mt_kernel_offsets *ko);
/* the same from the running kernel's BTF */
int kernel_offsets__read(struct mt_kernel_offsets *ko);
/* a hash of the fields read (names, sizes, places): offsets kept by another memtrack differ */
__u32 kernel_offsets__layout(void);

#endif
